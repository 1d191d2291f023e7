"""The request log (the ``herdr_requests`` fixture): every request a server was sent, which
pane's processes sent it, its answer, and every release of a pane's agent with its cause.

An agent's Herdr integration is the requests its process makes — reports, session reports,
releases — and how Herdr answered them. Herdr's events show only the outcome (a status
change, ``pane.agent_detected`` with ``released``), and an outcome can come from elsewhere:
a third-party agent that exits without releasing is released anyway by the guide's safety
net, so a test watching events passes with the release missing. The log keeps the requests
themselves, like pytest-httpserver's log, and its assertions
(:meth:`RequestLog.assert_reported`, :meth:`RequestLog.assert_released`) read them.

On the simulator the log is a wire tap: it sees every request (the CLI's and the agents'
too) and attributes each to the pane whose process sent it from the connection's peer
credentials (:meth:`herdr_sim.services.runtime.Runtime.pane_of_process`); the simulator also tells
it each release's cause (``Simulator.release_taps``), which Herdr's wire does not carry. A real
Herdr's socket cannot be tapped: there the log holds no requests (the assertions skip, with
the ``request-log`` difference) and its releases are the recorded ``pane.agent_detected``
events, cause unknown.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from herdr_sim.persist.redaction import redact
from orchestrator.client.poll import Deadline

from .differences import skip_for
from .events import OWN_ID as EVENTS_ID
from .forensics import ID_PREFIX as FORENSICS_ID
from .waits import SCALE, WaitTimeout

if TYPE_CHECKING:
    from .events import EventRecorder

__all__ = ["LoggedRequest", "Release", "RequestLog"]

#: the methods an agent's integration is made of (what :meth:`RequestLog.render` shows)
AGENT_METHODS = (
    "pane.report_agent",
    "pane.report_agent_session",
    "pane.release_agent",
    "pane.clear_agent_authority",
    "pane.report_metadata",
)
#: methods that carry the per-source ``seq`` of Herdr's sequencing rule (§5.4)
SEQUENCED = ("pane.report_agent", "pane.report_agent_session", "pane.release_agent")
#: how many requests a log keeps (the oldest are dropped first)
LIMIT = 10_000


def pane_id_of(pane: object) -> str:
    """A pane id from a :class:`~pytest_herdr.handles.Pane` or an id."""
    return str(getattr(pane, "pane_id", pane))


@dataclass
class LoggedRequest:
    """One request and its answer (``response`` is None until it is answered, and stays
    None when it never is: a dropped reply, a client that hung up)."""

    #: seconds since the log started
    at: float
    id: str
    method: str
    #: the params as sent (``env`` maps redacted)
    params: dict[str, Any]
    #: the pane whose process sent it (None: not a pane's process, e.g. the test's own
    #: client, or a process that was gone before it could be attributed)
    sender: str | None
    #: the sending process (simulator only)
    pid: int | None
    response: dict[str, Any] | None = None

    @property
    def pane_id(self) -> str | None:
        """The pane the request is about (its ``pane_id`` param)."""
        value = self.params.get("pane_id")
        return None if value is None else str(value)

    @property
    def source(self) -> str | None:
        value = self.params.get("source")
        return None if value is None else str(value)

    @property
    def agent(self) -> str | None:
        value = self.params.get("agent")
        return None if value is None else str(value)

    @property
    def seq(self) -> int | None:
        value = self.params.get("seq")
        return value if isinstance(value, int) else None

    @property
    def ok(self) -> bool:
        """Answered with a result."""
        return self.response is not None and "result" in self.response

    @property
    def error(self) -> dict[str, Any] | None:
        """The error it was refused with, if any."""
        if self.response is None:
            return None
        error = self.response.get("error")
        return error if isinstance(error, dict) else None

    def outcome(self) -> str:
        """``ok``, ``refused <code>: <message>`` or ``no answer (yet)``."""
        if self.ok:
            return "ok"
        error = self.error
        if error is not None:
            return f"refused {error.get('code')}: {error.get('message')}"
        return "no answer (yet)"

    def describe(self) -> str:
        """One line: when, what, from where, and its answer."""
        shown = {
            key: self.params[key]
            for key in ("source", "agent", "state", "seq", "message")
            if self.params.get(key) is not None
        }
        args = " ".join(f"{key}={value!r}" for key, value in shown.items())
        sender = f" from pane {self.sender}" if self.sender else ""
        return (
            f"{self.at:7.3f}s {self.method} pane={self.pane_id} {args}{sender} → {self.outcome()}"
        )


@dataclass(frozen=True)
class Release:
    """A pane's agent was released: when, which agent, and why (``request``: a
    ``pane.release_agent`` — :attr:`request`; ``process-exit``: its process ended;
    ``safety-net``: the job that reported ended without releasing; ``unknown``: a real
    Herdr, whose event does not say)."""

    at: float
    pane_id: str
    agent: str | None
    cause: str
    request: LoggedRequest | None = None

    def describe(self) -> str:
        by = f" by {self.request.source!r} ({self.request.id})" if self.request else ""
        return f"{self.at:7.3f}s released {self.agent!r} in pane {self.pane_id}: {self.cause}{by}"


@dataclass
class RequestLog:
    """The requests one server was sent and the releases of its panes' agents."""

    backend: str = "sim"
    #: the pane a process belongs to (the simulator's, read on its loop)
    resolve: Callable[[int], str | None] = field(default=lambda pid: None, repr=False)
    #: a real Herdr's event recorder, whose ``pane.agent_detected`` events are its releases
    #: (None on the simulator, which tells the log of each release itself)
    recorder: Callable[[], EventRecorder | None] | None = field(default=None, repr=False)
    limit: int = LIMIT
    origin: float = field(default_factory=time.monotonic)
    _requests: list[LoggedRequest] = field(default_factory=list, repr=False)
    _releases: list[Release] = field(default_factory=list, repr=False)
    #: the request being served, in its connection's task context (and so in the task that
    #: runs its handler, created from that context)
    _current: contextvars.ContextVar[LoggedRequest | None] = field(
        default_factory=lambda: contextvars.ContextVar("herdr_request", default=None), repr=False
    )
    _changed: threading.Condition = field(default_factory=threading.Condition, repr=False)

    # -- recording ----------------------------------------------------------------------------

    def _now(self) -> float:
        return time.monotonic() - self.origin

    def on_line(self, kind: str, line: dict[str, Any]) -> None:
        """The wire tap: called on the simulator's loop, in the connection's own task."""
        if kind not in ("request", "response") or not isinstance(line, dict):
            return
        if str(line.get("id", "")).startswith((EVENTS_ID, FORENSICS_ID)):
            return  # the plugin's own recorder and report
        if kind == "response":
            entry = self._current.get()
            if entry is not None and entry.response is None and entry.id == line.get("id"):
                with self._changed:
                    entry.response = redact(line)
                    self._changed.notify_all()
            return
        from herdr_sim.wire.request_context import current_peer_pid

        pid = current_peer_pid.get()
        sender = self.resolve(pid) if pid is not None else None
        params = line.get("params")
        entry = LoggedRequest(
            at=self._now(),
            id=str(line.get("id", "")),
            method=str(line.get("method", "")),
            params=redact(params) if isinstance(params, dict) else {},
            sender=sender,
            pid=pid,
        )
        with self._changed:
            self._requests.append(entry)
            if len(self._requests) > self.limit:
                del self._requests[0]
        self._current.set(entry)

    def on_release(self, pane_id: str, agent: str | None, cause: str, request_id: str) -> None:
        """The simulator's release tap: a release and its cause, as it happens."""
        request = self._current.get() if cause == "request" else None
        if request is not None and request.id != request_id:
            request = None
        with self._changed:
            self._releases.append(Release(self._now(), pane_id, agent, cause, request))
            self._changed.notify_all()

    def _releases_from_events(self) -> list[Release]:
        recorder = self.recorder() if self.recorder is not None else None
        if recorder is None:
            return []
        return [
            Release(event.at, str(event.data.get("pane_id")), event.data.get("agent"), "unknown")
            for event in recorder.of("pane_agent_detected", "pane.agent_detected")
            if event.data.get("released")
        ]

    # -- reading ------------------------------------------------------------------------------

    def requests(
        self,
        pane: object = None,
        *,
        method: str | Iterable[str] | None = None,
        source: str | None = None,
        sender: object = None,
    ) -> list[LoggedRequest]:
        """The logged requests, oldest first: about ``pane`` (its ``pane_id`` param), of
        ``method`` (a name or several), from ``source``, sent by ``sender``'s processes."""
        methods = {method} if isinstance(method, str) else set(method or ())
        with self._changed:
            entries = list(self._requests)
        return [
            entry
            for entry in entries
            if (pane is None or entry.pane_id == pane_id_of(pane))
            and (not methods or entry.method in methods)
            and (source is None or entry.source == source)
            and (sender is None or entry.sender == pane_id_of(sender))
        ]

    def reports(self, pane: object = None, *, source: str | None = None) -> list[LoggedRequest]:
        """The ``pane.report_agent`` requests (answered or not)."""
        return self.requests(pane, method="pane.report_agent", source=source)

    def refusals(self, pane: object = None) -> list[LoggedRequest]:
        """The requests answered with an error."""
        return [entry for entry in self.requests(pane) if entry.error is not None]

    def releases(self, pane: object = None) -> list[Release]:
        """Every release of a pane's agent, with its cause."""
        with self._changed:
            releases = list(self._releases)
        if self.recorder is not None:
            releases = self._releases_from_events()
        return [r for r in releases if pane is None or r.pane_id == pane_id_of(pane)]

    def wait_released(self, pane: object, timeout: float = 10.0) -> Release:
        """The first release of ``pane``'s agent, already logged or still to come, by
        whatever cause (then :meth:`assert_released` says whether a request did it);
        :class:`~pytest_herdr.waits.WaitTimeout` after ``timeout`` seconds (times
        ``HERDR_WAIT_SCALE``)."""
        __tracebackhide__ = True
        pane_id = pane_id_of(pane)
        recorder = self.recorder() if self.recorder is not None else None
        if recorder is not None:
            event = recorder.wait_for(
                "pane_agent_detected",
                lambda data: bool(data.get("released")) and data.get("pane_id") == pane_id,
                timeout,
            )
            return Release(event.at, pane_id, event.data.get("agent"), "unknown")
        deadline = Deadline(timeout * SCALE)
        with self._changed:
            while True:
                for release in self._releases:
                    if release.pane_id == pane_id:
                        self._answered(release, deadline)
                        return release
                left = deadline.left()
                if left <= 0:
                    raise WaitTimeout(
                        f"pane {pane_id}'s agent was not released within {timeout * SCALE:.1f} s"
                        f"\nrequest log of pane {pane_id}:\n{self.render(pane)}"
                    )
                self._changed.wait(left)

    def render(self, pane: object = None) -> str:
        """The agent requests and releases (of ``pane``), one line each, in time order."""
        lines = [(e.at, e.describe()) for e in self.requests(pane, method=AGENT_METHODS)]
        lines += [(r.at, r.describe()) for r in self.releases(pane)]
        if not lines:
            return "  (no agent requests or releases logged)"
        return "\n".join("  " + text for _, text in sorted(lines, key=lambda item: item[0]))

    # -- assertions ---------------------------------------------------------------------------

    def _answered(self, release: Release, deadline: Deadline) -> None:
        """Give a releasing request its answer (written after the release) until
        ``deadline``, so what follows a wait reads it answered."""
        request = release.request
        while request is not None and request.response is None:
            left = deadline.left()
            if left <= 0:
                return
            self._changed.wait(left)

    def _needs_wire(self) -> None:
        __tracebackhide__ = True
        if self.backend != "sim":
            skip_for("request-log", "real")

    def _fail(self, pane: object, message: str) -> None:
        __tracebackhide__ = True
        raise AssertionError(
            f"{message}\nrequest log of pane {pane_id_of(pane)}:\n{self.render(pane)}"
        )

    def assert_reported(
        self,
        pane: object,
        state: str | None = None,
        *,
        source: str | None = None,
        agent: str | None = None,
        seq_increasing: bool = False,
    ) -> list[LoggedRequest]:
        """Assert ``pane`` got a ``pane.report_agent`` Herdr answered ok (of ``state``, from
        ``source``, for ``agent``); with ``seq_increasing`` also that no report, session
        report or release of the pane breaks Herdr's per-source seq rule — a seq not above
        the source's last, or none after the source has sent one — which Herdr answers ok
        and ignores (a source that never sends a seq is not checked). Returns the matching
        reports."""
        __tracebackhide__ = True
        self._needs_wire()
        reports = [
            entry
            for entry in self.reports(pane, source=source)
            if agent is None or entry.agent == agent
        ]
        what = "pane.report_agent" + (f" from {source!r}" if source else "")
        if not reports:
            self._fail(pane, f"no {what} request for pane {pane_id_of(pane)}")
        matching = [e for e in reports if state is None or e.params.get("state") == state]
        accepted = [e for e in matching if e.ok]
        if not accepted:
            refused = [e for e in matching if not e.ok]
            why = f"; it was {refused[-1].outcome()}" if refused else ""
            self._fail(pane, f"no {what} with state={state!r} answered ok{why}")
        if seq_increasing:
            self._check_seq(pane, source)
        return accepted

    def _check_seq(self, pane: object, source: str | None) -> None:
        __tracebackhide__ = True
        last: dict[str | None, LoggedRequest] = {}
        for entry in self.requests(pane, method=SEQUENCED, source=source):
            if not entry.ok:
                continue
            before = last.get(entry.source)
            if entry.seq is None and before is not None and before.seq is not None:
                self._fail(
                    pane,
                    f"{entry.method} from {entry.source!r} without a seq after its seq "
                    f"{before.seq}: Herdr ignores it (answering ok)",
                )
            if (
                before is not None
                and before.seq is not None
                and entry.seq is not None
                and entry.seq <= before.seq
            ):
                self._fail(
                    pane,
                    f"seq {entry.seq} of {entry.method} from {entry.source!r} is not "
                    f"above the {before.seq} before it: Herdr ignores it (answering ok)",
                )
            last[entry.source] = entry

    def assert_released(
        self, pane: object, *, source: str | None = None, agent: str | None = None
    ) -> LoggedRequest:
        """Assert ``pane``'s agent was released by a ``pane.release_agent`` request (from
        ``source``, for ``agent``) that took effect: it released the agent, or — for an
        official source, which Herdr releases when its process exits — a release followed
        it. A release by the safety net or a process exit alone does not count. Returns the
        release request."""
        __tracebackhide__ = True
        self._needs_wire()
        requests = [
            entry
            for entry in self.requests(pane, method="pane.release_agent", source=source)
            if agent is None or entry.agent == agent
        ]
        releases = self.releases(pane)
        if not requests:
            what = "pane.release_agent request" + (f" from {source!r}" if source else "")
            others = "; ".join(f"{r.cause} at {r.at:.3f}s" for r in releases)
            instead = (
                f"; the agent was released by {others} instead"
                if others
                else "; the agent was never released"
            )
            self._fail(pane, f"no {what} for pane {pane_id_of(pane)}{instead}")
        # refused ones did nothing; an unanswered one may still have released (Herdr applies
        # a request before it writes the answer, and a client may hang up first)
        answered = [entry for entry in requests if entry.error is None]
        if not answered:
            self._fail(pane, f"pane.release_agent was {requests[-1].outcome()}")
        for entry in answered:
            for release in releases:
                if release.request is entry or (
                    release.cause == "process-exit" and release.at >= entry.at and _official(entry)
                ):
                    return entry
        self._fail(
            pane,
            f"pane.release_agent from {answered[-1].source!r} was answered ok but released "
            "nothing: Herdr ignores a release whose source is not the pane's authority, "
            "whose agent is not the pane's, or whose seq is stale",
        )
        raise AssertionError  # unreachable: _fail raised


def _official(entry: LoggedRequest) -> bool:
    """A ``herdr:<agent>`` source of Herdr's own integrations (released on process exit)."""
    from herdr_sim.model.agents import is_official

    return (
        entry.source is not None
        and entry.agent is not None
        and is_official(entry.source, entry.agent)
    )
