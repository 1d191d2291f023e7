"""Cross-process locks: ``flock(2)`` on a private lock file, written once for every package.

Why a module of our own: a lock file sits in a directory of ours, but what is at its name is
opened with ``O_CREAT`` by every process that takes the lock, so the open has the same rules
as any file of ours: never through a link (``O_NOFOLLOW``), never blocking on a FIFO
(``O_NONBLOCK``), a regular file only (checked on the descriptor), created 0600. Before this
module the plugin registry, the audit log, the managed-agent store, the target locks, the
task records, the spawn placement and the concurrency slots each opened their own, with
different flags (three followed a link). ``fcntl.flock`` has no time-out, so a bounded wait
polls a non-blocking attempt with a growing pause (2 ms doubling to 50 ms) until its
:class:`~orchestrator.client.poll.Deadline`.

A lock is released when its descriptor is closed (by us, or by the kernel when the process
dies), so a crash never leaves a lock held.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from orchestrator.client.file_trust.private_files import UnsafeFile, describe_kind
from orchestrator.client.poll import Deadline

__all__ = ["acquire", "held", "open_lock_file", "try_lock"]

_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FIRST_PAUSE = 0.002
_LONGEST_PAUSE = 0.05


def open_lock_file(path: Path | str, *, create: bool = True) -> int:
    """A descriptor of the lock file ``path``: created 0600 when missing, unless not
    ``create`` (then a missing one is ``FileNotFoundError``). A link or anything but a regular
    file is :class:`UnsafeFile`."""
    try:
        fd = os.open(path, _LOCK_FLAGS if create else _LOCK_FLAGS & ~os.O_CREAT, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeFile(
                errno.ELOOP, f"lock file {path} is a symbolic link: not followed", str(path)
            ) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafeFile(
            errno.EINVAL,
            f"lock file {path} is {describe_kind(mode)}, not a regular file",
            str(path),
        )
    return fd


def try_lock(fd: int) -> bool:
    """Take the exclusive lock of ``fd`` if nobody holds it; whether it was taken."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise
    return True


def acquire(fd: int, timeout: float | None = None) -> bool:
    """Take the exclusive lock of ``fd``: waiting as long as it takes (``timeout`` None), or
    up to ``timeout`` seconds; whether it was taken."""
    if timeout is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    deadline = Deadline(timeout)
    pause = _FIRST_PAUSE
    while not try_lock(fd):
        left = deadline.left()
        if left <= 0:
            return False
        time.sleep(min(pause, left))  # flock has no time-out: poll it
        pause = min(pause * 2, _LONGEST_PAUSE)
    return True


@contextlib.contextmanager
def held(
    path: Path | str,
    *,
    timeout: float | None = None,
    busy: Callable[[], BaseException] | None = None,
) -> Iterator[int]:
    """Hold the lock of ``path`` for the block (the descriptor is yielded).

    With ``timeout``, a lock still held by another after that many seconds raises
    ``busy()`` (default: :class:`TimeoutError`). Closing the descriptor releases it.
    """
    fd = open_lock_file(path)
    try:
        if not acquire(fd, timeout):
            raise busy() if busy is not None else TimeoutError(f"lock {path} is held")
        yield fd
    finally:
        os.close(fd)
