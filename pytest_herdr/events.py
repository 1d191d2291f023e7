"""Recording every event a server emits during a test (the ``herdr_events`` fixture).

Herdr streams lifecycle events to any ``events.subscribe`` client, but a pane's agent
status changes only reach a subscription filtered on that pane. The recorder keeps one
lifecycle stream and opens a status stream for every pane, present or created later, all
on one thread with a selector, so a test sees the whole story in order: which pane appeared,
which agent was detected, every status it went through.
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

#: events that make the agent-state timeline of a failure report
AGENT_EVENTS = ("pane_agent_detected", "pane.agent_status_changed", "pane_agent_status_changed")


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
        self._thread: threading.Thread | None = None
        self._started_at = time.monotonic()
        self._ids = itertools.count(1)
        self.error: str | None = None

    def _next_id(self) -> str:
        return f"{OWN_ID}:{next(self._ids)}"

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> EventRecorder:
        """Subscribe (lifecycle + every existing pane) and start recording."""
        self._started_at = time.monotonic()
        self._open([{"type": name} for name in LIFECYCLE])
        panes = call(self.socket_path, "pane.list", {}, timeout=10, request_id=self._next_id())[
            "panes"
        ]
        for pane in panes:
            self._watch_pane(pane["pane_id"])
        self._thread = threading.Thread(target=self._run, name="herdr-events", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop recording and hang up every stream (bounded; never raises)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for key in list(self._selector.get_map().values()):
            with contextlib.suppress(Exception):
                self._selector.unregister(key.fileobj)
            with contextlib.suppress(OSError):
                key.fileobj.close()  # type: ignore[union-attr]
        self._selector.close()

    # -- reading ------------------------------------------------------------------------------

    @property
    def events(self) -> list[RecordedEvent]:
        """Everything recorded so far (a copy)."""
        with self._changed:
            return list(self._events)

    def of(self, *kinds: str) -> list[RecordedEvent]:
        """The recorded events of the given kinds (either envelope spelling)."""
        wanted = set(kinds) | {kind.replace(".", "_") for kind in kinds}
        return [event for event in self.events if event.kind in wanted]

    def timeline(self) -> list[RecordedEvent]:
        """Agent detection and status events: the agent-state timeline."""
        return self.of(*AGENT_EVENTS)

    def wait_for(
        self,
        kind: str,
        predicate: Callable[[dict[str, Any]], bool] = lambda data: True,
        timeout: float = 10.0,
    ) -> RecordedEvent:
        """The first recorded event of ``kind`` whose data satisfies ``predicate`` (already
        recorded or still to come); :class:`WaitTimeout` after ``timeout`` seconds."""
        wanted = {kind, kind.replace(".", "_")}
        deadline = time.monotonic() + timeout * SCALE
        with self._changed:
            while True:
                for event in self._events:
                    if event.kind in wanted and predicate(event.data):
                        return event
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WaitTimeout(f"no {kind} event matched within {timeout * SCALE:.1f} s")
                self._changed.wait(left)

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

    def _watch_pane(self, pane_id: str) -> None:
        with self._watch_lock:
            if pane_id in self._watched:
                return
            self._watched.add(pane_id)
            self._open([{"type": "pane.agent_status_changed", "pane_id": pane_id}])

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and self._selector.get_map():
                for key, _ in self._selector.select(timeout=0.1):
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
                    self._watch_pane(pane["pane_id"])
        with self._changed:
            if len(self._events) < self.limit:
                self._events.append(event)
            self._changed.notify_all()
