"""Only our own state is trusted: a planted session file or socket directory is refused.

A session file decides what the simulator runs (each pane's ``launch_argv``, the resume
command typed into its shell), so one that another user owns or can write, or a symlink,
must never be restored; a socket directory that another user owns or can write would let
them swap the socket and answer our clients. The tests run as root in the sandbox, so
"another user" is a file chowned to an unused uid.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator, SimulatorError
from herdr_sim.client import call
from orchestrator.client.file_trust.ownership import (
    UntrustedPathError,
    check_directory,
    read_own_file,
)
from tests.waits import wait_until

pytestmark = pytest.mark.herdr_sim_only

OTHER_UID = 54_321


def start(short_dir: Path) -> Simulator:
    home = short_dir / "home"
    home.mkdir(exist_ok=True)
    sim = Simulator(
        socket_path=short_dir / "herdr.sock",
        base_env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    sim.start()
    return sim


@pytest.fixture
def planted(short_dir: Path) -> tuple[Path, Path]:
    """A real session file whose only pane's ``launch_argv`` would create a marker file
    (what an attacker's file would make the simulator run); (session file, marker)."""
    sim = start(short_dir)
    try:
        call(sim.socket_path, "workspace.create", {"cwd": "/tmp"})
    finally:
        sim.stop()
    session = short_dir / "session.json"
    marker = short_dir / "pwned"
    data: dict[str, Any] = json.loads(session.read_text())
    (pane,) = data["workspaces"][0]["tabs"][0]["panes"].values()
    pane["launch_argv"] = ["sh", "-c", f"touch {marker}; exec sleep 60"]
    session.write_text(json.dumps(data))
    session.chmod(0o600)
    return session, marker


def refuses(short_dir: Path, message: str) -> None:
    with pytest.raises(SimulatorError, match=message):
        start(short_dir).stop()
    assert not (short_dir / "herdr.sock").exists()


def test_the_planted_file_itself_restores_when_it_is_ours(
    short_dir: Path, planted: tuple[Path, Path]
) -> None:
    """The control: the same file, owned by us and private, is restored (and runs)."""
    _, marker = planted
    sim = start(short_dir)
    try:
        wait_until(marker.exists, timeout=10, what="the restored pane to run its launch_argv")
    finally:
        sim.stop()


def test_a_session_file_of_another_user_is_refused(
    short_dir: Path, planted: tuple[Path, Path]
) -> None:
    session, marker = planted
    os.chown(session, OTHER_UID, OTHER_UID)
    refuses(short_dir, rf"session file .* is owned by uid {OTHER_UID}")
    assert not marker.exists()


@pytest.mark.parametrize("mode", [0o666, 0o620])
def test_a_session_file_others_can_write_is_refused(
    short_dir: Path, planted: tuple[Path, Path], mode: int
) -> None:
    session, marker = planted
    session.chmod(mode)
    refuses(short_dir, r"session file .* is writable by other users")
    assert not marker.exists()


def test_a_symlinked_session_file_is_not_followed(
    short_dir: Path, planted: tuple[Path, Path]
) -> None:
    session, marker = planted
    elsewhere = short_dir / "elsewhere.json"
    session.rename(elsewhere)
    session.symlink_to(elsewhere)
    refuses(short_dir, r"session file .* is a symlink")
    assert not marker.exists()


def test_a_socket_directory_of_another_user_is_refused(short_dir: Path) -> None:
    directory = short_dir / "theirs"
    directory.mkdir(mode=0o755)
    os.chown(directory, OTHER_UID, OTHER_UID)
    sim = Simulator(socket_path=directory / "herdr.sock")
    with pytest.raises(SimulatorError, match=rf"socket directory .* is owned by uid {OTHER_UID}"):
        sim.start()
    assert not (directory / "herdr.sock").exists()


def test_a_socket_directory_others_can_write_is_refused(short_dir: Path) -> None:
    directory = short_dir / "open"
    directory.mkdir()
    directory.chmod(0o777)
    sim = Simulator(socket_path=directory / "herdr.sock")
    with pytest.raises(SimulatorError, match=r"socket directory .* is writable by other users"):
        sim.start()


def test_a_new_directory_under_a_directory_of_another_user_is_refused(short_dir: Path) -> None:
    """Whoever owns a directory above can rename ours away and put theirs in its place."""
    parent = short_dir / "theirs"
    parent.mkdir(mode=0o755)
    os.chown(parent, OTHER_UID, OTHER_UID)
    sim = Simulator(socket_path=parent / "mine" / "herdr.sock")
    with pytest.raises(SimulatorError, match=f"socket directory {parent} is owned by uid"):
        sim.start()


def test_a_sticky_shared_directory_is_accepted(short_dir: Path) -> None:
    """``/tmp`` (root's, world-writable, sticky): others cannot rename what is ours in it."""
    check_directory(Path("/tmp"), "socket directory")
    sticky = short_dir / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    check_directory(sticky, "socket directory")


def test_reading_a_fifo_neither_blocks_nor_is_trusted(short_dir: Path) -> None:
    fifo = short_dir / "session.json"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(UntrustedPathError, match="not a regular file"):
        read_own_file(fifo, "session file")
