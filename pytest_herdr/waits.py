"""Bounded waits: poll a predicate until it holds, or fail with what was last seen.

Server-side waits (``pane.wait_for_output``, ``agent.wait``, ``events.wait``) are better
when they exist — :class:`HerdrWait` uses them — and this poller is for everything else.
Every wait has a bound; ``HERDR_WAIT_SCALE`` stretches all of them on slow machines. When
a server-side wait for an agent state runs out, :class:`WaitTimeout` says whether the server
refused a report of that state (a bad ``resume_argv``, an unknown pane, a stale ``seq`` …)
or no such report reached it, read from the server's protocol tail when the wait has one.

A status wait of :class:`HerdrWait` given the server's event recorder returns only once the
recorder has seen the status too, so ``herdr_events`` read right after a wait holds it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from orchestrator.client import poll
from orchestrator.client.errors import Timeout
from orchestrator.client.poll import INTERVAL, WaitTimeout

from .client import WireClient
from .scene import WireEntry

#: ``WaitTimeout`` is :mod:`orchestrator.client.poll`'s, re-exported (the package root's face)
__all__ = [
    "AGENT_WAIT",
    "DEFAULT_WAIT",
    "SCALE",
    "HerdrWait",
    "StatusRecorder",
    "WaitTimeout",
    "WireTail",
    "report_outcomes",
    "wait_until",
]


class WireTail(Protocol):
    """What a wait reads of a server's protocol tail (:class:`pytest_herdr.forensics.WireTail`)."""

    #: wire lines seen in all
    seen: int

    def entries(self) -> list[WireEntry]:
        """The kept lines, oldest first."""
        ...


T = TypeVar("T")

#: multiply every timeout (a slow CI runner sets HERDR_WAIT_SCALE=3)
SCALE = float(os.environ.get("HERDR_WAIT_SCALE", "1") or "1")
#: the default bound of a wait, in Herdr's time: the fixtures' waits on a server run it at
#: the server's time scale (``--herdr-time-scale``), :func:`wait_until` as it is
DEFAULT_WAIT = 10.0
#: the default bound of a fake agent's start, prompt and wait (Herdr's time, scaled likewise)
AGENT_WAIT = 30.0


_REPORT = "pane.report_agent"


def report_outcomes(tail: WireTail, pane_id: str | None, state: str) -> str:
    """What the protocol tail shows of reports of ``state`` (for ``pane_id``, or any pane):
    the server's refusals of them, or that none reached it among the lines kept."""
    entries = tail.entries()
    requests = {
        str(e.line.get("id")): e.line
        for e in entries
        if e.kind == "request" and e.line.get("method") == _REPORT
    }
    refused: list[str] = []
    accepted = 0
    other: set[str] = set()
    for entry in entries:
        request = requests.get(str(entry.line.get("id")))
        if entry.kind != "response" or request is None:
            continue
        params = request.get("params") or {}
        if pane_id is not None and params.get("pane_id") != pane_id:
            continue
        if params.get("state") != state:
            other.add(str(params.get("state")))
            continue
        error = entry.line.get("error")
        if isinstance(error, dict):
            refused.append(
                f"{params.get('source')} reported {state!r} at +{entry.at:.3f}s and the server "
                f"refused it: {error.get('code')}: {error.get('message')}"
            )
        else:
            accepted += 1
    if refused:
        more = f" (+{len(refused) - 3} more)" if len(refused) > 3 else ""
        shown = "; ".join(refused[:3]) + more
        return f"the state was reported but refused by the server: {shown}"
    if accepted:
        return f"{accepted} report(s) of {state!r} were accepted by the server"
    seen = f" (states reported: {', '.join(sorted(other))})" if other else ""
    return (
        f"no {_REPORT} of {state!r} reached the server among the last {tail.seen} wire lines{seen}"
    )


def wait_until(
    predicate: Callable[[], T | None],
    timeout: float = DEFAULT_WAIT,
    interval: float = INTERVAL,
    what: str = "",
    *,
    retry: tuple[type[Exception], ...] = (),
) -> T:
    """Call ``predicate`` until it returns something truthy; return that value (never None:
    the type says so).

    Raises :class:`WaitTimeout` after ``timeout`` seconds (times ``HERDR_WAIT_SCALE``),
    naming ``what`` and the last value seen; an exception of a type in ``retry`` counts as
    "not yet" (:func:`orchestrator.client.poll.wait_until`, which this scales).
    """
    __tracebackhide__ = True
    return poll.wait_until(predicate, timeout * SCALE, interval, what, retry=retry)


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
    ``idle``. With ``tail`` (the server's protocol tail), a timed-out status wait says what
    became of the reports of that status.
    """

    def __init__(
        self,
        client: WireClient,
        timeout: float = DEFAULT_WAIT,
        events: StatusRecorder | None = None,
        *,
        tail: WireTail | None = None,
    ) -> None:
        self.client = client
        self.timeout = timeout
        self.events = events
        self.tail = tail

    def _state_timeout(
        self, exc: Timeout, what: str, pane_id: str | None, states: tuple[str, ...]
    ) -> WaitTimeout:
        lines = [f"{what}: {exc}"]
        if self.tail is not None:
            lines += [f"  {s}: {report_outcomes(self.tail, pane_id, s)}" for s in states]
        return WaitTimeout("\n".join(lines))

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
        __tracebackhide__ = True
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
        done, Herdr's default); its AgentInfo. :class:`WaitTimeout` when it runs out."""
        __tracebackhide__ = True
        params: dict[str, Any] = {"target": target, "timeout_ms": self._ms(timeout)}
        if statuses:
            params["until"] = list(statuses)
        since = self._mark()
        try:
            info: dict[str, Any] = self.client.call("agent.wait", **params)["agent"]
        except Timeout as exc:
            what = f"agent {target} never became {' or '.join(statuses) or 'idle or done'}"
            raise self._state_timeout(exc, what, None, statuses or ("idle",)) from None
        self._catch_up(info.get("pane_id"), info.get("agent_status"), since)
        return info

    def for_pane_status(
        self, pane_id: str, status: str, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """``events.wait`` for a pane's agent status; the matched event.
        :class:`WaitTimeout` when it runs out."""
        __tracebackhide__ = True
        match = {"event": "pane_agent_status_changed", "pane_id": pane_id, "agent_status": status}
        since = self._mark()
        try:
            event: dict[str, Any] = self.client.call(
                "events.wait", match_event=match, timeout_ms=self._ms(timeout)
            )["event"]
        except Timeout as exc:
            what = f"pane {pane_id} never reached agent status {status!r}"
            raise self._state_timeout(exc, what, pane_id, (status,)) from None
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
        __tracebackhide__ = True
        return wait_until(predicate, self.timeout if timeout is None else timeout, what=what)
