"""Health-attention timing (seed 002) driven by a manual clock: minutes in milliseconds."""

from __future__ import annotations

import threading

import pytest

from orchestrator.managed.attention import (
    SCAN_INTERVAL_S,
    AgentObservation,
    Attention,
    AttentionScheduler,
    ResultError,
    UnacknowledgedRequest,
)
from orchestrator.managed.clock import ManualClock


def _sched() -> tuple[ManualClock, AttentionScheduler]:
    clock = ManualClock(start=0.0)
    return clock, AttentionScheduler(clock)


def _emissions(
    clock: ManualClock,
    sched: AttentionScheduler,
    obs: list[AgentObservation],
    until: float,
    step: float = 1.0,
) -> list[tuple[float, Attention]]:
    """Scan every ``step`` seconds of clock time up to ``until``; return what was sent."""
    out: list[tuple[float, Attention]] = []
    while clock.now() <= until:
        got = sched.scan(obs, owner_idle=True)
        if got is not None:
            out.append((clock.now(), got))
        clock.advance(step)
    return out


def _blocked(run: str = "r1", label: str = "impl") -> AgentObservation:
    return AgentObservation(
        run_id=run, label=label, state="blocked", active_request_id="q1", runtime_blocked=True
    )


def test_fallback_scan_every_30s_and_events_make_it_due_now() -> None:
    clock, sched = _sched()
    assert sched.scan_due()  # immediately at start
    sched.scan([], owner_idle=True)
    assert not sched.scan_due()
    clock.advance(SCAN_INTERVAL_S - 0.001)
    assert not sched.scan_due()
    sched.request_scan()  # a Herdr lifecycle event
    assert sched.scan_due()
    sched.scan([], owner_idle=True)
    assert sched.next_scan_at() == pytest.approx(clock.now() + 30)
    clock.advance(30)
    assert sched.scan_due()


class TickingClock(ManualClock):
    """A clock that moves on every read, as the real monotonic clock does."""

    def now(self) -> float:
        return self.advance(0.001)


def test_a_scan_due_now_is_due_on_a_clock_that_moves_between_reads() -> None:
    """Regression: ``scan_due`` compared two reads of the clock, so on the real clock the
    first scan and every event-requested scan were never due (the scanner thread spun)."""
    clock = TickingClock(start=0.0)
    sched = AttentionScheduler(clock)
    assert sched.scan_due()  # the first scan
    sched.scan([], owner_idle=True)
    assert not sched.scan_due()
    sched.request_scan()
    assert sched.scan_due()


def test_busy_owner_gets_nothing_and_the_scan_stays_due() -> None:
    _clock, sched = _sched()
    assert sched.scan([_blocked()], owner_idle=False) is None
    assert sched.scan_due()
    got = sched.scan([_blocked()], owner_idle=True)
    assert got is not None and got.reason == "blocked" and got.episode == "blocked:q1"


def test_repeatable_cadence_5m_2m30_1m15_1m() -> None:
    clock, sched = _sched()
    sent = _emissions(clock, sched, [_blocked()], until=800)
    times = [t for t, _ in sent]
    assert times == [0, 300, 450, 525, 585, 645, 705, 765]
    assert [a.next_reminder_s for _, a in sent[:5]] == [300, 150, 75, 60, 60]
    assert sent[0][1].first_in_episode and not any(a.first_in_episode for _, a in sent[1:])
    assert not any(a.capture_inspect for _, a in sent)


def test_cadence_is_subject_to_30s_scan_granularity() -> None:
    clock, sched = _sched()
    times = [t for t, _ in _emissions(clock, sched, [_blocked()], until=700, step=30)]
    assert times == [0, 300, 450, 540, 600, 660]


def test_stale_after_ten_minutes_then_every_5m_with_one_capture() -> None:
    clock, sched = _sched()
    obs = AgentObservation(
        run_id="r1",
        label="impl",
        state="working",
        active_request_id="q1",
        last_activity_at=0.0,
        inspect_authorized=True,
    )
    sent = _emissions(clock, sched, [obs], until=1300)
    assert [t for t, _ in sent] == [600, 900, 1200]
    first, *repeats = (a for _, a in sent)
    assert first.reason == "stale" and first.capture_inspect and first.first_in_episode
    assert first.inactive_s == pytest.approx(600)
    assert all(not a.capture_inspect and a.next_reminder_s == 300 for a in repeats)
    assert {a.episode for _, a in sent} == {"stale:q1:0.0"}


def test_new_progress_starts_a_new_stale_episode_with_a_new_capture() -> None:
    clock, sched = _sched()
    obs = AgentObservation(
        run_id="r1", label="impl", state="working", active_request_id="q1", last_activity_at=0.0
    )
    clock.advance(600)
    first = sched.scan([obs], owner_idle=True)
    assert first is not None and not first.capture_inspect  # inspect not authorized
    progressed = AgentObservation(
        run_id="r1",
        label="impl",
        state="working",
        active_request_id="q1",
        last_activity_at=610.0,
        inspect_authorized=True,
    )
    clock.advance(10)
    assert sched.scan([progressed], owner_idle=True) is None  # progress ends the episode
    clock.advance(599)
    assert sched.scan([progressed], owner_idle=True) is None
    clock.advance(1)
    again = sched.scan([progressed], owner_idle=True)
    assert again is not None and again.first_in_episode and again.capture_inspect


def test_unknown_is_sent_once_per_episode() -> None:
    clock, sched = _sched()
    unknown = AgentObservation(run_id="r1", label="impl", state="unknown", unknown=True)
    sent = _emissions(clock, sched, [unknown], until=3600, step=30)
    assert [t for t, _ in sent] == [0]
    assert sent[0][1].next_reminder_s is None
    # resolved, then ambiguous again: a new episode, one more notification
    resolved = AgentObservation(run_id="r1", label="impl", state="working")
    assert sched.scan([resolved], owner_idle=True) is None
    assert sched.scan([unknown], owner_idle=True) is not None
    assert sched.scan([unknown], owner_idle=True) is None


def test_ask_reminder_5m_after_first_seen_delivered_then_cadence() -> None:
    clock, sched = _sched()
    ask = AgentObservation(
        run_id="r1",
        label="impl",
        state="blocked",
        active_request_id="q1",
        runtime_blocked=True,  # a pending ask suppresses the generic blocked reason
        pending_ask_id="a1",
        ask_delivered=True,
    )
    sent = _emissions(clock, sched, [ask], until=700)
    assert [t for t, _ in sent] == [300, 450, 525, 585, 645]
    assert all(a.reason == "ask" and a.episode == "ask:a1" for _, a in sent)
    assert sent[0][1].first_in_episode


def test_undelivered_ask_gets_no_reminder() -> None:
    clock, sched = _sched()
    ask = AgentObservation(
        run_id="r1", label="impl", state="blocked", pending_ask_id="a1", ask_delivered=False
    )
    assert _emissions(clock, sched, [ask], until=1200, step=30) == []


def test_handoff_after_ten_minutes_unacknowledged() -> None:
    clock, sched = _sched()
    obs = AgentObservation(
        run_id="r1",
        label="impl",
        state="working",
        unacknowledged=UnacknowledgedRequest(request_id="q9", kind="steer", since=0.0),
    )
    sent = _emissions(clock, sched, [obs], until=900)
    assert [t for t, _ in sent] == [600, 900]
    assert sent[0][1].reason == "handoff" and sent[0][1].pending_for_s == pytest.approx(600)


def test_first_matching_reason_wins() -> None:
    _clock, sched = _sched()
    everything = AgentObservation(
        run_id="r1",
        label="impl",
        state="lost",
        active_request_id="q1",
        lost=True,
        unknown=True,
        runtime_blocked=True,
        result_error=ResultError(request_id="q1", failed_at="t1"),
    )
    got = sched.scan([everything], owner_idle=True)
    assert got is not None and got.reason == "result_error"
    assert got.episode == "result-error:t1:q1"


def test_lost_with_a_result_is_not_lost_attention() -> None:
    _clock, sched = _sched()
    lost = AgentObservation(run_id="r1", label="impl", state="lost", lost=True)
    done = AgentObservation(run_id="r2", label="b", state="lost", lost=True, has_result=True)
    got = sched.scan([done, lost], owner_idle=True)
    assert got is not None and got.reason == "lost" and got.run_id == "r1"
    assert sched.scan([done], owner_idle=True) is None


@pytest.mark.parametrize("state", ["settling", "blocked"])
def test_settling_and_a_parent_waiting_on_children_raise_nothing(state: str) -> None:
    clock, sched = _sched()
    obs = AgentObservation(
        run_id="r1", label="p", state=state, active_request_id="q1", last_activity_at=0.0
    )
    assert _emissions(clock, sched, [obs], until=1800, step=30) == []


def test_at_most_one_message_per_scan_the_other_stays_due() -> None:
    _clock, sched = _sched()
    both = [_blocked("r1", "a"), _blocked("r2", "b")]
    first = sched.scan(both, owner_idle=True)
    second = sched.scan(both, owner_idle=True)
    assert first is not None and second is not None
    assert (first.label, second.label) == ("a", "b")
    assert sched.scan(both, owner_idle=True) is None


def test_gone_or_resolved_agent_ends_the_episode() -> None:
    clock, sched = _sched()
    assert sched.scan([_blocked()], owner_idle=True) is not None
    clock.advance(30)
    assert sched.scan([], owner_idle=True) is None  # not owned any more: reminder pruned
    again = sched.scan([_blocked()], owner_idle=True)
    assert again is not None and again.first_in_episode


def test_event_wakes_a_waiting_scanner_before_the_30s_fallback() -> None:
    """The driver shape: wait on the clock until the next scan or a lifecycle event."""
    clock, sched = _sched()
    sched.scan([], owner_idle=True)
    event = threading.Event()
    woke: list[bool] = []

    def driver() -> None:
        reached = clock.wait_until(sched.next_scan_at(), event)
        woke.append(reached)
        if not reached:
            sched.request_scan()

    thread = threading.Thread(target=driver, daemon=True)
    thread.start()
    clock.wait_for_waiters(1)
    clock.advance(10)
    event.set()
    thread.join(5)
    assert woke == [False]
    assert sched.scan_due() and sched.next_scan_at() == pytest.approx(10)
    got = sched.scan([_blocked()], owner_idle=True)
    assert got is not None and got.reason == "blocked"


def _lost(run: str = "r9", label: str = "gone") -> AgentObservation:
    return AgentObservation(
        run_id=run, label=label, state="lost", active_request_id="q9", lost=True
    )


def test_an_immediate_reason_goes_out_on_the_next_scan_not_30s_later() -> None:
    """Two conditions due in one scan: one message goes out, and the next scan is due at
    once (no clock time passes), so the lost agent is not queued 30 s behind the other."""
    _clock, sched = _sched()
    both = [_blocked("r1", "a"), _lost()]
    first = sched.scan(both, owner_idle=True)
    assert first is not None
    assert sched.scan_due()
    second = sched.scan(both, owner_idle=True)
    assert second is not None
    assert {first.reason, second.reason} == {"blocked", "lost"}
    assert not sched.scan_due()


def test_a_new_lost_episode_goes_before_a_due_reminder() -> None:
    clock, sched = _sched()
    assert sched.scan([_blocked("r1", "a")], owner_idle=True) is not None
    clock.advance(300)  # the blocked agent's first reminder is due now
    got = sched.scan([_blocked("r1", "a"), _lost()], owner_idle=True)
    assert got is not None and got.reason == "lost"
    assert sched.scan_due()
    reminder = sched.scan([_blocked("r1", "a"), _lost()], owner_idle=True)
    assert reminder is not None and reminder.reason == "blocked"
