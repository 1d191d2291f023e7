"""A saved machine: `herdr --machine box pane list` against the local `herdr pane list`.

Issue 16 asks for this ratio. The machine is a second simulator behind OpenSSH's ``sshd``
on a loopback port (:class:`herdr_sim.machines.host.SshHost`, what the ``herdr_machine``
fixture uses; asyncssh in this process where ``sshd`` is not installed), reached by the
real ``ssh`` client: each ``--machine`` call authenticates once (a connection master),
checks the remote bridge, pings and sends the request through ``remote-api-bridge``, then
closes the master. The local command is the same CLI against a simulator on this machine.
Both run as fresh processes, interleaved round by round, both servers holding two panes;
medians are compared. No target: the issue asks for the ratio (informational), and SSH's
key exchange dominates it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
from pathlib import Path

import benchkit
from benchkit import Result, median, ms

from herdr_sim import Simulator


def _two_panes(sim: Simulator, cwd: str) -> None:
    created = benchkit.api(sim, "workspace.create", cwd=cwd)
    root = created["root_pane"]["pane_id"]
    benchkit.api(sim, "pane.split", target_pane_id=root, direction="right")


def _run(argv: list[str], env: dict[str, str]) -> float:
    def once() -> None:
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)

    return benchkit.timed(once)


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    if shutil.which("ssh") is None:
        raise SystemExit("machine_cli: needs OpenSSH's ssh client (bash .ci/install-ssh)")
    rounds = 5 if args.quick else 20
    with benchkit.work_dir() as directory:
        for side in ("local", "remote"):
            (directory / side).mkdir()
        times, server = _measure(directory, rounds)
    return _rows(times, server, rounds)


def _measure(directory: Path, rounds: int) -> tuple[dict[str, list[float]], str]:
    """The interleaved timings, and which SSH server served them."""
    with (
        benchkit.simulator(directory / "local") as local,
        benchkit.simulator(directory / "remote") as remote,
    ):
        _two_panes(local, str(directory))
        _two_panes(remote, str(directory))
        env = benchkit.clean_env(
            HERDR_SIM_CONFIG_DIR=str(directory / "local" / "cfg"),
            HERDR_SOCKET_PATH=str(local.socket_path),
        )
        with benchkit.saved_machine(directory, remote, env) as host:
            subjects = {
                "remote": [str(local.cli_path), "--machine", "box", "pane", "list"],
                "local": [str(local.cli_path), "pane", "list"],
            }
            # Both must really work: two panes each, exit 0.
            for argv in subjects.values():
                out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
                assert len(json.loads(out.stdout)["result"]["panes"]) == 2, out.stdout
            times: dict[str, list[float]] = {name: [] for name in subjects}
            for _ in range(rounds):
                for name, argv in subjects.items():
                    times[name].append(_run(argv, env))
    return times, benchkit.ssh_server_name(host)


def _rows(times: dict[str, list[float]], server: str, rounds: int) -> list[Result]:
    remote_s, local_s = median(times["remote"]), median(times["local"])
    return [
        Result(
            name="machine: herdr --machine box pane list",
            value=remote_s * 1e3,
            unit="ms",
            baseline_name="local herdr pane list",
            baseline_value=local_s * 1e3,
            ratio=remote_s / local_s,
            target="none (issue 16 asks for the ratio)",
            passed=None,
            details={
                "median --machine": ms(remote_s),
                "min --machine": ms(min(times["remote"])),
                "median local": ms(local_s),
                "ssh execs per --machine call": "1 master (authenticates) + 3 multiplexed",
                "SSH server": server,
                "rounds": str(rounds),
            },
        )
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
