"""Remote spawn → completed, against a local spawn → completed in the same run (issue 16).

Two simulators with the same timings (settle 0.5 s, Herdr's 300 ms submit delay), the
second behind OpenSSH's ``sshd`` on a loopback port (:class:`herdr_sim.machines.host.SshHost`,
what the ``herdr_machine`` fixture uses; asyncssh in this process where ``sshd`` is not
installed) and saved in the local catalog as ``box``. One git repository is the tasks'
``cwd``; the configuration lists ``box`` in ``machines`` and ``sharedFilesystem`` (it is this
host, so it sees the same paths). Each round spawns one task locally and one with
``machine: "box"`` (interleaved), both through ``run_tool`` as MCP calls them, with a fake pi
that answers with its default reply; the wall time of each call until its ``completed``
AgentResult is measured and the medians are compared.

Every Herdr request of the remote spawn is a ``herdr --machine box …`` process that opens
its own SSH connection (key exchange, the bridge check, ``ping``, the request), so the ratio
is mostly SSH. No target: the issue asks for the ratio (informational).
"""

from __future__ import annotations

import argparse
import shutil
from functools import partial
from pathlib import Path
from typing import Any

import benchkit
from benchkit import Result, median, ms

from orchestrator.pipeline.registry import run_tool

SETTLE = 0.5
SUBMIT_DELAY = 0.3
TIMEOUT_MS = 60_000


def _spawn(sim: Any, env: dict[str, str], repo: Path, name: str, machine: str) -> None:
    ctx = benchkit.agent_tools_context(sim, env)
    arguments = {"prompt": "say ok", "cwd": str(repo), "name": name, "timeout_ms": TIMEOUT_MS}
    if machine != "local":
        arguments["machine"] = machine
    result = run_tool("herdr_spawn_agent", arguments, ctx)
    if result.get("status") != "completed" or result.get("machine") != machine:
        raise RuntimeError(f"spawn {name} on {machine} did not complete: {result}")


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    if shutil.which("ssh") is None:
        raise SystemExit("remote_spawn: needs OpenSSH's ssh client (bash .ci/install-ssh)")
    rounds = 3 if args.quick else 8
    settings: dict[str, Any] = {
        "agent_start_settle": SETTLE,
        "agent_prompt_submit_delay": SUBMIT_DELAY,
        "persist": False,
    }
    times: dict[str, list[float]] = {"local": [], "box": []}
    with benchkit.work_dir() as directory:
        for side in ("local", "remote"):
            (directory / side).mkdir()
        with (
            benchkit.simulator(directory / "local", **settings) as local,
            benchkit.simulator(directory / "remote", **settings) as remote,
        ):
            env = benchkit.clean_env(
                HOME=str(directory / "home"),
                XDG_CONFIG_HOME=str(directory / "config"),
                HERDR_SIM_CONFIG_DIR=str(directory / "local" / "cfg"),
                HERDR_SOCKET_PATH=str(local.socket_path),
                HERDR_BIN_PATH=str(local.cli_path),
                HERDR_ORCHESTRATOR_STATE_DIR=str(directory / "state"),
                HERDR_ORCHESTRATOR_MAX_CONCURRENT="64",
                HERDR_ORCHESTRATOR_TRANSPORT="socket",
                HERDR_ORCHESTRATOR_MACHINES="box",
                HERDR_ORCHESTRATOR_SHARED_FILESYSTEM="box",
            )
            with benchkit.saved_machine(directory, remote, env) as host:
                repo = benchkit.git_repo(directory / "repo")
                for machine in times:  # warm-up: each side's agents workspace
                    _spawn(local, env, repo, f"warm-{machine}", machine)
                for i in range(rounds):
                    for machine, samples in times.items():
                        name = f"{machine}-{i}"
                        samples.append(
                            benchkit.timed(partial(_spawn, local, env, repo, name, machine))
                        )
    server = benchkit.ssh_server_name(host)
    remote_s, local_s = median(times["box"]), median(times["local"])
    return [
        Result(
            name="machine: herdr_spawn_agent -> completed on box",
            value=remote_s * 1e3,
            unit="ms",
            baseline_name="local herdr_spawn_agent -> completed",
            baseline_value=local_s * 1e3,
            ratio=remote_s / local_s,
            target="none (issue 16 asks for the ratio)",
            passed=None,
            details={
                "median remote": ms(remote_s),
                "min remote": ms(min(times["box"])),
                "median local": ms(local_s),
                "settle + submit delay": ms(SETTLE + SUBMIT_DELAY),
                "SSH server": server,
                "rounds": str(rounds),
            },
        )
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
