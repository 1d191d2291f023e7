"""Mutation testing of the modules that guard users, with mutmut (pinned in the dev lock).

Run on demand, not in CI: each module's mutants run its narrowest test selection, one mutant
at a time (``--max-children 1``) under ``nice -n 19``, so the job shares a small machine.
For each module this copies the project's tracked files to a scratch directory, writes a
``[mutmut]`` section (the module alone, its tests), runs ``mutmut run`` there and reads
``mutmut results``; the worktree is never mutated. It prints the kill rate per module and
every survivor with its diff (``mutmut show``); docs/testing.md ("Mutation testing") lists
the results and why each survivor is equivalent.

    .venv/bin/python bench/mutation.py                 # every module, smallest first
    .venv/bin/python bench/mutation.py redaction gates # only these (names below)
    .venv/bin/python bench/mutation.py --list

A mutant counts as killed when its tests fail or time out; "no tests" (no selected test
runs the mutated function) counts as a survivor, so a module's tests must reach all of it.
Target: at least 90% killed per module.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("herdr_sim", "orchestrator", "pytest_herdr")
TARGET = 0.90
#: ``mutmut run`` attempts per module (each resumes where the last stopped)
RUNS = 3
#: statuses of a mutant its tests caught
KILLED = {"killed", "timeout", "caught by type check", "segfault"}


@dataclass(frozen=True)
class Module:
    """One module under mutation and the narrowest tests that cover it."""

    name: str
    path: str
    tests: tuple[str, ...]


MODULES = (
    Module(
        "redaction",
        "herdr_sim/persist/redaction.py",
        ("tests/sim/test_wire_log.py", "tests/sim/test_redaction_rules.py"),
    ),
    Module(
        "env-policy",
        "orchestrator/tools/env_policy.py",
        ("tests/orchestrator/test_gates.py", "tests/orchestrator/test_child_env.py"),
    ),
    Module(
        "gates",
        "orchestrator/core/gates.py",
        (
            "tests/orchestrator/test_gate_refusals.py",
            "tests/orchestrator/test_gates.py",
            "tests/orchestrator/agent_tools/test_gates_agents.py",
        ),
    ),
    Module(
        "secret-redaction",
        "orchestrator/core/result.py",
        (
            "tests/orchestrator/test_redaction.py",
            "tests/orchestrator/test_result_contract.py",
            "tests/orchestrator/test_tools_errors.py",
        ),
    ),
    Module(
        "trusted-paths",
        "orchestrator/client/file_trust/ownership.py",
        (
            "tests/sim/test_ownership_rule.py",
            "tests/contract/test_trusted_state.py",
            "tests/sim/test_wire_log.py",
        ),
    ),
    Module(
        "policy",
        "orchestrator/core/policy.py",
        ("tests/orchestrator/test_policy_rules.py", "tests/orchestrator/test_policy.py"),
    ),
    Module(
        "safe-files",
        "orchestrator/client/file_trust/private_files.py",
        (
            "tests/orchestrator/test_safe_fs.py",
            "tests/orchestrator/test_private_files_edges.py",
            "tests/orchestrator/test_file_trust_writes.py",
            "tests/orchestrator/agent_tools/test_task_files_reads.py",
            "tests/orchestrator/agent_tools/test_remote_files.py",
        ),
    ),
    Module(
        "lock-files",
        "orchestrator/client/file_trust/locks.py",
        ("tests/orchestrator/test_file_trust_writes.py", "tests/orchestrator/test_target_lock.py"),
    ),
    Module(
        "request-limits",
        "herdr_sim/wire/request_json.py",
        ("tests/sim/test_request_parsing.py", "tests/contract/test_transport.py"),
    ),
    Module(
        "exactly-once-delivery",
        "orchestrator/managed/mailbox.py",
        (
            "tests/orchestrator/managed/test_mailbox.py",
            "tests/orchestrator/managed/test_mailbox_edges.py",
            "tests/orchestrator/managed/test_ask_delivery.py",
            "tests/orchestrator/managed/test_child_env.py",  # Mailbox.at, as a child opens it
        ),
    ),
    Module(
        "seq-and-release",
        "herdr_sim/model/agents.py",
        (
            "tests/sim/test_agent_state.py",
            "tests/sim/test_agent_rules.py",
            "tests/contract/test_agent_reports.py",
            "tests/contract/test_release_causes.py",
            # the rules past a plain report: sessions, names, the exit safety net
            "tests/contract/test_full_lifecycle_sessions.py",
            "tests/contract/test_opencode_reports.py",
            "tests/contract/test_agent_exit_safety_net.py",
            "tests/contract/test_agent_methods.py",
            "tests/contract/test_restore_names.py",
        ),
    ),
    Module(
        "agent-result-contract",
        "orchestrator/agent_tools/contract.py",
        (
            "tests/orchestrator/agent_tools/test_contract.py",
            "tests/orchestrator/agent_tools/test_contract_edges.py",
            "tests/orchestrator/agent_tools/test_seed_contract.py",
            "tests/orchestrator/agent_tools/test_result_builder.py",
        ),
    ),
)


@dataclass
class Outcome:
    """One module's run: every mutant's status, the survivors' diffs, the wall time."""

    module: Module
    statuses: dict[str, str] = field(default_factory=dict)
    diffs: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    error: str = ""
    #: the scratch copy, when it was kept (``--keep``)
    kept: Path | None = None

    @property
    def killed(self) -> int:
        return sum(1 for s in self.statuses.values() if s in KILLED)

    @property
    def survivors(self) -> list[str]:
        return sorted(n for n, s in self.statuses.items() if s not in KILLED)

    @property
    def rate(self) -> float:
        return self.killed / len(self.statuses) if self.statuses else 0.0


def _scratch_copy(dest: Path) -> None:
    """The project's tracked files (with uncommitted edits) under ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        source = ROOT / raw.decode()
        if not source.is_file():
            continue  # deleted in the worktree
        target = dest / raw.decode()
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)


def _config(module: Module) -> str:
    package = module.path.split("/", 1)[0]
    lists = {
        "source_paths": [package],
        # the other packages too: a test's subprocess (the herdr CLI, a child agent) imports
        # them from the mutants' tree, where only the mutated package is copied by default
        "also_copy": [p for p in PACKAGES if p != package],
        "only_mutate": [module.path],
        "pytest_add_cli_args_test_selection": list(module.tests),
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q"],
    }
    # a list is one value per line (mutmut splits a multi-line value; one line is one item)
    lines = ["[mutmut]", *(f"{key} =\n    " + "\n    ".join(v) for key, v in lists.items())]
    lines.append("use_git_change_detection = false")
    # the tests start servers and helpers: keep pytest out of mutmut's main process, whose
    # wait for its workers would otherwise reap one of those and stop the run
    lines.append("process_isolation = forkserver")
    return "\n".join(lines) + "\n"


def _statuses(scratch: Path, env: dict[str, str]) -> dict[str, str]:
    """Every mutant's status as ``mutmut results`` reports it."""
    statuses: dict[str, str] = {}
    for line in _mutmut(scratch, env, "results", "--all", "true").splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name:
            statuses[name] = status
    return statuses


def _mutmut(scratch: Path, env: dict[str, str], *args: str) -> str:
    """What ``mutmut args`` printed (stdout, then stderr), run in ``scratch`` at the lowest
    priority (the job shares the machine)."""
    argv = ["nice", "-n", "19", str(Path(sys.executable).parent / "mutmut"), *args]
    done = subprocess.run(argv, check=False, cwd=scratch, env=env, capture_output=True, text=True)
    return done.stdout + done.stderr


def run_module(module: Module, keep: bool = False) -> Outcome:
    """Mutate ``module`` in a scratch copy and collect each mutant's status."""
    from herdr_sim.schema import contracts_dir

    outcome = Outcome(module)
    contracts = contracts_dir()
    if not contracts.is_dir():
        outcome.error = f"Herdr's contracts are not at {contracts}: set HERDR_CONTRACTS_DIR"
        return outcome
    scratch = Path(tempfile.mkdtemp(prefix=f"mutation-{module.name}-"))
    # the scratch copy is not beside shared/: point the tests at the contracts explicitly
    env = {**os.environ, "HERDR_CONTRACTS_DIR": str(contracts)}
    started = time.monotonic()
    try:
        _scratch_copy(scratch)
        (scratch / "setup.cfg").write_text(_config(module))
        log = ""
        for _attempt in range(RUNS):
            # a run that stops early leaves mutants "not checked"; the next run resumes
            log += _mutmut(scratch, env, "run", "--max-children", "1")
            outcome.statuses = _statuses(scratch, env)
            if "not checked" not in outcome.statuses.values():
                break
        (scratch / "mutmut-run.log").write_text(log)
        if not outcome.statuses:
            outcome.error = f"no mutants reported (see {scratch}/mutmut-run.log)"
            keep = True
            tail = log[-3000:]
            outcome.error += "\n" + tail
        for name in outcome.survivors:
            outcome.diffs[name] = _mutmut(scratch, env, "show", name).strip()
    finally:
        outcome.seconds = time.monotonic() - started
        if keep:
            outcome.kept = scratch
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return outcome


def report(outcome: Outcome) -> str:
    """The module's line, then each survivor with its status and diff."""
    module = outcome.module
    if outcome.error:
        return f"{module.name} ({module.path}): ERROR {outcome.error}"
    verdict = "ok" if outcome.rate >= TARGET else f"BELOW {TARGET:.0%}"
    head = (
        f"{module.name} ({module.path}): {outcome.killed}/{len(outcome.statuses)} killed "
        f"({outcome.rate:.1%}) {verdict}, {len(outcome.survivors)} survivors, "
        f"{outcome.seconds:.0f}s"
    )
    lines = [head]
    if outcome.kept is not None:
        lines.append(f"  scratch copy kept in {outcome.kept}")
    for name in outcome.survivors:
        lines.append(f"  survivor {name} [{outcome.statuses[name]}]")
        lines.extend(f"    {row}" for row in outcome.diffs.get(name, "").splitlines())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="module names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the modules and exit")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directories")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.list:
        for module in MODULES:
            print(f"{module.name:24} {module.path:40} {' '.join(module.tests)}")
        return 0
    known = {m.name: m for m in MODULES}
    unknown = [n for n in args.modules if n not in known]
    if unknown:
        parser.error(f"unknown module(s) {unknown}; --list shows them")
    chosen = [known[n] for n in args.modules] if args.modules else list(MODULES)
    outcomes = []
    for module in chosen:
        outcome = run_module(module, keep=args.keep)
        outcomes.append(outcome)
        print(report(outcome), flush=True)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    o.module.name: {
                        "path": o.module.path,
                        "killed": o.killed,
                        "total": len(o.statuses),
                        "survivors": {n: o.diffs.get(n, "") for n in o.survivors},
                        "error": o.error,
                    }
                    for o in outcomes
                },
                indent=2,
            )
        )
    below = [o for o in outcomes if o.error or o.rate < TARGET]
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
