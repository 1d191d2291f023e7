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

The rule itself — "this file or directory is ours alone" — is :func:`ownership_problem`, the
one place every package decides it (the plugin loader, the agent home, the wire log, the
orchestrator's private directories, token file, audit log, ...). Callers differ only in what
they pass: the kind they want, which mode bits they forbid (``0o022`` for a file others may
read, ``0o077`` for a secret, ``0`` for one they narrow themselves), whether root may own it
and whether a sticky directory is fine; each keeps its own error type and message. This
module stays light (``os`` and ``stat`` only at run time): the ``herdr`` CLI imports it.
"""

from __future__ import annotations

import os
import stat

# `typing` and `pathlib` cost the `herdr` CLI start; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Literal

__all__ = [
    "FOREIGN_OWNER",
    "IS_LINK",
    "NOT_DIRECTORY",
    "NOT_REGULAR",
    "OTHERS_ANY",
    "OTHERS_WRITE",
    "WRITABLE",
    "UntrustedPathError",
    "check_directory",
    "followable_link",
    "open_own_append",
    "open_own_file",
    "ownership_problem",
    "read_own_file",
]

#: group or others may write it: they could change what we read (the default rule)
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
#: group or others may do anything with it: the rule for a secret (a token file)
OTHERS_ANY = 0o077

# What :func:`ownership_problem` found; each caller words its own message.
IS_LINK = "link"
NOT_REGULAR = "not a regular file"
NOT_DIRECTORY = "not a directory"
FOREIGN_OWNER = "owned by another user"
WRITABLE = "mode allows others"


def ownership_problem(
    info: os.stat_result,
    *,
    kind: Literal["file", "directory"] | None = None,
    forbidden: int = OTHERS_WRITE,
    root_may_own: bool = False,
    sticky_ok: bool = False,
) -> str | None:
    """None when ``info`` (an ``lstat``/``fstat`` result) is ours alone, else the rule it breaks.

    ``kind`` is ``"file"`` (a regular file: a link, FIFO or device is :data:`NOT_REGULAR`),
    ``"directory"`` (else :data:`NOT_DIRECTORY`) or None (any kind but a symlink:
    :data:`IS_LINK`). It must belong to this user (:data:`FOREIGN_OWNER`; root too when
    ``root_may_own``), and none of the ``forbidden`` mode bits may be set (:data:`WRITABLE`),
    unless ``sticky_ok`` and the sticky bit is set (others cannot rename or remove what is
    ours in a sticky directory). Checked in that order.
    """
    mode = info.st_mode
    if kind == "file" and not stat.S_ISREG(mode):
        return NOT_REGULAR
    if kind == "directory" and not stat.S_ISDIR(mode):
        return NOT_DIRECTORY
    if kind is None and stat.S_ISLNK(mode):
        return IS_LINK
    me = os.geteuid()
    if info.st_uid != me and not (root_may_own and info.st_uid == 0):
        return FOREIGN_OWNER
    if mode & forbidden and not (sticky_ok and mode & stat.S_ISVTX):
        return WRITABLE
    return None


def followable_link(info: os.stat_result) -> bool:
    """Whether a path whose ``lstat`` is ``info`` may be followed: not a symlink, or one of
    this user's or root's (a link another user planted is never followed)."""
    return not stat.S_ISLNK(info.st_mode) or info.st_uid in (os.geteuid(), 0)


class UntrustedPathError(RuntimeError):
    """A path that another user owns or can write: the simulator will not use it."""


def _owner_text(uid: int) -> str:
    return f"uid {uid}, not this user (uid {os.geteuid()})"


def _untrusted(what: str, path: Path, problem: str, info: os.stat_result) -> UntrustedPathError:
    """The simulator's wording of an :func:`ownership_problem`."""
    if problem == FOREIGN_OWNER:
        return UntrustedPathError(
            f"{what} {path} is owned by {_owner_text(info.st_uid)}: refusing to use it"
        )
    if problem == WRITABLE:
        return UntrustedPathError(
            f"{what} {path} is writable by other users "
            f"(mode {stat.S_IMODE(info.st_mode):04o}): refusing to use it"
        )
    return UntrustedPathError(f"{what} {path} is {problem}")


def check_directory(directory: Path, what: str) -> None:
    """Refuse ``directory`` unless it and every directory above it are safe (see module doc).

    A symlinked ``directory`` must itself belong to this user or root; its target is then
    checked like any directory.
    """
    link = os.lstat(directory)
    if not followable_link(link):
        raise UntrustedPathError(
            f"{what} {directory} is a symlink owned by {_owner_text(link.st_uid)}: not following it"
        )
    resolved = directory.resolve(strict=True)
    for current in (resolved, *resolved.parents):
        info = current.stat()
        problem = ownership_problem(info, kind="directory", root_may_own=True, sticky_ok=True)
        if problem is not None:
            raise _untrusted(what, current, problem, info)


def open_own_file(
    path: Path, refuse: Callable[[str, os.stat_result], Exception], *, forbidden: int = OTHERS_WRITE
) -> int:
    """A read-only descriptor of ``path``, checked on the descriptor, so the file cannot
    change between the check and the read.

    Never through a symlink at the last component (``O_NOFOLLOW``) and never blocking on a
    FIFO (``O_NONBLOCK``): the ``OSError`` of the open (``ELOOP``, ``ENOENT``, …) is the
    caller's to word. Anything but a regular file of this user without the ``forbidden``
    mode bits raises ``refuse(problem, info)`` (:func:`ownership_problem`).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        problem = ownership_problem(info, kind="file", forbidden=forbidden)
        if problem is not None:
            raise refuse(problem, info)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_own_file(path: Path, what: str) -> bytes | None:
    """The bytes of ``path`` if it is this user's own regular file that nobody else can
    write; None when it does not exist; :class:`UntrustedPathError` otherwise."""
    try:
        fd = open_own_file(path, lambda problem, info: _untrusted(what, path, problem, info))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise UntrustedPathError(f"{what} {path} is a symlink: not following it") from None
        raise UntrustedPathError(f"{what} {path} cannot be opened: {exc.strerror}") from None
    try:
        chunks: list[bytes] = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def open_own_append(path: Path | str, refuse: Callable[[str, os.stat_result], Exception]) -> int:
    """A descriptor appending to ``path``, created 0600 when missing: a private log.

    Never through a symlink at the last component (``O_NOFOLLOW``: the ``OSError`` of the
    open, ``ELOOP``, is the caller's to word). A FIFO is opened non-blocking, so the check runs
    instead of a hang. Anything but a regular file of this user raises
    ``refuse(problem, info)`` (:func:`ownership_problem`); a file of ours with another mode
    is set to 0600.
    """
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    try:
        info = os.fstat(fd)
        problem = ownership_problem(info, kind="file", forbidden=0)  # the mode is ours to set
        if problem is not None:
            raise refuse(problem, info)
        if stat.S_IMODE(info.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
