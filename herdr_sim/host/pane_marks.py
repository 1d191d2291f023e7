"""Every process a pane starts carries the pane's mark, so none is left behind.

Closing a pane or stopping the server ends every process the pane started
(docs/simulator/overview.md). A daemon started with ``setsid``/``nohup`` or a double fork
leaves the pane's session, and once its parent exits it is no longer below the shell
either: neither the session nor the process tree leads to it. What it keeps is the
environment it was started with, so each pane's processes inherit
``HERDR_SIM_PANE_MARK=<server token>:<pane key>`` and ending a pane ends every process of
this user carrying its mark (:class:`herdr_sim.host.pty.PtyProcess.mark`).

A server killed with SIGKILL cleans nothing up. Its token is therefore recorded beside its
socket (``<stem>.processes``, a 0600 file of this user) while it runs and removed when it
stops; the next server on that socket, or the next test run reclaiming a dead run's
directory (:func:`reclaim`), ends whatever still carries the dead server's token. Only a
registry that is this user's own file is read (:mod:`orchestrator.client.file_trust.ownership`),
and only this user's processes are signalled.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import select
import signal
from pathlib import Path

from orchestrator.client.file_trust.ownership import UntrustedPathError, read_own_file
from orchestrator.client.file_trust.private_files import write_atomic
from orchestrator.client.poll import Deadline

from . import procfs

__all__ = ["MARK_VARIABLE", "PaneMarks", "end_marked", "reclaim", "registry_file"]

log = logging.getLogger(__name__)

#: the environment variable every pane process inherits (never one of Herdr's ``HERDR_*``)
MARK_VARIABLE = "HERDR_SIM_PANE_MARK"


def registry_file(socket_path: Path) -> Path:
    """``<stem>.processes`` beside the socket (as ``session.json`` is kept beside it)."""
    return socket_path.with_name(f"{socket_path.stem}.processes")


class PaneMarks:
    """One server's marks: a random token, one mark per pane, the registry beside the socket."""

    def __init__(self, socket_path: Path) -> None:
        self.token = secrets.token_hex(8)
        self.registry = registry_file(socket_path)
        #: when the token was made, a second early (:func:`procfs.boot_ticks`): no process
        #: older than that carries it, so ending this server's processes skips them
        self.since = procfs.boot_ticks() - os.sysconf("SC_CLK_TCK")
        #: every pane so far started while this process was their child subreaper: all
        #: that carries one of this server's marks is below it (:meth:`end_escaped`)
        self.all_adopted = True

    def value(self, key: int) -> str:
        """The mark of pane ``key`` (the variable's value)."""
        return f"{self.token}:{key}"

    def entry(self, key: int) -> str:
        """``NAME=VALUE`` as it appears in the environment of the pane's processes."""
        return f"{MARK_VARIABLE}={self.value(key)}"

    def end_escaped(self) -> int:
        """SIGKILL whatever still carries one of this server's marks (a stop's last sweep,
        after the panes were ended); this process's tree is walked when it was the child
        subreaper of every pane, every process on the machine is read otherwise."""
        under = os.getpid() if self.all_adopted else None
        return end_marked(f"{MARK_VARIABLE}={self.token}:", since=self.since, under=under)

    def register(self) -> None:
        """End what a dead server on this socket left running, then record this server."""
        reclaim(self.registry)
        data = json.dumps({"token": self.token, "pid": os.getpid()})
        write_atomic(self.registry, data, sync=False, own_link_parent=True)  # lost with the panes

    def unregister(self) -> None:
        """Forget this server (after its panes were ended): nothing is left to reclaim."""
        with contextlib.suppress(OSError, UntrustedPathError):
            raw = read_own_file(self.registry, "process registry")
            if raw is not None and json.loads(raw).get("token") == self.token:
                self.registry.unlink()


def reclaim(registry: Path) -> int:
    """End the processes of the dead server recorded in ``registry`` and remove it.

    Returns how many were ended. A registry of a server that is still running (its pid
    alive) is left alone, as is one that is not this user's own file.
    """
    try:
        raw = read_own_file(registry, "process registry")
    except UntrustedPathError as exc:
        log.warning("not reclaiming pane processes: %s", exc)
        return 0
    if raw is None:
        return 0
    try:
        data = json.loads(raw)
        token, pid = str(data["token"]), int(data["pid"])
    except (ValueError, KeyError, TypeError):
        registry.unlink(missing_ok=True)
        return 0
    if pid != os.getpid() and _alive(pid):
        return 0
    ended = end_marked(f"{MARK_VARIABLE}={token}:")
    registry.unlink(missing_ok=True)
    return ended


def _alive(pid: int) -> bool:
    info = procfs.proc_info(pid)
    return info is not None and info.state != "Z"


def end_marked(
    entry: str, timeout: float = 3.0, *, since: int | None = None, under: int | None = None
) -> int:
    """SIGKILL every process of this user whose environment holds ``entry`` (a mark or a
    token prefix), reaping those that are our children; how many were signalled. ``since``:
    only processes started then or later; ``under``: only descendants of that process, for
    its child subreaper (:func:`procfs.marked_pids`)."""
    pidfds: list[int] = []
    for pid in procfs.marked_pids(entry, since=since, under=under):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            continue
        # The pid may have been recycled between the scan and the open: check again.
        if not procfs.carries_mark(pid, entry):
            os.close(pidfd)
            continue
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        pidfds.append(pidfd)
    # Wait (bounded) for each to exit, then reap the ones that are our children
    # (orphans come back to a subreaper): a pidfd turns readable when its process exits.
    poller = select.poll()
    for pidfd in pidfds:
        poller.register(pidfd, select.POLLIN)
    waiting, deadline = set(pidfds), Deadline(timeout)
    while waiting and (left := deadline.left()) > 0:
        for pidfd, _ in poller.poll(left * 1000):
            waiting.discard(pidfd)
            poller.unregister(pidfd)
    for pidfd in pidfds:
        with contextlib.suppress(OSError):
            os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG)
        os.close(pidfd)
    return len(pidfds)
