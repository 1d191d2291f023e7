"""Bounded waits for tests: poll a predicate until it holds or the bound passes."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: scale every bound on slow machines (HERDR_WAIT_SCALE=3 triples them)
SCALE = float(os.environ.get("HERDR_WAIT_SCALE", "1"))


def wait_until(
    predicate: Callable[[], T | None], timeout: float = 5.0, interval: float = 0.02, what: str = ""
) -> T:
    """Return the first truthy value of ``predicate()``; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout * SCALE
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout * SCALE:.1f}s waiting for {what or predicate}"
            )
        time.sleep(interval)
