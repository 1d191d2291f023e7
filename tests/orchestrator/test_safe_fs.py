"""``safe_fs``: no link followed, no FIFO opened, bounded reads, complete writes, and private
directories that are ours without chmodding anyone else's."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from orchestrator.agent_tools.records import TaskStore
from orchestrator.client.file_trust import private_files as safe_fs


def test_read_bounded_refuses_links_fifos_and_directories(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_text("secret")
    (tmp_path / "link").symlink_to(real)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(safe_fs.UnsafeFile, match="symbolic link"):
        safe_fs.read_bounded(tmp_path / "link", 100)
    with pytest.raises(safe_fs.UnsafeFile, match="FIFO"):
        safe_fs.read_bounded(tmp_path / "fifo", 100)
    with pytest.raises(safe_fs.UnsafeFile, match="directory"):
        safe_fs.read_bounded(tmp_path, 100)
    with pytest.raises(FileNotFoundError):
        safe_fs.read_bounded(tmp_path / "missing", 100)


def test_read_bounded_stops_at_the_bound_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    head = safe_fs.read_bounded(path, 4)
    assert (head.data, head.size, head.truncated) == (b"0123", 10, True)
    middle = safe_fs.read_bounded(path, 4, offset=8)
    assert (middle.data, middle.truncated) == (b"89", False)
    tail = safe_fs.read_bounded(path, 3, tail=True)
    assert (tail.data, tail.offset) == (b"789", 7)


def test_write_all_loops_over_short_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data)[:3]))
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        safe_fs.write_all(fd, b"0123456789")
    finally:
        os.close(fd)
    assert (tmp_path / "f").read_bytes() == b"0123456789"


def test_write_atomic_fails_whole_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "task.md"
    path.write_text("old")

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError, match="space"):
        safe_fs.write_atomic(path, "new")
    monkeypatch.undo()
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["task.md"]


def test_ensure_private_dir_creates_every_missing_level_0700(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c"
    safe_fs.ensure_private_dir(target)
    for path in (tmp_path / "a", tmp_path / "a" / "b", target):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path


def test_ensure_private_dir_leaves_an_existing_dir_of_ours_as_it_is(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    mine.chmod(0o755)
    safe_fs.ensure_private_dir(mine)
    assert stat.S_IMODE(mine.stat().st_mode) == 0o755


def test_a_shared_sticky_dir_is_refused_and_never_chmodded(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(safe_fs.UnsafeFile, match="writable by group or others"):
        TaskStore(shared).create(kind="pi", cwd="/")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert list(shared.iterdir()) == []


def test_a_dir_owned_by_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    with pytest.raises(safe_fs.UnsafeFile, match="owned by uid"):
        safe_fs.ensure_private_dir(theirs)
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o700


def test_open_dir_refuses_a_link_and_creates_relative_to_the_parent(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "messages").symlink_to(elsewhere)
    with (
        pytest.raises(safe_fs.UnsafeFile, match="symbolic link"),
        safe_fs.open_dir(tmp_path / "messages", create=True),
    ):
        pass  # pragma: no cover - never entered
    with safe_fs.open_dir(tmp_path / "fresh", create=True) as fd:
        assert stat.S_ISDIR(os.fstat(fd).st_mode)
    assert (tmp_path / "fresh").is_dir() and not (tmp_path / "fresh").is_symlink()


def test_open_dir_names_a_regular_file_for_what_it_is(tmp_path: Path) -> None:
    """A file where a directory is wanted was once called "not a regular file, not a
    directory"; the one kind namer (``describe_kind``) says what it is."""
    (tmp_path / "messages").write_text("x")
    with (
        pytest.raises(safe_fs.UnsafeFile, match=r"is a regular file, not a directory"),
        safe_fs.open_dir(tmp_path / "messages"),
    ):
        pass  # pragma: no cover - never entered


def test_publish_new_is_complete_or_absent_and_never_follows_a_planted_name(
    tmp_path: Path,
) -> None:
    """The create-once writer of mailbox records, result reservations and the controller
    identity: the first writer wins whole; a name already there, a planted dangling link
    included, is ``FileExistsError`` and its target is never created; no temp file stays."""
    with safe_fs.open_dir(tmp_path) as fd:
        safe_fs.publish_new(fd, "record", b"first")
        with pytest.raises(FileExistsError):
            safe_fs.publish_new(fd, "record", b"second")
        (tmp_path / "planted").symlink_to(tmp_path / "victim")
        with pytest.raises(FileExistsError):
            safe_fs.publish_new(fd, "planted", b"data")
    assert (tmp_path / "record").read_bytes() == b"first"
    assert stat.S_IMODE((tmp_path / "record").stat().st_mode) == 0o600
    assert not (tmp_path / "victim").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["planted", "record"]


def test_spawn_refuses_a_shared_state_dir_clearly_and_leaves_it_alone(tmp_path: Path) -> None:
    from orchestrator.agent_tools.context import AgentToolsContext
    from orchestrator.agent_tools.spawn import handle_spawn
    from orchestrator.core.config import Config

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    env = {"HOME": str(tmp_path), "HERDR_SOCKET_PATH": str(tmp_path / "none.sock")}
    config = Config(state_dir=shared, artifact_dir=shared / "artifacts")
    ctx = AgentToolsContext.create(env, config=config)
    value = handle_spawn({"prompt": "x", "cwd": str(tmp_path)}, ctx)
    assert value["status"] == "failed" and value["error"]["code"] == "STATE_DIR_UNSAFE", value
    assert "writable by group or others" in value["error"]["message"]
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777 and list(shared.iterdir()) == []
