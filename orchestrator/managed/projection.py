"""What ``agent_list`` shows for one generation: its ``state`` and ``available_tools``.

Why one pure function: seed 002 makes ``available_tools`` the authoritative guidance of the
current snapshot, and every later call re-derives it from fresh evidence before mutating. So
the rules live here once (the table in docs/orchestrator/managed-agents.md), fed with an
:class:`Evidence` the supervisor gathers (the durable record, the child's ``state.json``, the
mailbox, Herdr), and the service calls the same function to revalidate each operation.

Rules, in order (reference A.5, the seed winning):

* a durable result not yet delivered, or a ``result_error`` → ``settling``; a result
  delivered whose cleanup has not finished (a pane already closed, a mailbox not yet
  removed) → ``settling`` too, never ``lost``: its assignment is resolved;
* presence proven absent (the pane and the Herdr agent are gone) → ``lost``;
* presence not provable (Herdr could not be asked, the pane holds another agent, the
  child's ``state.json`` is unreadable or names another run, the mailbox is corrupt) →
  ``unknown`` with a diagnostic and no tools;
* a pending ``ask_owner`` → ``blocked`` (with reply); Herdr reporting the agent
  ``blocked`` → ``blocked`` (by Herdr: a dialog waits for someone, whatever the child's
  operation says, so neither steer nor interrupt can reach it); the child's operation
  ``working`` → ``working``; a delegating agent waiting for its own agents' results →
  ``blocked``; anything else → ``settling``.

Tools (direct owner only, in the reference's order): ``agent_inspect`` when live;
``agent_transcript`` when the session file is materialized and non-empty; ``agent_steer``
while working (no pending ask) or waiting for its own agents; ``agent_interrupt`` while a
pi operation works;
``agent_reply`` for a pending ask correlated to the assignment; ``agent_close`` when the close
preflight passes (no durable undelivered result). ``lost`` gets transcript and close only;
``unknown`` nothing.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Literal

from orchestrator.managed.store import Generation

__all__ = [
    "TOOL_ORDER",
    "AgentState",
    "Evidence",
    "Presence",
    "Projection",
    "project",
    "session_materialized",
]

AgentState = Literal["working", "blocked", "settling", "unknown", "lost"]
Presence = Literal["live", "lost", "unknown"]

TOOL_ORDER = (
    "agent_inspect",
    "agent_transcript",
    "agent_steer",
    "agent_interrupt",
    "agent_reply",
    "agent_close",
)


@dataclass(frozen=True)
class Evidence:
    """Fresh evidence about one generation.

    ``operation`` is the child's (``idle``/``working``/``asking``; None when its state file
    is absent); ``herdr_status`` is Herdr's agent status on the pane (``working``,
    ``blocked``, ``idle``, ``done``; None when unknown). ``pending_ask_id`` is the open ask
    of this assignment (None: none), ``result_pending`` a posted result not yet delivered
    (unconsumed, or persisted and undelivered).
    """

    presence: Presence
    operation: str | None = None
    herdr_status: str | None = None
    pending_ask_id: str | None = None
    pending_ask_assignment: str | None = None
    result_pending: bool = False
    diagnostic: str | None = None
    session_file: str | None = None
    #: a delegating agent waits for a result one of its own agents still owes it
    waiting_on_agents: bool = False


@dataclass(frozen=True)
class Projection:
    state: AgentState
    available_tools: tuple[str, ...]
    diagnostic: str | None = None


def session_materialized(path: str | None) -> bool:
    """The pi session file exists as a non-empty regular file (not followed if a link)."""
    if not path:
        return False
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > 0


def project(generation: Generation, evidence: Evidence, *, direct: bool = True) -> Projection:
    """The public ``state`` and ``available_tools`` of ``generation`` (module docstring)."""
    transcript = session_materialized(evidence.session_file or generation.pi_session_file)
    close_ok = not evidence.result_pending and generation.result_error is None
    herdr_blocked = evidence.herdr_status == "blocked"
    if evidence.result_pending or generation.result_error is not None:
        state: AgentState = "settling"
    elif generation.result_delivered:
        state = "settling"  # delivered; its cleanup is pending (a gone pane is not lost)
    elif evidence.presence == "lost":
        state = "lost"
    elif evidence.presence == "unknown":
        return Projection("unknown", (), evidence.diagnostic or "presence cannot be proved")
    elif evidence.pending_ask_id is not None or evidence.operation == "asking":
        state = "blocked"
    elif herdr_blocked:
        state = "blocked"  # the live Herdr runtime is blocked: it wins over the operation
    elif evidence.operation == "working":
        state = "working"
    elif evidence.waiting_on_agents:
        state = "blocked"  # progress-capable: its agents work for it
    else:
        state = "settling"
    if not direct:
        return Projection(state, (), evidence.diagnostic)
    tools: set[str] = set()
    if state == "lost" or evidence.presence == "lost":
        if transcript:
            tools.add("agent_transcript")
        if close_ok:
            tools.add("agent_close")
    else:
        tools.add("agent_inspect")
        if transcript:
            tools.add("agent_transcript")
        asking = evidence.pending_ask_id is not None
        if state == "working" and not asking:
            tools.add("agent_steer")
            tools.add("agent_interrupt")
        elif state == "blocked" and evidence.waiting_on_agents and not asking and not herdr_blocked:
            tools.add("agent_steer")  # no pi operation runs: nothing to interrupt
        if (
            asking
            and generation.request_id is not None
            and evidence.pending_ask_assignment == generation.request_id
        ):
            tools.add("agent_reply")
        if close_ok:
            tools.add("agent_close")
    return Projection(state, tuple(t for t in TOOL_ORDER if t in tools), evidence.diagnostic)
