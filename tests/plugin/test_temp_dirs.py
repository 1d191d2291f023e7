"""Temp dirs of a killed pytest run, and the processes in them, are reclaimed by the next run.

The fixtures' servers live in ``/tmp/herdr-*`` directories removed when a server stops; a
run killed with SIGKILL removes nothing. Each directory records its owner process, and the
first directory a later run makes reclaims those whose owner is gone (ending the pane
processes their simulators registered first). Directories of live runs, of other users, or
without our own owner file are never touched.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from herdr_sim.host.procfs import all_processes, start_ticks
from pytest_herdr import temp_dirs
from pytest_herdr.temp_dirs import OWNER_FILE, reclaim_abandoned
from tests.waits import wait_until

#: a "pytest run" that starts a fixture server, leaves a setsid daemon in a pane and is
#: killed with SIGKILL: prints the server's directory and the daemon's pid first
KILLED_RUN = textwrap.dedent(
    """
    import os, signal, sys
    from herdr_sim.client import call
    from herdr_sim.config import SimulatorConfig
    from herdr_sim.host.procfs import all_processes
    from pytest_herdr.backends import start_sim

    server = start_sim(SimulatorConfig())
    pane = call(server.socket_path, "workspace.create", {"cwd": "/tmp"})["root_pane"]["pane_id"]
    call(server.socket_path, "pane.send_input",
         {"pane_id": pane, "text": f"(setsid sleep 7919.{os.getpid()} &)", "keys": ["Enter"]})
    while True:
        found = [p.pid for p in all_processes() if p.argv == ("sleep", f"7919.{os.getpid()}")]
        if found:
            break
        signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a cheap syscall between scans
    print(server.directory, found[0], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def make_dir(root: Path, owner: dict[str, object] | None) -> Path:
    directory = root / f"herdr-{len(list(root.iterdir()))}"
    directory.mkdir(mode=0o700)
    if owner is not None:
        (directory / OWNER_FILE).write_text(json.dumps(owner))
        (directory / OWNER_FILE).chmod(0o600)
    return directory


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_dead_runs_dir_is_removed_and_a_live_runs_kept(tmp_path: Path) -> None:
    dead = make_dir(tmp_path, {"pid": dead_pid(), "start": 1})
    live = make_dir(tmp_path, {"pid": os.getpid(), "start": start_ticks(os.getpid())})
    assert reclaim_abandoned(root=tmp_path) == [dead]
    assert not dead.exists() and live.exists()


def test_a_recycled_pid_does_not_keep_a_dead_runs_dir(tmp_path: Path) -> None:
    """Our own pid with another start time: the pid was reused, the run is gone."""
    recycled = make_dir(tmp_path, {"pid": os.getpid(), "start": 1})
    assert reclaim_abandoned(root=tmp_path) == [recycled]


def test_dirs_not_ours_are_never_touched(tmp_path: Path) -> None:
    no_owner_file = make_dir(tmp_path, None)
    theirs = make_dir(tmp_path, {"pid": dead_pid(), "start": 1})
    os.chown(theirs, 54_321, 54_321)
    planted_owner = make_dir(tmp_path, {"pid": dead_pid(), "start": 1})
    os.chown(planted_owner / OWNER_FILE, 54_321, 54_321)
    shared = make_dir(tmp_path, {"pid": dead_pid(), "start": 1})
    shared.chmod(0o755)
    link = tmp_path / "herdr-link"
    link.symlink_to(make_dir(tmp_path, None))
    assert reclaim_abandoned(root=tmp_path) == []
    assert all(path.exists() for path in (no_owner_file, theirs, planted_owner, shared, link))


def test_the_next_runs_first_dir_reclaims_a_killed_runs_dir_and_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_RUN],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    directory_text, pid_text = killed.stdout.split()
    directory, daemon = Path(directory_text), int(pid_text)
    assert directory.exists()
    assert any(p.pid == daemon and p.state != "Z" for p in all_processes())
    monkeypatch.setattr(temp_dirs, "_reclaimed", False)  # as in a fresh run
    fresh = temp_dirs.short_dir()
    try:
        assert not directory.exists()
        wait_until(
            lambda: not any(p.pid == daemon and p.state != "Z" for p in all_processes()),
            timeout=10,
            what="the killed run's daemon to be ended",
        )
    finally:
        # If this process is a subreaper (in-process simulators make it one), the daemon
        # was re-parented here when the killed run died: reap it.
        with contextlib.suppress(ChildProcessError):
            os.waitpid(daemon, os.WNOHANG)
        fresh.joinpath(OWNER_FILE).unlink()
        fresh.rmdir()
