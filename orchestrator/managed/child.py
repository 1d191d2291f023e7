"""The managed child's protocol brain: the mailbox rules of a pi child, written once.

Why: two drivers run a managed child — the project's fake pi (in-process) and the TypeScript
pi extension (through the JSON-lines bridge :mod:`orchestrator.managed.child_cli`). If each
implemented the protocol, they would drift; so the rules live here, event-driven, knowing
nothing of pi's internals. The driver tells :class:`ManagedChild` what pi does (a turn
starts or ends, a tool starts or ends, the session file appears) and asks it what to do
next (:meth:`ManagedChild.poll` answers :class:`Action` s); the brain reads and consumes the
mailbox, posts the ask and the result, and keeps ``state.json`` current.

The rules (docs/orchestrator/managed-agents.md, "Mailbox protocol V4"):

* **Consumption is the acknowledgement.** :meth:`poll` hands each pending ``to-child``
  record to the driver in ``seq`` order and consumes it at once. A ``task`` is taken only
  while idle with no assignment (else it stays pending).
* **steer** is queued in pi for its next steering boundary (never cancels); while nothing
  runs it starts a turn instead. **interrupt** aborts the running operation (pi's native
  abort), drops the steers still queued, and starts a new turn of the same assignment; the
  aborted turn's end posts nothing. **reply** answers the pending ask with a new turn.
* **ask_owner** (:meth:`ask`) posts one ``ask`` and the turn ends ``asking``; refused while
  another ask is open, while a control is still unconsumed or queued, or without an
  assignment.
* **A delegating child waits for its agents.** A turn that ends while one of the agents it
  delegated still owes it a result posts nothing (the child stays ``idle`` with its
  assignment); the delivered result starts the next turn.
* **The result.** A turn that ends with an assignment, no pending ask, no aborted turn and no
  control waiting posts exactly one ``result``: ``completed`` with the last assistant text,
  ``failed`` with ``empty_result: …`` when there is none (``result_too_large: …`` when it
  cannot fit a record). The mailbox refuses a second result; the post is checked under the
  mailbox lock against controls the owner posted meanwhile (those start the next turn).
* **Activity.** ``lastActivityAt`` is touched at turn and tool starts and ends; an
  activity-only change is written at most once per 5 s of the injected clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from orchestrator.managed.child_state import ChildState, Operation, write_state
from orchestrator.managed.clock import Clock, SystemClock
from orchestrator.managed.delegation import outstanding, state_dir_of
from orchestrator.managed.env import ChildIdentity
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.mailbox import (
    RESULT_LIMIT_BYTES,
    Box,
    Kind,
    Mailbox,
    MailboxError,
    Message,
)
from orchestrator.managed.store import GENERATIONS_DIR, MANAGED_DIR, ManagedStore

__all__ = ["ACTIVITY_THROTTLE_S", "Action", "ManagedChild"]

#: at most one activity-only ``state.json`` write per this many seconds
ACTIVITY_THROTTLE_S = 5.0
#: the result text that still fits a result record (the record's own fields take the rest)
RESULT_TEXT_LIMIT_BYTES = RESULT_LIMIT_BYTES - (64 << 10)

ActionKind = Literal["start_turn", "steer", "abort_and_start"]


@dataclass(frozen=True)
class Action:
    """What the driver does for one consumed record: ``start_turn`` (a new user message),
    ``steer`` (pi's steering queue) or ``abort_and_start`` (pi's native abort, then a new
    turn with the text). ``request_id`` is the record's id (for the marker)."""

    do: ActionKind
    text: str
    request_id: str

    def to_json(self) -> dict[str, Any]:
        return {"do": self.do, "text": self.text, "id": self.request_id}


def _busy(message: str, operation: str) -> MailboxError:
    return MailboxError("agent_busy", f"Agent cannot ask its owner: {message}", operation=operation)


class ManagedChild:
    """One managed child generation's protocol state; thread-safe (one lock).

    Call :meth:`hello` first. The driver then calls :meth:`poll` often (the fake pi every
    50 ms, the extension every 250 ms) and reports pi's events: :meth:`turn_start`,
    :meth:`tool_start`, :meth:`tool_end`, :meth:`session_file` and :meth:`turn_end`; a
    ``turn`` is one pi operation (prompt to settled), not one model call. Each
    ``abort_and_start`` is answered by exactly one :meth:`turn_end` of the operation it
    aborts (the running one, or the one a ``start_turn`` just began), before the new
    turn's :meth:`turn_start`; that end posts nothing.
    """

    def __init__(
        self,
        identity: ChildIdentity,
        *,
        clock: Clock | None = None,
        wall: Callable[[], float] = time.time,
        mailbox: Mailbox | None = None,
    ) -> None:
        self.identity = identity
        self.mailbox = mailbox if mailbox is not None else Mailbox.at(identity.mailbox_dir)
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._wall = wall
        self._lock = threading.RLock()
        self._state: ChildState | None = None
        #: steers handed to pi since its last steering boundary
        self._queued_steers = 0
        #: aborts handed over whose aborted turn has not ended yet (those ends post nothing)
        self._aborts = 0
        #: ``ask_owner`` was called in the current turn (it is the turn's final tool call)
        self._asked = False
        self._last_write = float("-inf")

    # -- state ----------------------------------------------------------------------------

    @property
    def state(self) -> ChildState:
        """The current state (raises before :meth:`hello`)."""
        with self._lock:
            return self._require("state")

    def _require(self, operation: str) -> ChildState:
        if self._state is None:
            raise MailboxError(
                "invalid_request", "the child has not said hello yet", operation=operation
            )
        return self._state

    def _write(self, state: ChildState, *, activity_only: bool = False) -> None:
        now = self._clock.now()
        if activity_only and now - self._last_write < ACTIVITY_THROTTLE_S:
            self._state = state  # kept in memory; the next write carries it
            return
        state = replace(state, updated_at=self._wall())
        write_state(self.identity.mailbox_dir, state)
        self._state = state
        self._last_write = now

    def _set(self, *, activity_only: bool = False, touch: bool = False, **changes: Any) -> None:
        state = self._require("child state")
        if touch:
            changes["last_activity_at"] = self._wall()
        self._write(replace(state, **changes), activity_only=activity_only)

    # -- the driver's calls ---------------------------------------------------------------

    def hello(
        self, *, pi_session_id: str, pi_session_file: str | None, cwd: str, pid: int
    ) -> ChildState:
        """Open (create) the mailbox and write the first ``state.json``: the readiness
        proof the controller waits for."""
        with self._lock:
            if self._state is not None:
                raise MailboxError(
                    "invalid_request", "hello was already said", operation="child hello"
                )
            self.mailbox.ensure()
            ident = self.identity
            now = self._wall()
            state = ChildState(
                run_id=ident.run_id,
                label=ident.label,
                workspace_id=ident.workspace_id,
                pane_id=ident.pane_id,
                owner_session_id=ident.owner_session_id,
                pi_session_id=pi_session_id,
                pi_session_file=pi_session_file,
                cwd=cwd,
                pid=pid,
                operation="idle",
                active_request_id=None,
                completed_request_id=None,
                last_activity_at=now,
                updated_at=now,
            )
            self._write(state)
            return self.state

    def poll(self) -> list[Action]:
        """Hand over (and consume) the pending ``to-child`` records pi can take now."""
        with self._lock:
            state = self._require("child poll")
            actions: list[Action] = []
            for message in self.mailbox.pending(Box.TO_CHILD):
                action = self._take(message, state)
                if action is False:
                    break  # not now (a task while busy): it stays pending, in order
                self.mailbox.consume(message)
                state = self.state
                if action is None:
                    continue
                if action.do == "abort_and_start":
                    # an interrupt supersedes the steering pi has not delivered yet: the
                    # steers of this same batch never reach pi (handed over together, a
                    # driver would queue them after its abort; pi's abort drops only the
                    # steers it already holds)
                    actions = [a for a in actions if a.do != "steer"]
                actions.append(action)
            return actions

    def _take(self, message: Message, state: ChildState) -> Action | Literal[False] | None:
        """The action for ``message`` (None: consumed with nothing to do; False: not yet)."""
        active = state.active_request_id
        if message.kind is Kind.TASK:
            if state.completed_request_id is not None or active is not None:
                return None  # one assignment per generation: never a second (stale) one
            if state.operation != "idle":
                return False
            self._set(operation="working", active_request_id=message.message_id, touch=True)
            return Action("start_turn", message.text, message.message_id)
        if active is None or message.assignment_id != active:
            return None  # not ours to act on (the mailbox refuses these at the source)
        if message.kind is Kind.REPLY:
            if state.operation == "working":
                return False  # the asking turn is still ending: the reply starts the next
            self._set(operation="working", touch=True)
            return Action("start_turn", message.text, message.message_id)
        if message.kind is Kind.STEER:
            if state.operation == "working":
                self._queued_steers += 1
                return Action("steer", message.text, message.message_id)
            if state.operation == "idle":
                self._set(operation="working", touch=True)
                return Action("start_turn", message.text, message.message_id)
            return None
        if message.kind is Kind.INTERRUPT:
            self._queued_steers = 0  # pi's native abort drops them
            if state.operation == "working":
                self._aborts += 1
                return Action("abort_and_start", message.text, message.message_id)
            if state.operation == "idle":
                self._set(operation="working", touch=True)
                return Action("start_turn", message.text, message.message_id)
            return None
        return None  # an owner-bound kind cannot be in to-child (the reader refuses it)

    def turn_start(self) -> None:
        """pi began an operation (a turn): it is working."""
        with self._lock:
            state = self._require("child turn_start")
            self._queued_steers = 0
            self._asked = False
            if state.operation != "working":
                self._set(operation="working", touch=True)
            else:
                self._set(touch=True, activity_only=True)

    def tool_start(self) -> None:
        """pi started a tool call (activity)."""
        with self._lock:
            self._require("child tool_start")
            self._set(touch=True, activity_only=True)

    def tool_end(self) -> None:
        """A tool call ended: pi's steering boundary, so queued steers were delivered."""
        with self._lock:
            self._require("child tool_end")
            self._queued_steers = 0
            self._set(touch=True, activity_only=True)

    def steers_delivered(self) -> None:
        """The driver delivered the queued steers at a boundary that is not a tool's end
        (the fake pi's step boundary; not a bridge event: pi's boundaries are tool ends and
        turn starts)."""
        with self._lock:
            self._require("child steers_delivered")
            self._queued_steers = 0

    def context_pressure(self, reason: str) -> tuple[bool, bool]:
        """pi is about to compact the session (``reason``: pi's ``manual``, ``threshold``
        or ``overflow``). Under the controller's ``contextRetirement``, a compaction pi
        started itself during an assignment retires the session (``sessionRetired`` in
        ``state.json``, before the result, so the controller marks the result retired and
        refuses to continue the session). Answers ``(retired, cancel)``: ``cancel`` asks
        the driver to cancel a ``threshold`` compaction (the agent hands off instead; an
        ``overflow`` compaction must proceed for the turn to go on)."""
        with self._lock:
            state = self._require("child context_pressure")
            if (
                not self.identity.context_retirement
                or reason == "manual"
                or state.active_request_id is None
            ):
                return state.session_retired, False
            if not state.session_retired:
                self._set(session_retired=True, touch=True)
            return True, reason == "threshold"

    @property
    def retired(self) -> bool:
        """Whether this session was retired (the driver tells pi to hand off)."""
        with self._lock:
            return self._state is not None and self._state.session_retired

    def session_file(self, path: str) -> None:
        """pi materialized (or moved) its session file."""
        with self._lock:
            state = self._require("child session_file")
            if state.pi_session_file != path:
                self._set(pi_session_file=path)

    def ask(self, question: str) -> str:
        """``ask_owner``: post the question for the current assignment; the turn then ends
        ``asking``. Returns the ask id."""
        operation = "ask_owner"
        with self._lock:
            state = self._require(operation)
            if not question.strip():
                raise MailboxError("invalid_request", "question is blank", operation=operation)
            if state.active_request_id is None:
                raise _busy("no active assignment", operation)
            if self._asked or state.operation == "asking" or self.mailbox.pending_ask():
                raise _busy("already waiting for an owner reply", operation)
            if state.operation != "working" or self._aborts:
                raise _busy("agent state is not eligible", operation)
            if self._queued_steers:
                raise _busy("a control request is still pending", operation)
            try:
                ask = self.mailbox.post(
                    Kind.ASK,
                    question,
                    assignment_id=state.active_request_id,
                    settled_only=True,
                )
            except MailboxError as exc:
                if exc.category == "agent_busy":
                    raise _busy(exc.message, operation) from None
                raise
            self._asked = True
            self._set(touch=True, activity_only=True)
            return ask.message_id

    def _waiting_on_agents(self, state: ChildState) -> bool:
        """A delegating child has an agent whose result it has not received yet
        (:func:`orchestrator.managed.delegation.outstanding`); a leaf never has."""
        if not self.identity.delegating:
            return False
        try:
            state_dir = state_dir_of(self.identity.mailbox_dir)
        except ManagedAgentError:
            return False  # a mailbox outside a controller's state dir: no agents of its own
        if not (state_dir / MANAGED_DIR / GENERATIONS_DIR).is_dir():
            return False
        generations, _ = ManagedStore(state_dir).scan()
        return any(
            g.owner_session_id == state.pi_session_id and outstanding(g) for g in generations
        )

    def turn_end(self, assistant_text: str | None) -> Literal["completed", "failed"] | None:
        """pi's operation settled. Posts the assignment's result when nothing is pending
        and answers its status; ``None`` when no result was posted (asking, an aborted
        turn, a control waiting, no assignment, or already completed)."""
        with self._lock:
            state = self._require("child turn_end")
            self._queued_steers = 0
            self._asked = False
            if self._aborts:  # an aborted turn: its replacement comes next
                self._aborts -= 1
                self._set(touch=True, activity_only=True)
                return None
            active = state.active_request_id
            if active is None:
                if state.operation != "idle":
                    self._set(operation="idle", touch=True)
                return None
            if self.mailbox.pending_ask() is not None:  # also after a turn typed meanwhile
                self._set(operation="asking", touch=True)
                return None
            if self._waiting_on_agents(state):
                # a delegating child: its agents' results come first (delivered into this
                # pane, they start the turn whose end posts this assignment's result)
                self._set(operation="idle", touch=True)
                return None
            status, text = _result_of(assistant_text)
            try:
                self.mailbox.post(
                    Kind.RESULT, text, assignment_id=active, status=status, settled_only=True
                )
            except MailboxError as exc:
                if exc.category != "agent_busy":
                    raise
                # a control arrived as the turn ended (it starts the next turn), or the
                # result is already posted (a second turn_end): no second result
                if any(m.kind is Kind.RESULT for m in self.mailbox.history()):
                    self._set(
                        operation="idle",
                        active_request_id=None,
                        completed_request_id=active,
                        touch=True,
                    )
                else:
                    self._set(operation="idle", touch=True)
                return None
            self._set(
                operation="idle", active_request_id=None, completed_request_id=active, touch=True
            )
            return status

    @property
    def operation(self) -> Operation:
        return self.state.operation


def _result_of(text: str | None) -> tuple[Literal["completed", "failed"], str]:
    body = (text or "").strip()
    if not body:
        return "failed", "empty_result: the agent's final turn had no assistant text"
    encoded = body.encode("utf-8")
    if len(encoded) > RESULT_TEXT_LIMIT_BYTES:
        head = encoded[: RESULT_TEXT_LIMIT_BYTES // 2].decode("utf-8", errors="ignore")
        return (
            "failed",
            (
                f"result_too_large: the final text is {len(encoded)} bytes, over the "
                f"{RESULT_TEXT_LIMIT_BYTES}-byte result limit; its beginning:\n{head}"
            ),
        )
    return "completed", body
