"""The ``PATH`` a Herdr pane started with: what an agent spawned in a pane will search.

Why: Herdr starts an agent in a pane whose environment is the Herdr server's (plus Herdr's own
variables), not the environment of this process, which an MCP host often starts with a
shorter ``PATH``. A doctor that looked only at its own ``PATH`` warned that ``pi`` was missing
while every spawn found it (the simulator puts its fake agents on the panes' ``PATH`` alone),
and would say nothing useful the other way round. So the doctor asks Herdr for a pane's shell
(``pane.process_info``: its ``shell_pid``) and reads that process's initial environment from
``/proc/<pid>/environ`` — its own pane first when it runs inside Herdr (``HERDR_PANE_ID``),
else the first pane Herdr lists. Nothing is created or changed.

The reading is trusted only when it proves to be that pane of that server: the environment
must hold ``HERDR_PANE_ID`` equal to the pane asked about and ``HERDR_SOCKET_PATH`` naming the
same socket (a pid of another machine's Herdr, over a saved SSH machine, names a different
process here, or none). Only ``PATH`` is kept; the rest of the environment (which may hold
secrets) is never returned or logged. When no pane can be read, :class:`PanePath` says why, so
the doctor reports what it checked and what it could not.

A shell's startup files may still add to ``PATH`` after the environment was read, so a binary
missing from the pane's initial ``PATH`` is a warning, never a failure.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from orchestrator.client.errors import ClientError
from orchestrator.client.sync import HerdrClient

__all__ = ["ENVIRON_LIMIT", "PanePath", "pane_path"]

#: The largest ``/proc/<pid>/environ`` read (Linux caps an environment well below this).
ENVIRON_LIMIT = 1024 * 1024
#: Panes looked at before giving up (each costs one ``pane.process_info``).
_MAX_PANES = 3


@dataclass(frozen=True)
class PanePath:
    """A pane's initial ``PATH`` (``path``, from pane ``pane_id``), or why none was read."""

    path: str | None
    pane_id: str | None
    #: when ``path`` is None: what was tried and why it failed
    reason: str = ""


def _environ(pid: int) -> dict[str, str] | None:
    """The process's initial environment, or None when it cannot be read (gone, another
    user's, no ``/proc``)."""
    # not safe_fs.read_bounded: a /proc file reports size 0, and its text is made as it is read
    try:
        fd = os.open(f"/proc/{pid}/environ", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= ENVIRON_LIMIT:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    if size > ENVIRON_LIMIT:
        return None
    found: dict[str, str] = {}
    for entry in b"".join(chunks).decode("utf-8", "surrogateescape").split("\0"):
        name, equals, value = entry.partition("=")
        if equals:
            found[name] = value
    return found


def _same_socket(a: str | None, b: str) -> bool:
    return a is not None and os.path.realpath(a) == os.path.realpath(b)


def pane_path(client: HerdrClient | None, env: Mapping[str, str], socket_path: str) -> PanePath:
    """The initial ``PATH`` of a pane of the Herdr at ``socket_path`` (see the module
    docstring); never raises."""
    if client is None:
        return PanePath(None, None, "no Herdr client")
    own = env.get("HERDR_PANE_ID", "").strip()
    try:
        listed = [p.pane_id for p in client.pane_list()]
    except ClientError as exc:
        return PanePath(None, None, f"Herdr did not list its panes ({exc})")
    candidates = list(dict.fromkeys([own, *listed] if own in listed else listed))
    if not candidates:
        return PanePath(None, None, "Herdr has no pane to look at")
    tried: list[str] = []
    for pane_id in candidates[:_MAX_PANES]:
        try:
            info = client.pane_process_info(pane_id)
        except ClientError:
            tried.append(f"{pane_id}: no process info")
            continue
        pid = info.get("shell_pid")
        environ = _environ(pid) if isinstance(pid, int) and pid > 0 else None
        if environ is None:
            tried.append(f"{pane_id}: its shell's environment is not readable here")
        elif environ.get("HERDR_PANE_ID") != pane_id or not _same_socket(
            environ.get("HERDR_SOCKET_PATH"), socket_path
        ):
            tried.append(f"{pane_id}: its shell pid is not that pane's process on this machine")
        else:
            return PanePath(environ.get("PATH", ""), pane_id)
    return PanePath(None, None, "; ".join(tried))
