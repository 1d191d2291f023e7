"""Trust only our own state: refuse a directory or file that another user planted or can change.

The simulator's state decides what it runs and who answers its clients: ``session.json`` holds
each pane's ``launch_argv`` and the resume commands typed into new shells, and whoever can
write the socket's directory can swap the socket for their own. So a session file is read
only when it is a regular file of this user that nobody else can write (never through a
symlink: it is opened with ``O_NOFOLLOW`` and checked on the open descriptor, so it cannot
change between the check and the read), and the socket's directory is used only when it and
every directory above it belongs to this user or root and is writable by nobody else (a
sticky directory such as ``/tmp`` counts as safe: others cannot rename or remove what is ours
in it). Anything else is an :class:`UntrustedPathError`, and the server refuses to start.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["UntrustedPathError", "check_directory", "read_own_file"]

_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


class UntrustedPathError(RuntimeError):
    """A path that another user owns or can write: the simulator will not use it."""


def _owner_text(uid: int) -> str:
    return f"uid {uid}, not this user (uid {os.geteuid()})"


def check_directory(directory: Path, what: str) -> None:
    """Refuse ``directory`` unless it and every directory above it are safe (see module doc).

    A symlinked ``directory`` must itself belong to this user or root; its target is then
    checked like any directory.
    """
    me = os.geteuid()
    link = os.lstat(directory)
    if stat.S_ISLNK(link.st_mode) and link.st_uid not in (me, 0):
        raise UntrustedPathError(
            f"{what} {directory} is a symlink owned by {_owner_text(link.st_uid)}: not following it"
        )
    resolved = directory.resolve(strict=True)
    for current in (resolved, *resolved.parents):
        info = current.stat()
        if not stat.S_ISDIR(info.st_mode):
            raise UntrustedPathError(f"{what} {current} is not a directory")
        if info.st_uid not in (me, 0):
            raise UntrustedPathError(
                f"{what} {current} is owned by {_owner_text(info.st_uid)}: refusing to use it"
            )
        if info.st_mode & _OTHERS_WRITE and not info.st_mode & stat.S_ISVTX:
            raise UntrustedPathError(
                f"{what} {current} is writable by other users "
                f"(mode {stat.S_IMODE(info.st_mode):04o}): refusing to use it"
            )


def read_own_file(path: Path, what: str) -> bytes | None:
    """The bytes of ``path`` if it is this user's own regular file that nobody else can
    write; None when it does not exist; :class:`UntrustedPathError` otherwise."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise UntrustedPathError(f"{what} {path} is a symlink: not following it") from None
        raise UntrustedPathError(f"{what} {path} cannot be opened: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UntrustedPathError(f"{what} {path} is not a regular file")
        if info.st_uid != os.geteuid():
            raise UntrustedPathError(
                f"{what} {path} is owned by {_owner_text(info.st_uid)}: refusing to use it"
            )
        if info.st_mode & _OTHERS_WRITE:
            raise UntrustedPathError(
                f"{what} {path} is writable by other users "
                f"(mode {stat.S_IMODE(info.st_mode):04o}): refusing to use it"
            )
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
