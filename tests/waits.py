"""Bounded waits for tests: the plugin's public poller with the suite's shorter default bound."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pytest_herdr import wait_until as _wait_until
from pytest_herdr.waits import SCALE

__all__ = ["SCALE", "wait_until"]

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T | None], timeout: float = 5.0, interval: float = 0.02, what: str = ""
) -> T:
    """Return the first truthy value of ``predicate()``; fail (:class:`pytest_herdr.WaitTimeout`,
    an AssertionError) after ``timeout`` seconds times ``HERDR_WAIT_SCALE``."""
    __tracebackhide__ = True
    return _wait_until(predicate, timeout, interval, what)
