"""The clock managed-agent timing reads, so tests can drive minutes in milliseconds.

Health attention waits 30 s between fallback scans, ten minutes before an agent is stale and
five minutes between reminders. Code that reads ``time.monotonic()`` directly could only be
tested in real minutes; code that takes a :class:`Clock` runs on :class:`SystemClock` in
production and on :class:`ManualClock` in tests, where ``advance()`` moves time and wakes the
threads sleeping on it. All times are monotonic seconds (never wall-clock time).
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

from orchestrator.client.poll import Deadline

_WAKE_POLL_S = 0.005


class Clock(Protocol):
    """Monotonic time plus the waits built on it."""

    def now(self) -> float:
        """Monotonic seconds."""
        ...

    def sleep(self, seconds: float) -> None:
        """Return once ``seconds`` of this clock's time have passed."""
        ...

    def wait_until(self, deadline: float, wake: threading.Event | None = None) -> bool:
        """Wait until ``now() >= deadline`` (True) or until ``wake`` is set first (False)."""
        ...


class SystemClock:
    """The real clock: ``time.monotonic`` and real waits."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def wait_until(self, deadline: float, wake: threading.Event | None = None) -> bool:
        while True:
            if wake is not None and wake.is_set():
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            if wake is None:
                time.sleep(left)
            elif wake.wait(left):
                return False


class ManualClock:
    """A clock that moves only when a test calls :meth:`advance`.

    A thread blocked in :meth:`sleep` or :meth:`wait_until` stays blocked until the test
    advances past its deadline or its ``wake`` event is set (noticed within milliseconds, or at
    once after :meth:`poke`). So a test
    never hangs on a forgotten ``advance``, each wait is bounded by ``real_timeout`` seconds of
    real time and raises ``TimeoutError`` past it.
    """

    def __init__(self, start: float = 1000.0, *, real_timeout: float = 10.0) -> None:
        self._now = start
        self._cond = threading.Condition()
        self._waiters = 0
        self.real_timeout = real_timeout

    def now(self) -> float:
        with self._cond:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (never backward) and wake the waiters."""
        if seconds < 0:
            raise ValueError("a monotonic clock never moves backward")
        with self._cond:
            self._now += seconds
            self._cond.notify_all()
            return self._now

    def poke(self) -> None:
        """Wake the waiters to recheck their ``wake`` events (time does not move)."""
        with self._cond:
            self._cond.notify_all()

    @property
    def waiters(self) -> int:
        """How many threads are blocked on this clock now."""
        with self._cond:
            return self._waiters

    def wait_for_waiters(self, count: int, timeout: float = 5.0) -> None:
        """Block (real time, bounded) until ``count`` threads wait on this clock."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._waiters >= count, timeout):
                raise TimeoutError(f"{self._waiters} of {count} waiters after {timeout}s")

    def sleep(self, seconds: float) -> None:
        with self._cond:
            deadline = self._now + max(0.0, seconds)
        self.wait_until(deadline)

    def wait_until(self, deadline: float, wake: threading.Event | None = None) -> bool:
        real_deadline = Deadline(self.real_timeout)
        with self._cond:
            self._waiters += 1
            self._cond.notify_all()
            try:
                while True:
                    if wake is not None and wake.is_set():
                        return False
                    if self._now >= deadline:
                        return True
                    left = real_deadline.left()
                    if left <= 0:
                        raise TimeoutError(
                            f"manual clock at {self._now} never reached {deadline} "
                            f"within {self.real_timeout}s of real time"
                        )
                    # A ``wake`` event cannot notify this condition, so recheck it often.
                    self._cond.wait(left if wake is None else min(left, _WAKE_POLL_S))
            finally:
                self._waiters -= 1
