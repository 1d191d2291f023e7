"""Bounded waits, written once: a :class:`Deadline`, a poll loop (:func:`wait_until`) and the
error it raises (:class:`WaitTimeout`).

Every package may import this module (it sits in the client layer and imports nothing of
ours). A wait that polls a probe uses :func:`wait_until`; a wait that blocks on something
else until a bound — a condition variable, ``select``/``poll``, a socket timeout — keeps its
own loop but takes its bound from a :class:`Deadline`, so the arithmetic of "how long is
left" lives here only. ``tests/test_deadline_loops.py`` counts the loops that still do that
arithmetic by hand.

The probe of :func:`wait_until` answers "not yet" by returning something falsy (``None``,
``False``, an empty list); an exception it raises ends the wait at once, unless its type is
in ``retry``, in which case it counts as "not yet" and the last one is named when the wait
runs out. On time-out the error says what was awaited (``what``, else the probe's name),
how long, and the last value (or error) seen.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["Deadline", "WaitTimeout", "wait_until"]

T = TypeVar("T")

#: how often :func:`wait_until` asks by default (seconds)
INTERVAL = 0.02


class WaitTimeout(AssertionError):
    """A bounded wait ran out; the message says what was awaited and what was last seen.

    An :class:`AssertionError`, as the plugin's waits always raised; deliberately not a
    :class:`TimeoutError`, which is an :class:`OSError` that ``except OSError`` around
    socket work would swallow."""


class Deadline:
    """A point ``seconds`` from now on the monotonic clock (``None``: no bound)."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.at = None if seconds is None else time.monotonic() + seconds

    def remaining(self) -> float | None:
        """Seconds left (never below 0), or None without a bound."""
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    def left(self) -> float:
        """Seconds left (never below 0); a bound is required."""
        if self.at is None:
            raise ValueError("an unbounded deadline has no time left to tell")
        return max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        """Whether the bound has passed (never, without a bound)."""
        return self.at is not None and time.monotonic() >= self.at


def wait_until(
    probe: Callable[[], T | None],
    timeout: float,
    interval: float = INTERVAL,
    what: str = "",
    *,
    retry: tuple[type[Exception], ...] = (),
) -> T:
    """Call ``probe`` until it returns something truthy; return that value.

    Raises :class:`WaitTimeout` after ``timeout`` seconds (the probe is always asked at
    least once, and once more at the bound). An exception of a type in ``retry`` counts as
    "not yet"; any other ends the wait.
    """
    __tracebackhide__ = True
    deadline = Deadline(timeout)
    while True:
        expired = deadline.expired()
        error: Exception | None = None
        try:
            value = probe()
        except retry as exc:
            value, error = None, exc
        if value:
            return value
        if expired:
            label = what or getattr(probe, "__name__", "condition")
            seen = f"last error: {error!r}" if error is not None else f"last value: {value!r}"
            raise WaitTimeout(f"timed out after {timeout:.1f} s waiting for {label}; {seen}")
        time.sleep(min(interval, deadline.left()))  # the poll's interval, not a fixed delay
