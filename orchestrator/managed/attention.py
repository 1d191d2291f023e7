"""Health attention timing (seed 002): which attention to send an idle owner, and when.

Health reconciliation is event-driven (Herdr lifecycle events ask for a scan now) with a 30 s
fallback scan. Each scan sees fresh observations of the owner's agents and sends at most one
attention message, and only while the owner is idle. This module is the pure decision part: it
reads time from a :class:`~orchestrator.managed.clock.Clock` and keeps the process-local
reminder state (restarting may remind an unresolved condition again, as the seed allows); the
caller gathers observations and delivers what it returns.

Rules (seed 002 "Health attention"; reference pi-herdsman.md A.12):

* Per agent the first matching reason wins: ``result_error`` > ``lost`` (not when a result
  exists) > ``unknown`` > a delivered ``ask`` > live-runtime ``blocked`` with an active request
  and no pending ask > ``handoff`` (a request unacknowledged for 10 min) > ``stale`` (listed
  ``working`` with an active request and 10 min without qualifying progress). ``settling`` and a
  delegating parent waiting on its children (public ``blocked``, runtime not blocked) raise
  nothing.
* An episode is one unresolved condition, named by its key (``blocked:<request>``,
  ``stale:<request>:<lastActivityAt>`` …). It starts when a scan first sees that key for the
  agent and ends when a scan sees the agent without it (resolved, another key, or the agent is
  gone); a recurrence is a new episode.
* At most one message per scan; when more are due, the next scan is due at once (not at
  the 30 s fallback), and a new episode of an immediate reason (``result_error``, ``lost``,
  ``blocked``, ``unknown``) goes before any reminder.
* Cadence: a new episode is due at once, then ``5m → 2m30s → 1m15s → 1m → 1m`` (each interval
  halved, floor 60 s). ``stale`` repeats every 5 min; ``unknown`` is sent once per episode; an
  ``ask`` reminder is first due 5 min after a scan first sees the ask delivered (the reminder
  never repeats first delivery), then follows the cadence.
* The first stale attention of an episode asks for one bounded inspect capture (2 s, last 20
  lines) when inspect is authorized; its reminders do not capture again.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from orchestrator.managed.clock import Clock

SCAN_INTERVAL_S = 30.0
STALE_AFTER_S = 600.0
HANDOFF_AFTER_S = 600.0
FIRST_REMINDER_S = 300.0
MIN_REMINDER_S = 60.0
STALE_REPEAT_S = 300.0
ASK_FIRST_REMINDER_S = 300.0
STALE_CAPTURE_TIMEOUT_S = 2.0
STALE_CAPTURE_LINES = 20

AttentionReason = Literal["result_error", "lost", "unknown", "ask", "blocked", "handoff", "stale"]
#: the reasons eligible at once (the seed's "immediately"): their first message of an episode
#: is never queued behind another agent's reminder or a 30 s scan
IMMEDIATE_REASONS: frozenset[str] = frozenset({"result_error", "lost", "blocked", "unknown"})


@dataclass(frozen=True)
class ResultError:
    """A terminal result that could not be durably persisted (``message`` and
    ``next_action`` are the stored failure's, shown to the owner)."""

    request_id: str
    failed_at: str
    message: str = ""
    next_action: str | None = None


@dataclass(frozen=True)
class UnacknowledgedRequest:
    """A durable request the child has not acknowledged; ``since`` is clock time."""

    request_id: str
    kind: str
    since: float


@dataclass(frozen=True)
class AgentObservation:
    """What one reconciliation saw of one owned agent generation (``run_id``).

    Times (``last_activity_at``, ``UnacknowledgedRequest.since``) are on the scheduler's clock.
    ``available_tools`` (the record's current snapshot) and ``ask_question`` (the pending
    question's text) only feed the attention message (:func:`.health.attention_text`).
    """

    run_id: str
    label: str
    state: str
    active_request_id: str | None = None
    lost: bool = False
    has_result: bool = False
    unknown: bool = False
    runtime_blocked: bool = False
    result_error: ResultError | None = None
    pending_ask_id: str | None = None
    ask_delivered: bool = False
    unacknowledged: UnacknowledgedRequest | None = None
    last_activity_at: float | None = None
    inspect_authorized: bool = False
    available_tools: tuple[str, ...] = ()
    ask_question: str | None = None


@dataclass(frozen=True)
class Attention:
    """One attention message to deliver to the idle owner now."""

    reason: AttentionReason
    run_id: str
    label: str
    episode: str
    first_in_episode: bool
    capture_inspect: bool
    next_reminder_s: float | None
    request_id: str | None = None
    inactive_s: float | None = None
    pending_for_s: float | None = None


@dataclass(frozen=True)
class _Condition:
    reason: AttentionReason
    episode: str
    request_id: str | None
    inactive_s: float | None = None
    pending_for_s: float | None = None


@dataclass
class _Reminder:
    episode: str
    interval: float
    next_at: float
    sent: int = 0


def classify(obs: AgentObservation, now: float) -> _Condition | None:
    """The agent's attention condition now (first matching reason), or None."""
    rid = obs.active_request_id
    if obs.result_error is not None:
        err = obs.result_error
        return _Condition(
            "result_error", f"result-error:{err.failed_at}:{err.request_id}", err.request_id
        )
    if obs.lost:
        return None if obs.has_result else _Condition("lost", "lost", rid)
    if obs.unknown:
        return _Condition("unknown", "unknown", rid)
    if obs.pending_ask_id is not None:
        # A pending question owns the agent's attention; before its first delivery the ask
        # path (not a reminder) is responsible, so nothing is raised.
        if not obs.ask_delivered:
            return None
        return _Condition("ask", f"ask:{obs.pending_ask_id}", rid)
    if obs.runtime_blocked and rid is not None:
        return _Condition("blocked", f"blocked:{rid}", rid)
    pending = obs.unacknowledged
    if pending is not None and now - pending.since >= HANDOFF_AFTER_S:
        return _Condition(
            "handoff",
            f"handoff:{pending.request_id}",
            pending.request_id,
            pending_for_s=now - pending.since,
        )
    if obs.state == "working" and rid is not None and obs.last_activity_at is not None:
        inactive = now - obs.last_activity_at
        if inactive >= STALE_AFTER_S:
            return _Condition(
                "stale", f"stale:{rid}:{obs.last_activity_at!r}", rid, inactive_s=inactive
            )
    return None


class AttentionScheduler:
    """Decides the scans and the attention messages for one owner (process-local state)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._last_scan: float | None = None
        self._requested = False
        self._reminders: dict[str, _Reminder] = {}

    def request_scan(self) -> None:
        """A lifecycle event arrived: the next scan is due now, not at the 30 s fallback."""
        self._requested = True

    def next_scan_at(self) -> float:
        """Clock time of the next due scan (now when requested or never scanned)."""
        if self._requested or self._last_scan is None:
            return self.clock.now()
        return self._last_scan + SCAN_INTERVAL_S

    def scan_due(self) -> bool:
        # Decided without comparing two reads of the clock: on the real monotonic clock the
        # second read is later, so "due now" would never be due.
        if self._requested or self._last_scan is None:
            return True
        return self.clock.now() >= self._last_scan + SCAN_INTERVAL_S

    def scan(
        self, observations: Sequence[AgentObservation], *, owner_idle: bool
    ) -> Attention | None:
        """Reconcile one scan; return the (at most one) attention to send now.

        While the owner is busy nothing is decided and the scan stays due, so it runs as soon
        as the caller scans again with an idle owner.
        """
        if not owner_idle:
            return None
        now = self.clock.now()
        self._last_scan = now
        self._requested = False
        seen = {obs.run_id for obs in observations}
        for run_id in list(self._reminders):
            if run_id not in seen:
                del self._reminders[run_id]
        due: list[tuple[AgentObservation, _Condition, _Reminder | None]] = []
        for obs in observations:
            cond = classify(obs, now)
            record = self._reminders.get(obs.run_id)
            if cond is None:
                self._reminders.pop(obs.run_id, None)
                continue
            new_episode = record is None or record.episode != cond.episode
            if cond.reason == "ask" and new_episode:
                self._reminders[obs.run_id] = _Reminder(
                    cond.episode, ASK_FIRST_REMINDER_S, now + ASK_FIRST_REMINDER_S
                )
                continue
            if new_episode or (record is not None and now >= record.next_at):
                due.append((obs, cond, None if new_episode else record))
        if not due:
            return None
        # a new episode of an immediate reason goes first (never behind a reminder), in the
        # observations' order; the rest stay due and the next scan is due at once, so each
        # goes out on its own scan as soon as the owner is idle again, not 30 s later
        due.sort(key=lambda item: not (item[2] is None and item[1].reason in IMMEDIATE_REASONS))
        obs, cond, record = due[0]
        if len(due) > 1:
            self._requested = True
        return self._emit(obs, cond, record, now)

    def _emit(
        self, obs: AgentObservation, cond: _Condition, record: _Reminder | None, now: float
    ) -> Attention:
        if cond.reason == "unknown":
            interval = math.inf
        elif cond.reason == "stale":
            interval = STALE_REPEAT_S
        elif record is None:
            interval = FIRST_REMINDER_S
        else:
            interval = max(MIN_REMINDER_S, record.interval / 2)
        first = record is None or record.sent == 0
        sent = 1 if record is None else record.sent + 1
        self._reminders[obs.run_id] = _Reminder(cond.episode, interval, now + interval, sent)
        return Attention(
            reason=cond.reason,
            run_id=obs.run_id,
            label=obs.label,
            episode=cond.episode,
            first_in_episode=first,
            capture_inspect=cond.reason == "stale" and first and obs.inspect_authorized,
            next_reminder_s=None if math.isinf(interval) else interval,
            request_id=cond.request_id,
            inactive_s=cond.inactive_s,
            pending_for_s=cond.pending_for_s,
        )
