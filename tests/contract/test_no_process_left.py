"""Daemons a pane starts (``setsid``, ``nohup``, double fork) end with the pane or the server.

docs/simulator/overview.md promises that closing a pane or stopping the server ends every
process the pane started. A daemon that left the pane's session and whose parent already
exited is neither in the session nor below the shell; it is found by the mark every pane
process inherits (``HERDR_SIM_PANE_MARK``). A ``herdr-sim serve`` killed with SIGKILL ends
nothing; the next server on its socket ends what it left (its token is recorded beside the
socket).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from herdr_sim import Simulator
from herdr_sim.client import call
from herdr_sim.host.pane_marks import MARK_VARIABLE, reclaim, registry_file
from herdr_sim.host.procfs import all_processes, is_zombie
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import enter, split, wait_line
from tests.contract.test_processes import serve, stop
from tests.waits import wait_until

pytestmark = pytest.mark.herdr_sim_only

#: two daemons whose parents exit at once: a setsid'd double fork, a nohup'd one
DAEMONS = "(setsid sleep {a} &) ; (nohup sleep {b} >/dev/null 2>&1 &) ; echo started$((1))"

#: sleep durations unique to this process (xdist workers run side by side): 7301.<pid>, …
_numbers = (f"{base}.{os.getpid()}" for base in range(7301, 7999, 2))


def sleepers(*numbers: str) -> list[int]:
    """Live ``sleep N`` processes for the given Ns."""
    wanted = list(numbers)
    return [
        p.pid
        for p in all_processes()
        if p.name == "sleep" and p.argv and p.argv[-1] in wanted and p.state != "Z"
    ]


def start_daemons(socket: Path, pane: str) -> tuple[list[int], tuple[str, str]]:
    """Start the daemons in a pane; (their pids, their sleep numbers) once both orphaned."""
    numbers = (next(_numbers), next(_numbers))
    text = DAEMONS.format(a=numbers[0], b=numbers[1])
    call(socket, "pane.send_input", {"pane_id": pane, "text": text, "keys": ["Enter"]})
    pids = wait_until(
        lambda: found if len(found := sleepers(*numbers)) == 2 else None,
        timeout=10,
        what="both daemons to start",
    )
    shell = call(socket, "pane.process_info", {"pane_id": pane})["process_info"]["shell_pid"]
    by_pid = {p.pid: p for p in all_processes()}
    assert all(by_pid[pid].ppid != shell for pid in pids)  # both orphaned at once
    (setsid_daemon,) = sleepers(numbers[0])
    assert by_pid[setsid_daemon].sid != shell  # and this one left the session too
    return pids, numbers


def reap_ours(pids: list[int]) -> bool:
    """Reap those of ``pids`` that are this process's exited children; always False."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    return False


def gone(pids: list[int]) -> bool:
    alive = {p.pid for p in all_processes() if p.state != "Z"}
    return not any(pid in alive for pid in pids) and not any(is_zombie(pid) for pid in pids)


def test_pane_close_ends_its_setsid_and_nohup_daemons(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    pane = split(herdr_client, root)
    pids, _ = start_daemons(sim.socket_path, pane)
    herdr_client.call("pane.close", pane_id=pane)
    wait_until(lambda: gone(pids), timeout=10, what="the pane's daemons to be gone")


def test_another_panes_daemons_survive_a_pane_close(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    pane = split(herdr_client, root)
    kept, _ = start_daemons(sim.socket_path, root)
    closed, _ = start_daemons(sim.socket_path, pane)
    herdr_client.call("pane.close", pane_id=pane)
    wait_until(lambda: gone(closed), timeout=10, what="the closed pane's daemons to be gone")
    assert not gone(kept)


def test_server_stop_ends_every_daemon_and_forgets_its_registry(short_dir: Path) -> None:
    socket = short_dir / "herdr.sock"
    sim = Simulator(socket_path=socket).start()
    try:
        pane = call(socket, "workspace.create", {"cwd": "/tmp"})["root_pane"]["pane_id"]
        pids, _ = start_daemons(socket, pane)
        assert registry_file(socket).exists()
    finally:
        sim.stop()
    wait_until(lambda: gone(pids), timeout=10, what="the daemons to be gone")
    assert not registry_file(socket).exists()


def test_a_sigkilled_serve_leaves_nothing_a_restart_does_not_end(short_dir: Path) -> None:
    socket = short_dir / "serve.sock"
    proc = serve(short_dir, "--socket", str(socket))
    try:
        pane = call(socket, "workspace.create", {"cwd": "/tmp"})["root_pane"]["pane_id"]
        pids, _ = start_daemons(socket, pane)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        stop(proc)
    assert not gone(pids)  # nobody ended them: this is what a restart must clean up
    again = serve(short_dir, "--socket", str(socket))
    try:
        # Orphans of the killed serve came to this process if an earlier test made it a
        # subreaper (in-process simulators do): then it reaps what the restart ended.
        wait_until(
            lambda: reap_ours(pids) or gone(pids),
            timeout=10,
            what="the restart to end the leftovers",
        )
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(15)
        stop(again)


def test_a_registry_of_another_user_is_never_acted_on(short_dir: Path) -> None:
    """Only our own registry is read: a planted one naming a token is ignored, and the
    processes carrying it (ours here) live on."""
    registry = short_dir / "herdr.processes"
    registry.write_text(json.dumps({"token": "feedface", "pid": 999_999_999}))
    os.chown(registry, 54_321, 54_321)
    env = dict(os.environ, **{MARK_VARIABLE: "feedface:1"})
    victim = subprocess.Popen(["sleep", "7999"], env=env)
    try:
        assert reclaim(registry) == 0
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait(5)


def test_the_mark_reaches_pane_processes(herdr_client: HerdrClient, root: str) -> None:
    enter(herdr_client, root, f'echo "mark=${{{MARK_VARIABLE}:+set}}"')
    assert wait_line(herdr_client, root, r"^mark=") == "mark=set"
