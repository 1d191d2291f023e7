"""Safe access to files a child agent (or another local user) can tamper with.

Why: a task's artifact directory (``task.md``, ``result.md``, ``inbox.ndjson``, ``messages/``)
is written by the child agent, and a pi session file's path comes from Herdr and the agent.
Neither is trusted. Opened naively, a child could make ``result.md`` a symbolic link to any
file we can read (its text comes back in ``resultText``), make ``messages/`` a link so we
write into another directory, make ``inbox.ndjson`` a FIFO (an ``open`` blocks forever) or a
huge sparse file (read whole into memory). The rules, applied everywhere such a file is read
or written:

* **No link is followed at the last step.** Files are opened with ``O_NOFOLLOW``; a directory
  we write into is opened ``O_DIRECTORY | O_NOFOLLOW`` and every file in it is created
  relative to that descriptor (``openat``/``renameat``), so swapping the directory for a
  link between our check and our write changes nothing. The directories above the artifact
  directory are ours (the configured state/artifact root) and are taken as they are.
* **Only regular files are read.** ``O_NONBLOCK`` makes opening a FIFO return at once; an
  ``fstat`` on the descriptor then refuses anything that is not a regular file.
* **Every read is bounded.** Callers say how many bytes they accept; what is past the bound is
  reported (``truncated`` / the file's size), never loaded.
* **Writes are complete or absent.** :func:`write_all` loops until every byte is written (a
  short write on a full disk raises instead of leaving a truncated file),
  :func:`write_atomic` replaces a file only with a complete, fsynced one, and
  :func:`publish_new` creates a name once, whole (a name already there, a planted link
  included, is ``FileExistsError``).
* **A private directory is ours.** :func:`ensure_private_dir` creates missing directories
  0700 and never chmods one that exists: a directory owned by another user, or writable by
  group or others, is refused (another local user could read or plant files there). The
  rule is the project's one "ours alone" predicate,
  :func:`orchestrator.client.file_trust.ownership.ownership_problem`.

:class:`UnsafeFile` (an ``OSError``) is raised for anything refused, with a message that names
the path and the reason.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from orchestrator.client.file_trust.ownership import (
    FOREIGN_OWNER,
    NOT_DIRECTORY,
    WRITABLE,
    followable_link,
    ownership_problem,
)

__all__ = [
    "BoundedRead",
    "UnsafeFile",
    "describe_kind",
    "ensure_private_dir",
    "is_regular_file",
    "open_dir",
    "open_regular",
    "publish_new",
    "read_bounded",
    "write_all",
    "write_atomic",
]

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: a directory named by a path of ours or a parent (a link there is followed: it is ours)
_OWN_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 16


class UnsafeFile(OSError):
    """A path refused by the rules above (a link, a FIFO, another user's directory, ...)."""


def describe_kind(mode: int) -> str:
    """What a file of ``mode`` is, for a refusal: "a symbolic link", "a FIFO", "a device", …"""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a file of an unknown kind"


def _refuse_link(path: Path | str) -> UnsafeFile:
    """The error for an ``O_NOFOLLOW`` open that hit a link (``ELOOP``)."""
    return UnsafeFile(errno.ELOOP, f"{path} is a symbolic link: not followed", str(path))


def is_regular_file(path: Path | str) -> bool:
    """Whether ``path`` itself (not a link's target) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


@dataclass(frozen=True)
class BoundedRead:
    """At most ``limit`` bytes from ``offset``: ``data``, the file's ``size`` when read, and
    whether bytes past the bound were left unread (``truncated``)."""

    data: bytes
    size: int
    offset: int

    @property
    def truncated(self) -> bool:
        return self.offset + len(self.data) < self.size


def open_regular(path: Path | str, *, follow: bool = False) -> int:
    """A read-only descriptor of the regular file ``path``, checked on the descriptor.

    Never blocking on a FIFO (``O_NONBLOCK``); a link at the last component is refused
    (:class:`UnsafeFile`, ``ELOOP``) unless ``follow`` (a path a user named on purpose, as
    pi follows an extension path). ``FileNotFoundError`` when it is missing, and
    :class:`UnsafeFile` (``EINVAL``) when it is not a regular file.
    """
    try:
        fd = os.open(path, _READ_FLAGS & ~os.O_NOFOLLOW if follow else _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse_link(path) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UnsafeFile(
            errno.EINVAL, f"{path} is {describe_kind(mode)}, not a regular file", str(path)
        )
    return fd


def read_bounded(
    path: Path | str, limit: int, *, offset: int = 0, tail: bool = False, follow: bool = False
) -> BoundedRead:
    """Read at most ``limit`` bytes of the regular file ``path`` from ``offset`` (with
    ``tail``: its last ``limit`` bytes; ``offset`` then says where they start). A link at the
    last component is refused unless ``follow`` (see :func:`open_regular`).

    Raises ``FileNotFoundError`` when it is missing and :class:`UnsafeFile` when ``path`` is
    a symbolic link, a FIFO, a directory or anything else that is not a regular file. An
    ``offset`` past the end reads nothing (``size`` says where the end is).
    """
    fd = open_regular(path, follow=follow)
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - limit) if tail else max(0, min(offset, size))
        want = max(0, min(limit, size - start))
        chunks: list[bytes] = []
        got = 0
        while got < want:
            chunk = os.pread(fd, min(_CHUNK, want - got), start + got)
            if not chunk:
                break  # truncated while we read: what we have is all there is
            chunks.append(chunk)
            got += len(chunk)
        return BoundedRead(b"".join(chunks), size, start)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``; a write that makes no progress raises
    ``OSError(ENOSPC)`` (a full disk must never leave a silently truncated file)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, "short write: no space left on device")
        view = view[written:]


@contextlib.contextmanager
def open_dir(path: Path | str, *, create: bool = False, mode: int = 0o700) -> Iterator[int]:
    """A descriptor of the directory ``path``, whose last component must not be a link.

    With ``create``, a missing ``path`` is made (``mode``) relative to its opened parent; the
    parent's own ancestors are created when missing. Files are then created relative to the
    descriptor (``dir_fd=``), so the directory cannot be swapped for a link under us.
    """
    target = Path(path)
    parent, name = target.parent, target.name
    if create:
        _make_missing(parent)
    parent_fd = os.open(parent, _OWN_DIR_FLAGS)
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, mode, dir_fd=parent_fd)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            # O_DIRECTORY|O_NOFOLLOW on a link fails ENOTDIR on Linux: say which it was
            mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
            raise UnsafeFile(
                exc.errno,
                f"{target} is {describe_kind(mode)}, not a directory: not used",
                str(target),
            ) from None
    finally:
        os.close(parent_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def _write_temp(dir_fd: int, name: str, data: bytes, mode: int, *, sync: bool) -> str:
    """A new hidden temp file beside ``name`` in ``dir_fd`` holding ``data``, written whole
    and fsynced unless not ``sync`` (removed again when that fails): the first half of every
    complete write."""
    temp = f".{name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temp, _NEW_FILE_FLAGS, mode, dir_fd=dir_fd)
    try:
        try:
            os.fchmod(fd, mode)  # exactly ``mode``, whatever the umask (0755 for a launcher)
            write_all(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    return temp


def write_atomic(
    path: Path | str,
    data: bytes | str,
    *,
    mode: int = 0o600,
    create_parent: bool = True,
    sync: bool = True,
    sync_dir: bool = False,
    own_link_parent: bool = False,
) -> Path:
    """Replace ``path`` with ``data`` atomically: a complete temp file renamed over it inside
    the link-checked parent directory (created 0700 if missing, unless ``create_parent`` is
    false: then a missing parent raises ``FileNotFoundError``). A reader (the agent) never
    sees half a file; a link at ``path`` is replaced, never written through.

    Durability is the caller's choice: the temp file is fsynced before the rename unless not
    ``sync`` (a power cut may then lose the newest version, never leave half of one), and
    with ``sync_dir`` the directory is fsynced after it (the new name survives a power cut).

    The parent directory must not be a link, unless ``own_link_parent``: a directory the user
    named (a config directory linked to their dotfiles) may be a link of theirs or root's,
    which is then resolved first; another user's link is :class:`UnsafeFile`.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if own_link_parent:
        target = _through_own_link(target.parent) / target.name
    with open_dir(target.parent, create=create_parent) as dir_fd:
        temp = _write_temp(dir_fd, target.name, payload, mode, sync=sync)
        try:
            os.replace(temp, target.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise
        if sync_dir:
            os.fsync(dir_fd)
    return target


def _through_own_link(directory: Path) -> Path:
    """``directory``, resolved when it is a link of this user's or root's (as it is when it
    is not a link, or missing); another user's link is refused."""
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return directory
    if not stat.S_ISLNK(info.st_mode):
        return directory
    if not followable_link(info):
        raise UnsafeFile(
            errno.EPERM,
            f"{directory} is a symbolic link owned by uid {info.st_uid}: not followed",
            str(directory),
        )
    return Path(os.path.realpath(directory))


def publish_new(
    directory: int | Path, name: str, data: bytes, *, mode: int = 0o600, sync: bool = True
) -> None:
    """Create ``name`` in ``directory`` (a descriptor, or a path of ours: opened as it is)
    holding ``data``, complete or absent.

    ``data`` goes to a private temp file that is then *linked* to ``name``: the link fails
    (``FileExistsError``) when anything is at ``name`` already, a planted symlink included
    (it is never followed), so a first writer wins and a crash or a concurrent reader never
    meets half a file. The temp file is fsynced before the link and the directory once the
    name is there, unless not ``sync`` (a name nobody needs after a power cut: a reservation,
    a file for an editor); the temp name is always removed.
    """
    if not isinstance(directory, int):
        fd = os.open(directory, _OWN_DIR_FLAGS)
        try:
            publish_new(fd, name, data, mode=mode, sync=sync)
        finally:
            os.close(fd)
        return
    dir_fd = directory
    temp = _write_temp(dir_fd, name, data, mode, sync=sync)
    try:
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        if sync:
            os.fsync(dir_fd)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)


def _make_missing(path: Path) -> bool:
    """Create ``path`` and its missing ancestors, each 0700 (``Path.mkdir(parents=True)``
    would leave the ancestors at the umask's mode); whether ``path`` itself was created."""
    missing: list[Path] = []
    current = path
    while not (current.is_symlink() or current.exists()):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    created = False
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            created = False  # a concurrent creator won: theirs is checked like any other
        else:
            created = directory == path
    return created


def ensure_private_dir(path: Path | str) -> Path:
    """``path`` as a directory only we can use: created 0700 (with any missing parents) when
    absent; when present, refused unless it is ours and not writable by group or others.

    An existing directory is never chmodded: one we did not create may be shared on purpose
    (a 1777 ``/tmp``), and tightening it would break its other users, while using it would
    let them read or plant our records. A symbolic link at ``path`` is followed only when we
    own it (a link planted by another user is refused).
    """
    target = Path(path)
    if _make_missing(target):
        return target
    me = os.geteuid()
    link = os.lstat(target)
    if not followable_link(link):
        raise UnsafeFile(
            errno.EPERM,
            f"{target} is a symbolic link owned by uid {link.st_uid}, not by you (uid {me}): "
            "not followed; choose a directory of your own",
            str(target),
        )
    info = target.stat()
    problem = ownership_problem(info, kind="directory")
    if problem == NOT_DIRECTORY:
        raise UnsafeFile(errno.ENOTDIR, f"{target} exists and is not a directory", str(target))
    if problem == FOREIGN_OWNER:
        raise UnsafeFile(
            errno.EPERM,
            f"{target} is owned by uid {info.st_uid}, not by you (uid {me}): another local "
            "user could read or replace the orchestrator's files there; choose a directory "
            "of your own (it is created 0700 when missing)",
            str(target),
        )
    if problem == WRITABLE:
        raise UnsafeFile(
            errno.EPERM,
            f"{target} is writable by group or others (mode {stat.S_IMODE(info.st_mode):04o}): "
            "other users could plant files there; use a private directory or run "
            f"`chmod go-w {target}` yourself",
            str(target),
        )
    return target
