"""The managed-agent clock: the manual clock moves only on advance and wakes its sleepers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from orchestrator.managed.clock import Clock, ManualClock, SystemClock
from tests.waits import SCALE


def _in_thread(fn: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    out: list[object] = []

    def run() -> None:
        out.append(fn())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def test_manual_sleep_returns_only_after_advance_past_deadline() -> None:
    clock = ManualClock(start=0.0)
    thread, out = _in_thread(lambda: clock.sleep(600))
    clock.wait_for_waiters(1)
    clock.advance(599.9)
    thread.join(0.05)
    assert thread.is_alive()  # not yet: 0.1 s of clock time left
    clock.advance(0.1)
    thread.join(5)
    assert not thread.is_alive() and out == [None]
    assert clock.now() == pytest.approx(600.0)


def test_manual_wait_until_wakes_on_event_before_deadline() -> None:
    clock = ManualClock(start=0.0)
    wake = threading.Event()
    thread, out = _in_thread(lambda: clock.wait_until(30.0, wake))
    clock.wait_for_waiters(1)
    wake.set()
    clock.poke()
    thread.join(5)
    assert out == [False]
    assert clock.waiters == 0


def test_manual_wait_until_past_deadline_returns_true_at_once() -> None:
    clock = ManualClock(start=50.0)
    assert clock.wait_until(49.0) is True


def test_manual_wait_is_bounded_in_real_time() -> None:
    clock = ManualClock(start=0.0, real_timeout=0.05)
    with pytest.raises(TimeoutError, match="never reached"):
        clock.sleep(1)


def test_manual_clock_never_moves_backward() -> None:
    clock = ManualClock()
    with pytest.raises(ValueError, match="backward"):
        clock.advance(-1)


def test_system_clock_is_monotonic_and_waits() -> None:
    clock: Clock = SystemClock()
    start = clock.now()
    assert clock.wait_until(start + 0.01) is True
    assert clock.now() >= start + 0.01
    wake = threading.Event()
    wake.set()
    began = time.monotonic()
    assert clock.wait_until(clock.now() + 30, wake) is False
    assert time.monotonic() - began < 1 * SCALE


def test_manual_wait_until_notices_a_set_event_without_poke() -> None:
    clock = ManualClock(start=0.0)
    wake = threading.Event()
    thread, out = _in_thread(lambda: clock.wait_until(30.0, wake))
    clock.wait_for_waiters(1)
    wake.set()  # e.g. a lifecycle listener thread: it knows nothing of the clock
    thread.join(5)
    assert out == [False]
