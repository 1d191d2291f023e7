"""Which managed generation a process was launched in, from its ancestors, not its own
environment.

Why: a managed child's roster, leaf status and parent must come from what its controller
recorded at launch. The child's own environment is the child's to change: a leaf that ran
``orchestrator call agent_delegate`` with ``PI_HERDSMAN_ALLOWED_AGENT_DEFINITIONS`` widened
created agents nobody could see or close, and one that unset ``PI_HERDSMAN_MAILBOX`` answered
as the lead controller itself. What it cannot change is the environment its pane was
*started* with: Herdr gives the pane's first process the ``PI_HERDSMAN_*`` variables the
controller chose, and Linux keeps every process's initial environment in
``/proc/<pid>/environ``, which a later ``export``, ``env -u`` or ``env VAR=…`` in a
descendant does not touch.

So :func:`launched_in` walks the caller's ancestors (``/proc/<pid>/stat``'s parent id) and
returns the run id and mailbox of the **outermost** ancestor started with
``PI_HERDSMAN_RUN_ID``: the pane's own first process. Outermost, because a descendant can
start an intermediate shell with forged variables, but that shell sits inside the pane's
tree. A managed child's own agents run in panes of their own (their ancestors are Herdr's,
not the child's), so nesting never confuses two generations.

:func:`process_identity` and :func:`process_alive` read the same files for another purpose:
a launch records who launches it, so a restarted controller can tell a launch still in
progress in another process from one whose launcher was killed.

What this cannot prove (and the docs list): a process that detached itself from its pane's
tree (a double fork to ``init``) carries no lineage, and on a system without ``/proc`` no
lineage is readable; such a caller is treated as what its lineage shows, nothing, and its
environment's claim to be a managed child is refused as unprovable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from orchestrator.agent_tools.records import owner_alive, process_start

__all__ = ["PROC", "Lineage", "launched_in", "process_alive", "process_identity"]

#: where process information is read (a test points it elsewhere)
PROC = Path("/proc")
#: the longest ancestor chain walked (a loop or an absurd depth stops the walk)
_MAX_DEPTH = 256
_RUN_ID = b"PI_HERDSMAN_RUN_ID="
_MAILBOX = b"PI_HERDSMAN_MAILBOX="


@dataclass(frozen=True)
class Lineage:
    """What the caller's ancestry proves: ``readable`` (``/proc`` could be walked), and the
    run id and mailbox its pane was started with (None: not launched in a managed pane)."""

    readable: bool
    run_id: str | None = None
    mailbox: str | None = None


def _parent(pid: int, proc: Path) -> int | None:
    try:
        stat = (proc / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # ``pid (comm) state ppid …``: comm may hold spaces and parentheses, so split after
    # the last ')'
    fields = stat.rpartition(b")")[2].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def _initial_env(pid: int, proc: Path) -> Mapping[bytes, bytes]:
    try:
        raw = (proc / str(pid) / "environ").read_bytes()
    except OSError:
        return {}  # another user's process, or gone: it carries nothing for us
    out: dict[bytes, bytes] = {}
    for item in raw.split(b"\0"):
        for prefix in (_RUN_ID, _MAILBOX):
            if item.startswith(prefix):
                out[prefix] = item[len(prefix) :]
    return out


def launched_in(pid: int | None = None, *, proc: Path | None = None) -> Lineage:
    """The managed generation ``pid``'s (default: this process's) ancestors were launched in
    (module docstring). ``pid`` itself is not consulted: its environment is its own."""
    root = proc if proc is not None else PROC
    start = pid if pid is not None else os.getpid()
    if not (root / str(start) / "stat").is_file():
        return Lineage(readable=False)
    found: Mapping[bytes, bytes] = {}
    seen = {start}
    current = _parent(start, root)
    while current is not None and current > 0 and current not in seen and len(seen) < _MAX_DEPTH:
        seen.add(current)
        env = _initial_env(current, root)
        if _RUN_ID in env:
            found = env  # keep walking: the outermost one is the pane's
        current = _parent(current, root)
    run_id = found.get(_RUN_ID)
    mailbox = found.get(_MAILBOX)
    return Lineage(
        readable=True,
        run_id=run_id.decode("utf-8", "replace") if run_id else None,
        mailbox=mailbox.decode("utf-8", "surrogateescape") if mailbox else None,
    )


def process_identity(pid: int | None = None) -> dict[str, int | None]:
    """``{"pid", "start"}`` of ``pid`` (default: this process), to record who launches a
    generation; ``start`` is None where ``/proc`` is not readable."""
    own = pid if pid is not None else os.getpid()
    return {"pid": own, "start": process_start(own)}


def process_alive(identity: Mapping[str, object]) -> bool:
    """The process :func:`process_identity` described still runs (a reused pid with
    another start time is not it)."""
    pid, start = identity.get("pid"), identity.get("start")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return False
    return owner_alive(pid, start if isinstance(start, int) else None)
