"""The file primitives every package now shares: lock files, the durability and mode choices
of ``write_atomic`` and ``publish_new``, and ``open_regular`` (see tests/test_file_primitives.py
for the rule that no module writes its own)."""

from __future__ import annotations

import errno
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from orchestrator.client.file_trust import locks
from orchestrator.client.file_trust import private_files as safe_fs


def test_a_lock_file_is_created_private_and_never_through_a_link_or_fifo(tmp_path: Path) -> None:
    with locks.held(tmp_path / "a.lock") as fd:
        assert stat.S_IMODE(os.fstat(fd).st_mode) == 0o600
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (tmp_path / "linked.lock").symlink_to(victim)
    with pytest.raises(safe_fs.UnsafeFile, match="symbolic link"):
        locks.open_lock_file(tmp_path / "linked.lock")
    os.mkfifo(tmp_path / "fifo.lock")
    with pytest.raises(safe_fs.UnsafeFile, match="FIFO"):
        locks.open_lock_file(tmp_path / "fifo.lock")  # returns at once: O_NONBLOCK
    with pytest.raises(FileNotFoundError):
        locks.open_lock_file(tmp_path / "missing.lock", create=False)
    assert not (tmp_path / "missing.lock").exists()


def test_a_held_lock_excludes_another_holder_until_released(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    other = locks.open_lock_file(path)
    try:
        with locks.held(path):
            assert not locks.try_lock(other)  # another open file description: excluded
            assert not locks.acquire(other, timeout=0.05)
            with pytest.raises(TimeoutError, match="held"), locks.held(path, timeout=0.01):
                pass
            busy = KeyError("busy")
            with pytest.raises(KeyError), locks.held(path, timeout=0.01, busy=lambda: busy):
                pass
        assert locks.try_lock(other)  # closing the holder's descriptor released it
    finally:
        os.close(other)


def test_a_waiting_acquire_gets_the_lock_when_it_is_released(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    got = threading.Event()
    holder = locks.open_lock_file(path)
    assert locks.acquire(holder)

    def wait() -> None:
        with locks.held(path, timeout=10):
            got.set()

    waiter = threading.Thread(target=wait)
    waiter.start()
    assert not got.wait(0.1)  # still held
    os.close(holder)
    waiter.join(10)
    assert got.is_set()


def test_write_atomic_sets_the_exact_mode_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        launcher = safe_fs.write_atomic(tmp_path / "bin" / "tool", "#!/bin/sh\n", mode=0o755)
    finally:
        os.umask(old)
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "bin").stat().st_mode) == 0o700


def test_write_atomic_fsyncs_as_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[bool] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    safe_fs.write_atomic(tmp_path / "a", "1")
    assert synced == [False]  # the data, not the name
    synced.clear()
    safe_fs.write_atomic(tmp_path / "a", "2", sync=False)
    assert synced == []
    safe_fs.write_atomic(tmp_path / "a", "3", sync_dir=True)
    assert synced == [False, True]
    synced.clear()
    safe_fs.publish_new(tmp_path, "b", b"once", sync=False)
    assert synced == []
    assert (tmp_path / "a").read_text() == "3"
    assert (tmp_path / "b").read_bytes() == b"once"


def test_write_atomic_follows_a_parent_link_of_ours_only_when_asked(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles"
    real.mkdir()
    (tmp_path / "config").symlink_to(real)
    with pytest.raises(safe_fs.UnsafeFile, match="not a directory"):
        safe_fs.write_atomic(tmp_path / "config" / "f.json", "{}")  # an artifact dir's rule
    safe_fs.write_atomic(tmp_path / "config" / "f.json", "{}", own_link_parent=True)
    assert (real / "f.json").read_text() == "{}"
    assert (tmp_path / "config").is_symlink()  # the link stays; the file went to its target


def test_open_regular_follows_a_link_only_when_asked(tmp_path: Path) -> None:
    real = tmp_path / "extension.ts"
    real.write_text("// twin\n")
    (tmp_path / "link.ts").symlink_to(real)
    with pytest.raises(safe_fs.UnsafeFile, match="symbolic link"):
        safe_fs.open_regular(tmp_path / "link.ts")
    fd = safe_fs.open_regular(tmp_path / "link.ts", follow=True)
    try:
        assert os.read(fd, 100) == b"// twin\n"
    finally:
        os.close(fd)
    assert safe_fs.read_bounded(tmp_path / "link.ts", 4, follow=True).data == b"// t"
    with pytest.raises(safe_fs.UnsafeFile, match="directory"):
        safe_fs.open_regular(tmp_path, follow=True)


def test_a_refused_lock_file_says_why_in_errno_and_names_the_path(tmp_path: Path) -> None:
    (tmp_path / "linked.lock").symlink_to(tmp_path / "elsewhere")
    os.mkfifo(tmp_path / "fifo.lock")
    for name, code in (("linked.lock", errno.ELOOP), ("fifo.lock", errno.EINVAL)):
        with pytest.raises(safe_fs.UnsafeFile) as refused:
            locks.open_lock_file(tmp_path / name)
        assert (refused.value.errno, refused.value.filename) == (code, str(tmp_path / name))


def test_an_existing_lock_file_opens_without_create_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "ticket"
    path.write_text("taken by task-1")
    fd = locks.open_lock_file(path, create=False)
    try:
        assert locks.try_lock(fd)
    finally:
        os.close(fd)
    assert path.read_text() == "taken by task-1"  # neither truncated nor replaced


def test_a_bounded_acquire_waits_for_a_release_within_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    holder = locks.open_lock_file(path)
    assert locks.acquire(holder)
    timer = threading.Timer(0.1, os.close, args=(holder,))
    timer.start()
    waiter = locks.open_lock_file(path)
    try:
        assert locks.acquire(waiter, timeout=0.5)  # held at first, released 0.1 s in
    finally:
        os.close(waiter)
        timer.join()


def test_a_bounded_acquire_backs_off_from_2_ms_doubling_to_50_ms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "x.lock"
    holder = locks.open_lock_file(path)
    assert locks.acquire(holder)
    pauses: list[float] = []

    def sleep(seconds: float) -> None:
        pauses.append(round(seconds, 3))
        if len(pauses) == 7:
            os.close(holder)  # released during the seventh pause

    monkeypatch.setattr(time, "sleep", sleep)  # the module sleeps through time.sleep
    waiter = locks.open_lock_file(path)
    try:
        assert locks.acquire(waiter, timeout=60)
    finally:
        os.close(waiter)
    assert pauses == [0.002, 0.004, 0.008, 0.016, 0.032, 0.05, 0.05]
