"""Bounded waits: poll a predicate until it holds, or fail with what was last seen.

Server-side waits (``pane.wait_for_output``, ``agent.wait``, ``events.wait``) are better
when they exist — :class:`HerdrWait` uses them — and this poller is for everything else.
Every wait has a bound; ``HERDR_WAIT_SCALE`` stretches all of them on slow machines.

A status wait of :class:`HerdrWait` given the server's event recorder returns only once the
recorder has seen the status too, so ``herdr_events`` read right after a wait holds it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from .client import HerdrClient

T = TypeVar("T")

#: multiply every timeout (a slow CI runner sets HERDR_WAIT_SCALE=3)
SCALE = float(os.environ.get("HERDR_WAIT_SCALE", "1") or "1")


class WaitTimeout(AssertionError):
    """A bounded wait ran out; the message says what was awaited and what was last seen."""


def wait_until(
    predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.02, what: str = ""
) -> T:
    """Call ``predicate`` until it returns something truthy; return that value.

    Raises :class:`WaitTimeout` after ``timeout`` seconds (times ``HERDR_WAIT_SCALE``).
    """
    deadline = time.monotonic() + timeout * SCALE
    last: T = predicate()
    while not last:
        if time.monotonic() >= deadline:
            label = what or getattr(predicate, "__name__", "condition")
            raise WaitTimeout(f"timed out after {timeout * SCALE:.1f} s waiting for {label}; "
                              f"last value: {last!r}")  # fmt: skip
        time.sleep(interval)  # polling interval of a bounded poll, not a fixed delay
        last = predicate()
    return last


class StatusRecorder(Protocol):
    """What a status wait needs of the event recorder
    (:class:`~pytest_herdr.events.EventRecorder`, which imports this module)."""

    def mark(self) -> int: ...

    def catch_up(self, pane_id: str, status: str, *, since: int = 0) -> None: ...


class HerdrWait:
    """Waits bound to one server, through Herdr's own server-side waits.

    With ``events`` (the server's recorder; the ``herdr_wait`` fixture passes it), a status
    wait also waits (bounded) until the recorder has recorded the status it returned, so
    ``herdr_events.statuses(pane)`` right after ``for_pane_status(pane, "idle")`` ends in
    ``idle``.
    """

    def __init__(
        self, client: HerdrClient, timeout: float = 10.0, events: StatusRecorder | None = None
    ) -> None:
        self.client = client
        self.timeout = timeout
        self.events = events

    def _ms(self, timeout: float | None) -> int:
        return int((self.timeout if timeout is None else timeout) * SCALE * 1000)

    def for_output(
        self,
        pane_id: str,
        text: str | None = None,
        *,
        regex: str | None = None,
        source: str = "recent",
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """``pane.wait_for_output`` for a substring or a regex; its ``output_matched`` result."""
        if (text is None) == (regex is None):
            raise ValueError("give exactly one of text or regex")
        match = {"type": "substring", "value": text} if text is not None else {
            "type": "regex", "value": regex}  # fmt: skip
        return self.client.call(
            "pane.wait_for_output",
            pane_id=pane_id,
            source=source,
            match=match,
            timeout_ms=self._ms(timeout),
        )

    def for_agent(
        self, target: str, *statuses: str, timeout: float | None = None
    ) -> dict[str, Any]:
        """``agent.wait`` until the agent's status is one of ``statuses`` (default: idle or
        done, Herdr's default); its AgentInfo."""
        params: dict[str, Any] = {"target": target, "timeout_ms": self._ms(timeout)}
        if statuses:
            params["until"] = list(statuses)
        since = self._mark()
        info: dict[str, Any] = self.client.call("agent.wait", **params)["agent"]
        self._catch_up(info.get("pane_id"), info.get("agent_status"), since)
        return info

    def for_pane_status(
        self, pane_id: str, status: str, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """``events.wait`` for a pane's agent status; the matched event."""
        match = {"event": "pane_agent_status_changed", "pane_id": pane_id, "agent_status": status}
        since = self._mark()
        event: dict[str, Any] = self.client.call(
            "events.wait", match_event=match, timeout_ms=self._ms(timeout)
        )["event"]
        data = event.get("data", {})
        self._catch_up(data.get("pane_id", pane_id), data.get("agent_status", status), since)
        return event

    def _mark(self) -> int:
        return 0 if self.events is None else self.events.mark()

    def _catch_up(self, pane_id: object, status: object, since: int) -> None:
        """Wait until the recorder has what the server's wait just returned."""
        if self.events is not None and isinstance(pane_id, str) and isinstance(status, str):
            self.events.catch_up(pane_id, status, since=since)

    def until(self, predicate: Callable[[], T], timeout: float | None = None, what: str = "") -> T:
        """:func:`wait_until` with this helper's default timeout."""
        return wait_until(predicate, self.timeout if timeout is None else timeout, what=what)
