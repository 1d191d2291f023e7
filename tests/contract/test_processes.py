"""No zombie and no orphan: a pane's whole process tree goes with the pane or the server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from herdr_sim import Simulator
from herdr_sim.client import call, request
from herdr_sim.host.procfs import descendants, is_zombie, proc_info
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import enter, kinds, pane_ids, process_info, split
from tests.waits import wait_until

#: the simulator's own seams or settings (herdr_sim.testing): not a real Herdr's
pytestmark = pytest.mark.herdr_sim_only

#: a foreground job, a background job, a nohup'd child and one that ignores HUP and TERM
WORKLOAD = (
    "sleep 1001 & nohup sleep 1002 >/dev/null 2>&1 & "
    "(trap '' HUP TERM; exec sleep 1003) & sleep 1004"
)


def start_workload(socket: Path, pane: str) -> list[int]:
    """Run the workload in a pane; return the shell and every process it started."""
    call(socket, "pane.send_input", {"pane_id": pane, "text": WORKLOAD, "keys": ["Enter"]})
    shell = call(socket, "pane.process_info", {"pane_id": pane})["process_info"]["shell_pid"]

    def tree() -> list[int] | None:
        names = [p.argv[-1] for p in descendants(shell) if p.argv and p.name == "sleep"]
        if sorted(names) == ["1001", "1002", "1003", "1004"]:
            return [shell, *(p.pid for p in descendants(shell))]
        return None

    return wait_until(tree, timeout=10, what="the workload to start")


def gone(pids: list[int]) -> bool:
    """Every pid has exited and been reaped (a zombie still counts as present)."""
    return all(proc_info(pid) is None or False for pid in pids) and not any(
        is_zombie(pid) for pid in pids
    )


def test_pane_close_ends_the_whole_tree(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    pane = split(herdr_client, root)
    pids = start_workload(sim.socket_path, pane)
    herdr_client.call("pane.close", pane_id=pane)
    wait_until(lambda: gone(pids), timeout=10, what="pane processes to be gone")


def test_workspace_close_ends_every_pane_tree(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    other = split(herdr_client, root, "down")
    pids = start_workload(sim.socket_path, root) + start_workload(sim.socket_path, other)
    herdr_client.call("workspace.close", workspace_id="w1")
    wait_until(lambda: gone(pids), timeout=10, what="workspace processes to be gone")


def test_server_stop_ends_every_pane_tree(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    tab = herdr_client.call("tab.create", cwd="/tmp")["root_pane"]["pane_id"]
    pids = start_workload(sim.socket_path, root) + start_workload(sim.socket_path, tab)
    assert request(sim.socket_path, "server.stop")["result"] == {"type": "ok"}
    assert sim.wait_stopped(15)
    wait_until(lambda: gone(pids), timeout=10, what="server processes to be gone")


def test_shell_exit_closes_the_pane(sim: Simulator, herdr_client: HerdrClient, root: str) -> None:
    pane = split(herdr_client, root)
    shell = process_info(herdr_client, pane)["shell_pid"]
    enter(herdr_client, pane, "exit 3")
    wait_until(lambda: pane not in pane_ids(herdr_client), timeout=10, what="the pane to close")
    emitted = kinds(sim.events)
    assert emitted.index("pane_exited") < len(emitted) - 1
    exited = next(e for e in sim.events if e["event"] == "pane_exited")
    assert exited["data"]["pane_id"] == pane
    wait_until(lambda: gone([shell]), what="the shell to be reaped")


def serve(short_dir: Path, *extra: str) -> subprocess.Popen[str]:
    """Start `herdr-sim serve` in the foreground and wait until it listens."""
    env = dict(os.environ, HOME=str(short_dir), HERDR_SIM_CONFIG_DIR=str(short_dir / "cfg"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "herdr_sim", "serve", *extra],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "listening on" in line, line
    return proc


def stop(proc: subprocess.Popen[str]) -> None:
    """Kill a serve process that outlived its test, and close its pipe."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(5)
    if proc.stderr is not None:
        proc.stderr.close()


def test_sigterm_to_serve_leaves_nothing_behind(short_dir: Path) -> None:
    socket = short_dir / "serve.sock"
    proc = serve(short_dir, "--socket", str(socket))
    try:
        pane = call(socket, "workspace.create", {"cwd": "/tmp"})["root_pane"]["pane_id"]
        pids = start_workload(socket, pane)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        stop(proc)
    wait_until(lambda: gone(pids), timeout=10, what="serve's processes to be gone")
    assert not socket.exists()


def test_herdr_server_stop_stops_serve(short_dir: Path) -> None:
    proc = serve(short_dir, "--session", "demo")
    socket = short_dir / "cfg" / "sessions" / "demo" / "herdr.sock"
    try:
        pane = call(socket, "workspace.create", {"cwd": "/tmp"})["root_pane"]["pane_id"]
        pids = start_workload(socket, pane)
        herdr = short_dir / "bin"
        subprocess.run(
            [sys.executable, "-m", "herdr_sim", "install-cli", str(herdr)],
            check=True,
            capture_output=True,
            timeout=30,
        )
        env = dict(os.environ, HERDR_SIM_CONFIG_DIR=str(short_dir / "cfg"))
        env.pop("HERDR_SOCKET_PATH", None)
        stopped = subprocess.run(
            [str(herdr / "herdr"), "--session", "demo", "server", "stop"],
            env=env,
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert stopped.returncode == 0, stopped.stderr
        assert proc.wait(15) == 0
    finally:
        stop(proc)
    wait_until(lambda: gone(pids), timeout=10, what="serve's processes to be gone")
    assert not socket.exists()


def test_serve_logs_errors_to_stderr(short_dir: Path) -> None:
    # a session file that cannot be written: every save fails and is logged (the library
    # alone installs only a NullHandler, so without serve's logging this went unseen)
    socket = short_dir / "serve.sock"
    proc = serve(short_dir, "--socket", str(socket))
    try:
        (short_dir / "serve.session.json").mkdir()
        call(socket, "workspace.create", {"cwd": "/tmp"})
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        assert proc.stderr is not None
        logged = proc.stderr.read()
    finally:
        stop(proc)
    assert "herdr-sim: ERROR herdr_sim.persist.session_saver: could not save the session" in logged
    assert "Traceback" in logged
