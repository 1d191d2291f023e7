"""``herdr_spawn_agent`` to a completed AgentResult, alone and twenty at once, with fake pis.

One simulator (settle delay 0.5 s, Herdr's 300 ms submit delay, Herdr's detection
manifests when ``../shared/contracts/agent-detection`` exists), one git repository as the
tasks' ``cwd``, the agent tools configured through ``HERDR_ORCHESTRATOR_*`` variables
(``maxConcurrent`` 20, state under the run's private directory):

* **spawn → completed**: ``herdr_spawn_agent`` (through ``run_tool``, as MCP calls it) with a
  fake pi that answers the task with its default reply; the wall time of the call, which
  covers the record, the slot, the working-tree snapshot, the envelope, the tab,
  ``agent.start`` until ready, the prompt until the turn settles and the harvest (session,
  result.md, git diff). Median of N, against the configured settle delay.
* **twenty parallel spawns**: twenty threads sharing one ``ToolContext`` (what ``serve``'s
  MCP server does: one context per process, its worker threads call ``run_tool`` on it, and
  the agent tools keep their configuration, records, slots and client in it across calls;
  a barrier releases the threads together) each spawn one such task; the wall time until the
  last result, against the wall time of the same twenty tasks' underlying Herdr calls made
  directly over the socket, in parallel, without the tool layer: ``tab.create`` →
  ``agent.start``, then ``agent.get`` every 100 ms until ``interactive_ready`` (the loop
  Herdr's CLI runs around the method, and the client with it) → ``agent.prompt`` with
  ``wait`` until the turn settles. The two batches alternate round by round; every agent's
  tab is closed between batches (not timed), so each batch starts from the same fleet.

Targets: spawn → completed p50 <= settle + submit delay + 500 ms (ours: the tool's own
work — files, git, a few requests — stays well under half a second next to the two delays
Herdr imposes on purpose); twenty parallel spawns <= 1.2× their direct Herdr calls (issue 17:
the tool layer must not serialise the fleet: slots, records and git snapshots are per task,
and a spawn takes no lock once the agents workspace exists).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import benchkit
from benchkit import Result, median, ms

from herdr_sim.protocol.startup import POLL_INTERVAL as START_POLL_INTERVAL
from orchestrator.agent_tools.spawn import WORKSPACE_LABEL
from orchestrator.tools.registry import run_tool
from orchestrator.tools.tool import ToolContext

SETTLE = 0.5
SUBMIT_DELAY = 0.3
SLACK = 0.5
FLEET = 20
PARALLEL_TARGET = 1.2
TIMEOUT_MS = 60_000
#: Herdr's CLI polls ``agent.get`` this often after ``agent.start`` (so does the client)
START_POLL = START_POLL_INTERVAL


def _manifests() -> Path | None:
    env = os.environ.get("HERDR_CONTRACTS_DIR")
    base = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "contracts"
    found = base / "agent-detection"
    return found if found.is_dir() else None


def _git_repo(path: Path) -> Path:
    path.mkdir()
    (path / "README.md").write_text("bench\n")
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for argv in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *ident, *argv], cwd=path, check=True, capture_output=True)
    return path


def _spawn(ctx: ToolContext, repo: Path, name: str) -> dict[str, Any]:
    """One ``herdr_spawn_agent`` call on the shared context, as the MCP server makes it."""
    arguments = {"prompt": "say ok", "cwd": str(repo), "name": name, "timeout_ms": TIMEOUT_MS}
    result = run_tool("herdr_spawn_agent", arguments, ctx)
    if result.get("status") != "completed":
        raise RuntimeError(f"spawn {name} did not complete: {result}")
    return result


def _direct(sim: Any, workspace: str, repo: Path, name: str) -> None:
    """The Herdr calls under one spawn, straight over the socket."""
    tab = benchkit.api(
        sim, "tab.create", workspace_id=workspace, cwd=str(repo), label=name, focus=False
    )
    pane = tab["root_pane"]["pane_id"]
    benchkit.api(sim, "agent.start", name=name, kind="pi", pane_id=pane, timeout_ms=TIMEOUT_MS)
    deadline = time.perf_counter() + TIMEOUT_MS / 1000
    while not benchkit.api(sim, "agent.get", target=name)["agent"].get("interactive_ready"):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{name} never became interactive_ready")
        time.sleep(START_POLL)
    done = benchkit.api(
        sim,
        "agent.prompt",
        target=name,
        text="say ok",
        wait={"until": ["idle", "done", "blocked"], "timeout_ms": TIMEOUT_MS},
    )
    status = done["agent"]["agent_status"]
    if status not in ("idle", "done"):
        raise RuntimeError(f"{name} settled as {status}")


def _batch(jobs: list[Callable[[], object]]) -> float:
    """Wall seconds from a common start until the last of ``jobs`` (one thread each) ends."""
    barrier = threading.Barrier(len(jobs) + 1)
    errors: list[BaseException] = []

    def run(job: Callable[[], object]) -> None:
        barrier.wait()
        try:
            job()
        except BaseException as exc:  # reported after the batch
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    barrier.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join(timeout=120)
    wall = time.perf_counter() - began
    if errors or any(thread.is_alive() for thread in threads):
        raise RuntimeError(f"batch failed: {errors[:3]}")
    return wall


def _close_agent_tabs(sim: Any, workspace: str) -> None:
    """Close every tab of ``workspace`` but its first (and with them the agents)."""
    tabs = benchkit.api(sim, "tab.list", workspace_id=workspace)["tabs"]
    for tab in tabs[1:]:
        benchkit.api(sim, "tab.close", tab_id=tab["tab_id"])


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    rounds = 3 if args.quick else 10
    batches = 1 if args.quick else 3
    settings: dict[str, Any] = {
        "agent_start_settle": SETTLE,
        "agent_prompt_submit_delay": SUBMIT_DELAY,
        "agent_manifests_dir": _manifests(),
        "persist": False,
    }
    singles: list[float] = []
    tools: list[float] = []
    directs: list[float] = []
    with benchkit.work_dir() as directory, benchkit.simulator(directory, **settings) as sim:
        repo = _git_repo(directory / "repo")
        env = benchkit.clean_env(
            HOME=str(directory / "home"),
            XDG_CONFIG_HOME=str(directory / "config"),
            HERDR_SOCKET_PATH=str(sim.socket_path),
            HERDR_BIN_PATH=str(sim.cli_path),
            HERDR_ORCHESTRATOR_STATE_DIR=str(directory / "state"),
            HERDR_ORCHESTRATOR_MAX_CONCURRENT=str(FLEET),
            HERDR_ORCHESTRATOR_TRANSPORT="socket",
        )
        ctx = ToolContext.from_env(env)  # one per server process, as `serve` keeps it
        _spawn(ctx, repo, "warm-up")  # creates the herdr-agents workspace
        workspace = next(
            w["workspace_id"]
            for w in benchkit.api(sim, "workspace.list")["workspaces"]
            if w.get("label") == WORKSPACE_LABEL
        )
        _close_agent_tabs(sim, workspace)
        singles.extend(
            benchkit.timed(partial(_spawn, ctx, repo, f"one-{i}")) for i in range(rounds)
        )
        _close_agent_tabs(sim, workspace)
        for batch in range(batches):
            names = [f"b{batch}-{i}" for i in range(FLEET)]
            directs.append(
                _batch([partial(_direct, sim, workspace, repo, f"d-{n}") for n in names])
            )
            _close_agent_tabs(sim, workspace)
            tools.append(_batch([partial(_spawn, ctx, repo, f"t-{n}") for n in names]))
            _close_agent_tabs(sim, workspace)
    single_p50, tool_p50, direct_p50 = median(singles), median(tools), median(directs)
    single_target = SETTLE + SUBMIT_DELAY + SLACK
    ratio = tool_p50 / direct_p50
    return [
        Result(
            name="herdr_spawn_agent -> completed (fake pi reply)",
            value=single_p50 * 1e3,
            unit="ms",
            baseline_name="configured settle delay",
            baseline_value=SETTLE * 1e3,
            ratio=single_p50 / SETTLE,
            target=f"p50 <= {single_target * 1e3:g} ms",
            passed=single_p50 <= single_target,
            details={
                "p50 / max": f"{ms(single_p50)} / {ms(max(singles))}",
                "submit delay": ms(SUBMIT_DELAY),
                "spawns": str(len(singles)),
                "manifests": str(settings["agent_manifests_dir"] or "none (known-agent idle)"),
            },
        ),
        Result(
            name=f"{FLEET} parallel herdr_spawn_agent -> all completed (wall)",
            value=tool_p50 * 1e3,
            unit="ms",
            baseline_name=f"the same {FLEET} tasks' Herdr calls, direct, in parallel",
            baseline_value=direct_p50 * 1e3,
            ratio=ratio,
            target=f"<= {PARALLEL_TARGET:g}x direct",
            passed=ratio <= PARALLEL_TARGET,
            details={
                "tools per batch": ", ".join(ms(t) for t in tools),
                "direct per batch": ", ".join(ms(t) for t in directs),
                "maxConcurrent": str(FLEET),
            },
        ),
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
