"""Fault injection: make a chosen method slow, fail, or drop its connection.

Clients must survive a Herdr that is slow, answers an error, or vanishes mid-request. Tests
arm faults from any thread (``sim.faults.add("pane.split", drop="after")``); the server
consults the plan for every request before dispatching it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

Drop = Literal["before", "after"]


@dataclass
class Fault:
    """What to do to matching requests.

    ``delay`` seconds pass before the request is handled; ``error`` answers that
    ``(code, message)`` without acting; ``drop="before"`` closes the connection without
    acting, ``drop="after"`` acts and then closes without answering. ``times`` bounds how
    many requests are affected (None: until cleared). ``method`` ``"*"`` matches every method
    except ``ping``.
    """

    method: str
    delay: float = 0.0
    error: tuple[str, str] | None = None
    drop: Drop | None = None
    times: int | None = None
    hits: int = 0


class FaultPlan:
    """The armed faults of one simulator; safe to change from other threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(
        self,
        method: str,
        *,
        delay: float = 0.0,
        error: tuple[str, str] | None = None,
        drop: Drop | None = None,
        times: int | None = None,
    ) -> Fault:
        """Arm a fault; the newest matching fault wins."""
        if error is not None and drop is not None:
            raise ValueError("a fault either answers an error or drops the connection")
        if delay < 0:
            raise ValueError("delay must not be negative")
        fault = Fault(method, delay, error, drop, times)
        with self._lock:
            self._faults.append(fault)
        return fault

    def remove(self, fault: Fault) -> None:
        """Disarm one fault."""
        with self._lock:
            if fault in self._faults:
                self._faults.remove(fault)

    def clear(self) -> None:
        """Disarm everything."""
        with self._lock:
            self._faults.clear()

    def take(self, method: str) -> Fault | None:
        """The fault for this request, counting it as a hit; None when none applies."""
        with self._lock:
            for fault in reversed(self._faults):
                if fault.method == method or (fault.method == "*" and method != "ping"):
                    fault.hits += 1
                    if fault.times is not None and fault.hits >= fault.times:
                        self._faults.remove(fault)
                    return fault
        return None
