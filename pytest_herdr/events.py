"""Recording every event a server emits during a test (the ``herdr_events`` fixture).

Herdr streams lifecycle events to any ``events.subscribe`` client, but a pane's agent
status changes only reach a subscription filtered on that pane. The recorder keeps one
lifecycle stream and opens a status stream for every pane, present or created later, all
on one thread with a selector, so a test sees the whole story in order: which pane appeared,
which agent was detected, every status it went through.

The recorder reads its streams on its own thread, so a server-side wait (``events.wait``,
``agent.wait``) can return before the recorder has read the same change; Herdr even delivers
at most one event per subscription per 100 ms tick. :meth:`EventRecorder.catch_up` closes
that gap (``herdr_wait`` calls it after each status wait), and :meth:`EventRecorder.mark`
with ``since=`` lets a test look at only what happened after a point.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from herdr_sim.client import call
from orchestrator.client.poll import Deadline

from .waits import SCALE, WaitTimeout

#: the id prefix of the recorder's own requests (contract coverage and protocol tails leave
#: them out); each request gets a number after it, as replies are paired with requests by id
OWN_ID = "pytest-herdr:events"

#: the lifecycle subscriptions Herdr accepts (protocol 22), dot-named
LIFECYCLE = (
    "workspace.created", "workspace.updated", "workspace.renamed", "workspace.moved",
    "workspace.closed", "workspace.focused", "tab.created", "tab.closed", "tab.focused",
    "tab.renamed", "tab.moved", "pane.created", "pane.closed", "pane.updated", "pane.focused",
    "pane.moved", "pane.exited", "pane.agent_detected", "layout.updated",
)  # fmt: skip

#: the selector data of the recorder's wake-up socket (streams carry none)
_WAKE = "wake"
#: events that make the agent-state timeline of a failure report
AGENT_EVENTS = ("pane_agent_detected", "pane.agent_status_changed", "pane_agent_status_changed")
#: the two spellings of a pane's agent status change (filtered subscription, hub)
STATUS_EVENTS = frozenset({"pane.agent_status_changed", "pane_agent_status_changed"})
#: how long :meth:`EventRecorder.catch_up` gives the recorder by default (times
#: ``HERDR_WAIT_SCALE``): Herdr sends a subscription at most one event per 100 ms tick
CATCH_UP_TIMEOUT = 5.0


@dataclass(frozen=True)
class RecordedEvent:
    """One event envelope and when it arrived (seconds since the recorder started)."""

    at: float
    envelope: dict[str, Any]

    @property
    def kind(self) -> str:
        """The envelope's ``event`` name (``pane_created``, ``pane.agent_status_changed`` …)."""
        return str(self.envelope.get("event", ""))

    @property
    def data(self) -> dict[str, Any]:
        """The event's payload."""
        data: dict[str, Any] = self.envelope.get("data", {})
        return data


class EventRecorder:
    """Records the events of one server from :meth:`start` to :meth:`stop`."""

    def __init__(self, socket_path: Path | str, limit: int = 10_000) -> None:
        self.socket_path = Path(socket_path)
        self.limit = limit
        self._events: list[RecordedEvent] = []
        self._changed = threading.Condition()
        self._selector = selectors.DefaultSelector()
        self._buffers: dict[socket.socket, bytes] = {}
        self._watched: set[str] = set()
        self._watch_lock = threading.Lock()
        self._stop = threading.Event()
        #: written by :meth:`stop` to wake the reading thread out of its ``select`` (made
        #: with the subscriptions, closed by :meth:`stop`)
        self._wake: tuple[socket.socket, socket.socket] | None = None
        self._thread: threading.Thread | None = None
        self._started_at = time.monotonic()
        self._ids = itertools.count(1)
        #: each watched pane's latest agent status the recorder knows of (its events, or the
        #: pane's status when the watch began)
        self._status: dict[str, str] = {}
        self.error: str | None = None

    def _next_id(self) -> str:
        return f"{OWN_ID}:{next(self._ids)}"

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> EventRecorder:
        """Subscribe (lifecycle + every existing pane) and start recording."""
        self._started_at = time.monotonic()
        self._subscribe()
        return self

    def reconnect(self) -> EventRecorder:
        """Subscribe again after the server restarted (:meth:`stop` first), keeping what
        was recorded: the recording goes on where it stopped, its clock too."""
        self._stop = threading.Event()
        self._selector = selectors.DefaultSelector()
        self._buffers = {}
        with self._changed:
            self._watched = set()
            self._status = {}
        self._subscribe()
        return self

    def _subscribe(self) -> None:
        self._wake = socket.socketpair()
        self._selector.register(self._wake[0], selectors.EVENT_READ, _WAKE)
        self._open([{"type": name} for name in LIFECYCLE])
        panes = call(self.socket_path, "pane.list", {}, timeout=10, request_id=self._next_id())[
            "panes"
        ]
        for pane in panes:
            self._watch_pane(pane["pane_id"], pane.get("agent_status"))
        self._thread = threading.Thread(target=self._run, name="herdr-events", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop recording and hang up every stream (bounded; never raises; idempotent)."""
        self._stop.set()
        wake, self._wake = self._wake, None
        if wake is not None:
            with contextlib.suppress(OSError):
                wake[1].send(b"x")  # the thread wakes now, not at a poll's end
        if self._thread is not None:
            self._thread.join(timeout=5)
        streams = self._selector.get_map()  # None once the selector is closed
        for key in list(streams.values()) if streams is not None else []:
            with contextlib.suppress(Exception):
                self._selector.unregister(key.fileobj)
            with contextlib.suppress(OSError):
                key.fileobj.close()  # type: ignore[union-attr]
        self._selector.close()
        for end in wake or ():
            end.close()

    # -- reading ------------------------------------------------------------------------------

    @property
    def events(self) -> list[RecordedEvent]:
        """Everything recorded so far (a copy)."""
        with self._changed:
            return list(self._events)

    def mark(self) -> int:
        """A point in the recording: pass it as ``since=`` to :meth:`of`, :meth:`timeline`
        or :meth:`wait_for` to see only what was recorded after it."""
        with self._changed:
            return len(self._events)

    def of(self, *kinds: str, since: int = 0) -> list[RecordedEvent]:
        """The recorded events of the given kinds (either envelope spelling), from ``since``
        (a :meth:`mark`) on."""
        wanted = _spellings(kinds)
        return [event for event in self.events[since:] if event.kind in wanted]

    def timeline(self, since: int = 0) -> list[RecordedEvent]:
        """Agent detection and status events: the agent-state timeline (from ``since`` on)."""
        return self.of(*AGENT_EVENTS, since=since)

    def statuses(self, pane_id: str, since: int = 0) -> list[str]:
        """The agent statuses recorded for ``pane_id``, in order (from ``since`` on)."""
        return [
            str(event.data.get("agent_status"))
            for event in self.of(*STATUS_EVENTS, since=since)
            if event.data.get("pane_id") == pane_id
        ]

    def status_of(self, pane_id: str) -> str | None:
        """The latest agent status the recorder knows for ``pane_id``: its last status
        event, else the status it had when listed or created (None: not known)."""
        with self._changed:
            return self._status.get(pane_id)

    def wait_for(
        self,
        kind: str,
        predicate: Callable[[dict[str, Any]], bool] = lambda data: True,
        timeout: float = 10.0,
        *,
        since: int = 0,
    ) -> RecordedEvent:
        """The first event of ``kind`` recorded from ``since`` (a :meth:`mark`; default: the
        start) whose data satisfies ``predicate``, already recorded or still to come;
        :class:`WaitTimeout` after ``timeout`` seconds."""
        wanted = _spellings((kind,))
        deadline = Deadline(timeout * SCALE)
        with self._changed:
            while True:
                for event in self._events[since:]:
                    if event.kind in wanted and predicate(event.data):
                        return event
                left = deadline.left()
                if left <= 0:
                    since_text = f" since mark {since}" if since else ""
                    raise WaitTimeout(
                        f"no {kind} event matched{since_text} within {timeout * SCALE:.1f} s"
                    )
                self._changed.wait(left)

    def catch_up(
        self,
        pane_id: str,
        status: str,
        *,
        since: int = 0,
        timeout: float = CATCH_UP_TIMEOUT,
        changed: bool = False,
    ) -> None:
        """Return once the recorder has seen ``pane_id`` reach ``status``: a status event
        recorded from ``since`` on, or (unless ``changed``: the status is known to have
        changed since ``since``, as after a prompt's turn) ``status`` being the latest status
        it knows for the pane. A server-side wait that returned ``status`` calls this so that
        what the test reads from the recorder next includes it. A pane the recorder does not
        watch is left alone (it cannot be caught up with); :class:`WaitTimeout` if the
        recorder has not seen it within ``timeout`` seconds."""
        deadline = Deadline(timeout * SCALE)
        with self._changed:
            if pane_id not in self._watched:
                return
            while not self._caught_up(pane_id, status, since, changed):
                left = deadline.left()
                if left <= 0 or self.error is not None:  # a stopped recorder records no more
                    why = self.error or f"not within {timeout * SCALE:.1f} s"
                    raise WaitTimeout(
                        f"Herdr reported {pane_id} {status}, but herdr_events has not recorded "
                        f"it: {why} (latest recorded status: {self._status.get(pane_id)!r})"
                    )
                self._changed.wait(left)

    def _caught_up(self, pane_id: str, status: str, since: int, changed: bool) -> bool:
        # a watched pane with nothing recorded is a plain pane: Herdr calls it unknown
        if not changed and self._status.get(pane_id, "unknown") == status:
            return True
        return any(
            event.kind in STATUS_EVENTS
            and event.data.get("pane_id") == pane_id
            and event.data.get("agent_status") == status
            for event in self._events[since:]
        )

    # -- the recording thread -------------------------------------------------------------------

    def _open(self, subscriptions: list[dict[str, Any]]) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(str(self.socket_path))
        line = {"id": self._next_id(), "method": "events.subscribe",
                "params": {"subscriptions": subscriptions}}  # fmt: skip
        sock.sendall(json.dumps(line).encode() + b"\n")
        # Read the acknowledgement here: once it is in, the subscription is live, so no
        # change made after this call returns can be missed.
        buffer = b""
        while b"\n" not in buffer:
            chunk = sock.recv(65536)
            if not chunk:
                sock.close()
                raise OSError("the server closed the subscription before acknowledging it")
            buffer += chunk
        _ack, _, rest = buffer.partition(b"\n")
        sock.setblocking(False)
        self._buffers[sock] = rest
        self._selector.register(sock, selectors.EVENT_READ)

    def watch(self, pane_id: str) -> None:
        """Record ``pane_id``'s agent status changes from now on, for sure.

        Panes are watched on their own once their ``pane_created`` event comes in, but a
        status change in the moment between is lost (Herdr's subscriptions are live-only).
        A test that drives a pane it just created calls this first; the fixtures do it for
        ``herdr_workspace``'s root pane.
        """
        self._watch_pane(pane_id)

    def _watch_pane(self, pane_id: str, status: object = None) -> None:
        with self._watch_lock:
            if pane_id not in self._watched:
                self._open([{"type": "pane.agent_status_changed", "pane_id": pane_id}])
                with self._changed:
                    self._watched.add(pane_id)
        with self._changed:
            if isinstance(status, str):
                # the status the pane had when listed or created (PaneInfo): the
                # subscription reports only changes, and an event already recorded is newer
                self._status.setdefault(pane_id, status)
            self._changed.notify_all()

    def _run(self) -> None:
        # No timeout: :meth:`stop` wakes the thread through ``_wake`` (a 100 ms poll made
        # every test's teardown wait 50 ms on average for the thread to notice). The loop
        # ends too when every stream is gone, the wake-up socket being all that is left.
        try:
            while not self._stop.is_set() and len(self._selector.get_map()) > 1:
                for key, _ in self._selector.select():
                    if key.data == _WAKE:
                        continue  # stop() asked: the loop's condition says so
                    self._read(key.fileobj)  # type: ignore[arg-type]
        except Exception as exc:  # the recorder must never take a test down with it
            self.error = f"event recorder stopped: {exc!r}"

    def _read(self, sock: socket.socket) -> None:
        try:
            chunk = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._selector.unregister(sock)
            sock.close()
            return
        buffer = self._buffers[sock] + chunk
        *lines, self._buffers[sock] = buffer.split(b"\n")
        for raw in lines:
            envelope = json.loads(raw)
            if "event" not in envelope:
                continue  # the subscription's acknowledgement (or an error for a gone pane)
            self._record(envelope)

    def _record(self, envelope: dict[str, Any]) -> None:
        event = RecordedEvent(round(time.monotonic() - self._started_at, 4), envelope)
        if event.kind == "pane_created":
            pane = event.data.get("pane", {})
            if "pane_id" in pane:
                with contextlib.suppress(OSError):
                    self._watch_pane(pane["pane_id"], pane.get("agent_status"))
        with self._changed:
            if event.kind in STATUS_EVENTS and "pane_id" in event.data:
                self._status[str(event.data["pane_id"])] = str(event.data.get("agent_status"))
            if len(self._events) < self.limit:
                self._events.append(event)
            self._changed.notify_all()


def _spellings(kinds: tuple[str, ...] | list[str]) -> set[str]:
    """Both envelope spellings of each kind (``pane.created`` and ``pane_created``)."""
    return set(kinds) | {kind.replace(".", "_") for kind in kinds}
