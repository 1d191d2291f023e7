"""Read-only views of Linux ``/proc`` for pane process inspection.

The simulator needs to know which processes belong to a pane (to end the whole
tree on close, and to find the foreground program for agent detection) and what
a process's cwd is.  All of that is in ``/proc``.  Processes can vanish between
listing ``/proc`` and reading their files, so every reader here treats a
missing or unreadable entry as "gone" (``None`` or a skipped entry) instead of
raising.  Nothing in this module writes or signals anything.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ProcInfo",
    "all_processes",
    "boot_ticks",
    "carries_mark",
    "children_of",
    "cwd_of",
    "descendants",
    "foreground_processes",
    "group_members_under",
    "is_zombie",
    "marked_pids",
    "proc_info",
    "session_members",
    "session_tree",
    "session_tree_walked",
    "start_ticks",
]

_PROC = Path("/proc")


@dataclass(frozen=True)
class ProcInfo:
    """One process as seen in ``/proc`` at a single moment.

    ``name`` is the kernel's ``comm`` (at most 15 bytes, may contain spaces or
    parentheses).  ``argv`` is ``None`` when the command line is empty, as it
    is for zombies and kernel threads; ``cwd`` is ``None`` when it cannot be
    read (another user's process, or a zombie).  ``state`` is the one-letter
    state from ``stat`` (``R``, ``S``, ``Z``, ...).
    """

    pid: int
    ppid: int
    pgid: int
    sid: int
    tpgid: int
    name: str
    argv: tuple[str, ...] | None
    cwd: str | None
    state: str


@dataclass(frozen=True)
class _Stat:
    """The fields of ``/proc/PID/stat`` that the selectors filter on."""

    pid: int
    name: str
    state: str
    ppid: int
    pgid: int
    sid: int
    tpgid: int
    start: int = 0
    """When the process started, in clock ticks since boot (:func:`boot_ticks`); 0 unknown."""


def _parse_stat(pid: int, raw: bytes) -> _Stat | None:
    """Parse a ``stat`` line, whose ``comm`` may hold spaces and ``)``.

    ``comm`` is enclosed in parentheses but not escaped, so the only reliable
    delimiter is the *last* ``)`` in the line: every field after it is numeric
    or a single state letter.
    """
    open_paren = raw.find(b"(")
    close_paren = raw.rfind(b")")
    if open_paren < 0 or close_paren < open_paren:
        return None
    fields = raw[close_paren + 2 :].split()
    if len(fields) < 6:
        return None
    try:
        return _Stat(
            pid=pid,
            name=os.fsdecode(raw[open_paren + 1 : close_paren]),
            state=fields[0].decode("ascii", "replace"),
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            sid=int(fields[3]),
            tpgid=int(fields[5]),
            start=int(fields[19]) if len(fields) > 19 else 0,
        )
    except ValueError:
        return None


def _read_bytes(path: str) -> bytes:
    """A whole ``/proc`` file, read with plain ``open`` (a scan reads hundreds: ``pathlib``'s
    object building per read was most of a scan's cost)."""
    with open(path, "rb") as handle:  # noqa: PTH123 - a /proc scan: pathlib doubles its cost
        return handle.read()


def _read_stat(pid: int) -> _Stat | None:
    try:
        raw = _read_bytes(f"{_PROC}/{pid}/stat")
    except OSError:  # gone (ENOENT/ESRCH) or hidden (EACCES): treated alike
        return None
    return _parse_stat(pid, raw)


def _read_argv(pid: int) -> tuple[str, ...] | None:
    try:
        raw = _read_bytes(f"{_PROC}/{pid}/cmdline")
    except OSError:
        return None
    if not raw:
        return None
    # Arguments are NUL-terminated; a process that rewrote its title may have
    # dropped the final NUL, so strip at most one before splitting.
    if raw.endswith(b"\0"):
        raw = raw[:-1]
    return tuple(os.fsdecode(part) for part in raw.split(b"\0"))


def cwd_of(pid: int) -> str | None:
    """The process's current directory, or ``None`` if it cannot be read.

    A deleted directory reads as ``"/path (deleted)"`` from the kernel; that is
    returned as is, since callers only display or compare it.
    """
    try:
        return os.readlink(f"{_PROC}/{pid}/cwd")  # noqa: PTH115 - a /proc scan: pathlib doubles its cost
    except OSError:
        return None


def _complete(stat: _Stat) -> ProcInfo:
    """Add the costlier fields (two more reads) to a parsed ``stat``."""
    return ProcInfo(
        pid=stat.pid,
        ppid=stat.ppid,
        pgid=stat.pgid,
        sid=stat.sid,
        tpgid=stat.tpgid,
        name=stat.name,
        argv=_read_argv(stat.pid),
        cwd=cwd_of(stat.pid),
        state=stat.state,
    )


def proc_info(pid: int) -> ProcInfo | None:
    """A snapshot of one process, or ``None`` if it does not exist (any more)."""
    if pid <= 0:
        return None
    stat = _read_stat(pid)
    return None if stat is None else _complete(stat)


def _pids() -> Iterator[int]:
    try:
        names = os.listdir(_PROC)  # noqa: PTH208 - a /proc scan: pathlib doubles its cost
    except OSError:
        return
    for name in names:
        if name.isdigit():
            yield int(name)


def _stats() -> list[_Stat]:
    """``stat`` of every visible process, skipping those that vanish mid-scan."""
    return [stat for pid in _pids() if (stat := _read_stat(pid)) is not None]


def _select(keep: Callable[[_Stat], bool]) -> list[ProcInfo]:
    """Full snapshots of the processes ``keep`` accepts, sorted by pid.

    Filtering on the cheap ``stat`` fields first keeps a scan over hundreds of
    unrelated processes to one read each.
    """
    chosen = sorted((s for s in _stats() if keep(s)), key=lambda s: s.pid)
    return [_complete(stat) for stat in chosen]


def all_processes() -> list[ProcInfo]:
    """Every process visible in ``/proc``, sorted by pid."""
    return _select(lambda _stat: True)


def session_members(sid: int) -> list[ProcInfo]:
    """Every process whose session id is ``sid`` (zombies included)."""
    return _select(lambda stat: stat.sid == sid)


def descendants(pid: int) -> list[ProcInfo]:
    """Children, grandchildren, ... of ``pid`` (not ``pid`` itself), by pid.

    This follows the parent links as they are *now*: a process whose parent
    already exited has been re-parented (to init or a subreaper) and is no
    longer found from here.  The tree is walked through the kernel's
    ``/proc/PID/task/TID/children`` lists, so the cost grows with the tree, not
    with every process on the machine (agent detection probes a pane's tree on
    its first output); a kernel without those lists is scanned whole instead.
    """
    walked = _walk_children(pid)
    if walked is None:
        children: dict[int, list[int]] = {}
        stats = _stats()
        for stat in stats:
            children.setdefault(stat.ppid, []).append(stat.pid)
        found: set[int] = set()
        stack = [pid]
        while stack:
            for child in children.get(stack.pop(), ()):
                if child not in found and child != pid:
                    found.add(child)
                    stack.append(child)
        chosen = sorted((s for s in stats if s.pid in found), key=lambda s: s.pid)
        return [_complete(stat) for stat in chosen]
    infos = [info for child in sorted(walked) if (info := proc_info(child)) is not None]
    # a pid recycled mid-walk is not ours: keep only processes whose parent was found too
    kept = {pid, *(info.pid for info in infos)}
    return [info for info in infos if info.ppid in kept]


def _children_of(pid: int) -> list[int] | None:
    """The children of every thread of ``pid`` (``[]`` when it is gone); None when this
    kernel keeps no ``children`` lists (``CONFIG_PROC_CHILDREN``)."""
    tasks_dir = f"{_PROC}/{pid}/task"
    try:
        tasks = os.listdir(tasks_dir)  # noqa: PTH208 - a /proc scan: pathlib doubles its cost
    except OSError:
        gone = _PROC.is_dir() and not (_PROC / str(pid)).is_dir()
        return [] if gone else None
    found: list[int] = []
    for tid in tasks:
        try:
            raw = _read_bytes(f"{tasks_dir}/{tid}/children")
        except FileNotFoundError:
            if Path(tasks_dir, tid).is_dir():
                return None  # the thread is there, its list is not: no such lists here
            continue  # the thread ended meanwhile
        except OSError:
            continue
        found.extend(int(part) for part in raw.split())
    return found


def _walk_children(pid: int) -> set[int] | None:
    """Every descendant of ``pid`` through the ``children`` lists; None without them."""
    found: set[int] = set()
    stack = [pid]
    while stack:
        children = _children_of(stack.pop())
        if children is None:
            return None
        for child in children:
            if child not in found and child != pid:
                found.add(child)
                stack.append(child)
    return found


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot, ``stat`` field 22): with the pid it
    names one process for good, since a recycled pid starts later. None if gone."""
    try:
        raw = _read_bytes(f"{_PROC}/{pid}/stat")
        return int(raw[raw.rfind(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _environ_entries(pid: int) -> list[bytes] | None:
    """The environment ``pid`` was started with, for a process of this user only."""
    directory = f"{_PROC}/{pid}"
    try:
        if os.stat(directory).st_uid != os.geteuid():  # noqa: PTH116 - a /proc scan: pathlib doubles its cost
            return None
        raw = _read_bytes(f"{directory}/environ")
    except OSError:
        return None
    return raw.split(b"\0")


def carries_mark(pid: int, entry: str, *, exact: bool = False) -> bool:
    """Whether ``pid`` (a process of this user) was started with ``entry`` (``NAME=VALUE``,
    or, unless ``exact``, a prefix of it ending the value early) in its environment.

    A pane's own mark is matched ``exact``: ``MARK=token:1`` is a prefix of pane 12's
    ``MARK=token:12``, and closing pane 1 used to end panes 10 to 19 with it."""
    wanted = os.fsencode(entry)
    entries = _environ_entries(pid)
    if entries is None:
        return False
    if exact:
        return wanted in entries
    return any(item.startswith(wanted) for item in entries)


def boot_ticks() -> int:
    """Now, in the unit of a process's start time in ``/proc/PID/stat`` (clock ticks since
    boot)."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def marked_pids(
    entry: str, *, exact: bool = False, since: int | None = None, under: int | None = None
) -> list[int]:
    """Live processes of this user whose environment holds ``entry`` (see
    :func:`carries_mark`), by pid: how a pane's processes are found after they left its
    session and lost their parent (``setsid``, ``nohup``, a double fork).

    ``since`` (:func:`boot_ticks`): only processes started then or later are looked at. A
    mark made at that time cannot be in an older process's environment, and reading every
    environment on the machine (hundreds, on a busy one) was most of a simulator's stop.

    ``under``: only the descendants of that process, walked through the ``children`` lists
    (every process on the machine where this kernel keeps none). For a caller that was the
    child subreaper of every process that could carry the mark since before it started one:
    each of them is below it, its orphans having come back to it. (Reading every process's
    ``stat`` at each simulator's stop was 9 s of the test suite's CPU.)"""
    walked = _walk_children(under) if under is not None else None
    if walked is None:
        stats = _stats()
    else:
        stats = [stat for pid in walked if (stat := _read_stat(pid)) is not None]
    return [
        stat.pid
        for stat in sorted(stats, key=lambda s: s.pid)
        if stat.state != "Z"
        and (since is None or not stat.start or stat.start >= since)
        and carries_mark(stat.pid, entry, exact=exact)
    ]


def session_tree(sid: int, *, roots: Iterable[int] = ()) -> list[ProcInfo]:
    """Members of session ``sid``, ``roots``, and all their descendants, in one scan.

    A child that called ``setsid`` has left the session but is still a
    descendant while its parent lives; ending a pane must find it too.
    ``roots`` lets a caller keep following processes it found earlier even if
    they have left the session since.  Roots that no longer exist are ignored.
    """
    stats = _stats()
    children: dict[int, list[int]] = {}
    for stat in stats:
        children.setdefault(stat.ppid, []).append(stat.pid)
    present = {stat.pid for stat in stats}
    found = {stat.pid for stat in stats if stat.sid == sid}
    found.update(pid for pid in roots if pid in present)
    stack = list(found)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return [_complete(stat) for stat in sorted(stats, key=lambda s: s.pid) if stat.pid in found]


def session_tree_walked(
    sid: int,
    *,
    reaper: int,
    roots: Iterable[int] = (),
    mark: str | None = None,
    skip: Container[int] = (),
) -> list[ProcInfo] | None:
    """:func:`session_tree` plus the processes carrying ``mark`` exactly (:func:`carries_mark`),
    found by walking trees instead of reading every process on the machine; None when this
    kernel keeps no ``children`` lists.

    For a caller that is the child subreaper (``reaper``, this process) of every process of
    the session since before its leader started: a process whose parent exited came back to
    it, so each member of the session, and each process that carries the mark, is under the
    leader ``sid``, under a root, or under one of ``reaper``'s children that is in the
    session or carries the mark; children in ``skip`` (other sessions' leaders the caller
    knows, such as the other panes' shells) are not read. Roots that no longer exist are
    ignored. (Issue 17: closing a pane scanned the whole process table, and every process's
    environment, several times; with a hundred agents that blocked the simulator's loop for
    seconds. Reading every pane shell's environment instead was still a fifth of it.)
    """
    adopted = _children_of(reaper)
    if adopted is None:
        return None
    starts = {sid, *roots}
    for child in adopted:
        if child in skip and child != sid:
            continue
        stat = _read_stat(child)
        if stat is None:
            continue
        if stat.sid == sid or (mark is not None and carries_mark(child, mark, exact=True)):
            starts.add(child)
    found: set[int] = set()
    for root in starts:
        if root <= 0 or root == reaper or _read_stat(root) is None:
            continue
        walked = _walk_children(root)
        if walked is None:
            return None
        found.add(root)
        found.update(walked)
    infos = [info for pid in sorted(found) if (info := proc_info(pid)) is not None]
    # a pid recycled mid-walk is not ours: keep the starts and processes whose parent was found
    return [info for info in infos if info.pid in starts or info.ppid in found]


def foreground_processes(pgid: int) -> list[ProcInfo]:
    """Live (non-zombie) members of process group ``pgid``, sorted by pid.

    Callers pass the terminal's foreground group (``tcgetpgrp``) to learn what
    is running in a pane; a zombie is not running anything, so it is left out.
    """
    return _select(lambda stat: stat.pgid == pgid and stat.state != "Z")


def group_members_under(pgid: int, roots: Iterable[int]) -> list[ProcInfo] | None:
    """:func:`foreground_processes` of ``pgid`` among ``roots`` and their descendants, walked
    through the ``children`` lists (no scan of every process); None when this kernel keeps
    no such lists. The caller vouches that every member of the group is in that forest (a
    pane's session under a subreaper: ``pane.process_info``)."""
    found: set[int] = set()
    for root in {root for root in roots if root > 0}:
        walked = _walk_children(root)
        if walked is None:
            return None
        found.add(root)
        found.update(walked)
    members = [info for pid in sorted(found) if (info := proc_info(pid)) is not None]
    return [info for info in members if info.pgid == pgid and info.state != "Z"]


def children_of(pid: int) -> list[int] | None:
    """The direct children of ``pid`` (every thread's); None when this kernel keeps no
    ``children`` lists."""
    return _children_of(pid)


def is_zombie(pid: int) -> bool:
    """True if ``pid`` has exited but has not been reaped yet."""
    stat = _read_stat(pid)
    return stat is not None and stat.state == "Z"
