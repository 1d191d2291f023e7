"""Failure forensics: what a failing test's report shows about the Herdr it talked to.

* :class:`WireTail` — a bounded ring buffer of the last requests and responses on the wire;
  a wire tap (``herdr_sim.server.WIRE_TAPS``, or a
  the observers of a :class:`~pytest_herdr.WireClient` for a real Herdr).
* :func:`timeline_of` — the agent-state timeline, read from the events an
  :class:`~pytest_herdr.events.EventRecorder` recorded from fixture setup to the failure.
* :class:`Forensics` — collects, with protocol methods only (so it works against the
  simulator and a real Herdr), the workspaces, tabs and panes with their layout rectangles
  (``session.snapshot``; ``pane.list`` and ``pane.layout`` when that fails) and every pane's
  visible screen (``pane.read``), then renders the report section
  (:meth:`Forensics.render_text`) and a self-contained HTML page
  (:meth:`Forensics.render_html`, see :mod:`pytest_herdr.html_report`).

Collecting never raises: on a dead server the report says what could not be read.
Environment variables never reach a report: ``env`` maps in requests are redacted.
Importing this module starts nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from herdr_sim.persist.redaction import redact
from orchestrator.client import wire
from orchestrator.client.errors import ProtocolError

from .events import OWN_ID as EVENTS_ID
from .scene import Line, PaneView, Scene, TabView, TimelineEntry, WireEntry, WorkspaceView

if TYPE_CHECKING:
    from .events import EventRecorder, RecordedEvent

__all__ = [
    "Forensics",
    "Line",
    "PaneView",
    "Scene",
    "TabView",
    "TimelineEntry",
    "WireEntry",
    "WireTail",
    "WorkspaceView",
    "redact",
    "timeline_of",
]

#: request ids the forensics tools use; a :class:`WireTail` leaves their lines out
ID_PREFIX = "pytest-herdr:forensics"


def _short_error(exc: BaseException) -> str:
    text = str(exc) or exc.__class__.__name__
    return f"{exc.__class__.__name__}: {text}" if text != exc.__class__.__name__ else text


# -- requests (the project's one wire client; bounded, every failure a _Failed) -------------


class _Failed(Exception):
    """A request got an error envelope or no answer."""


def _request(path: Path, method: str, params: Line, timeout: float, request_id: str) -> Line:
    try:
        response = wire.request(path, method, params, request_id=request_id, timeout=timeout)
    except ProtocolError:
        raise _Failed(f"{method}: connection closed without an answer") from None
    except OSError as exc:
        raise _Failed(f"{method}: {_short_error(exc)}") from None
    if "error" in response:
        error = response["error"]
        raise _Failed(f"{method}: {error.get('code')}: {error.get('message')}")
    result: Line = response.get("result", {})
    return result


# -- the protocol tail ----------------------------------------------------------------------


class WireTail:
    """The last ``size`` wire lines (requests and responses by default); a wire tap."""

    def __init__(
        self,
        size: int = 40,
        *,
        origin: float | None = None,
        kinds: Iterable[str] = ("request", "response"),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self.origin = clock() if origin is None else origin
        self.kinds = frozenset(kinds)
        self._entries: deque[WireEntry] = deque(maxlen=size)
        self._lock = threading.Lock()
        #: lines seen in all (the tail keeps the last ``size``)
        self.seen = 0

    def __call__(self, kind: str, line: Line) -> None:
        if kind not in self.kinds or not isinstance(line, dict):
            return
        if str(line.get("id", "")).startswith((ID_PREFIX, EVENTS_ID)):
            return  # the forensics' and the event recorder's own requests
        entry = WireEntry(self._clock() - self.origin, kind, redact(line))
        with self._lock:
            self._entries.append(entry)
            self.seen += 1

    def entries(self) -> list[WireEntry]:
        """The kept lines, oldest first."""
        with self._lock:
            return list(self._entries)

    @contextlib.contextmanager
    def attached(self) -> Any:
        """Tap every in-process simulator while the block runs."""
        from herdr_sim.server import WIRE_TAPS

        WIRE_TAPS.append(self)
        try:
            yield self
        finally:
            WIRE_TAPS.remove(self)


# -- the agent timeline ---------------------------------------------------------------------


def timeline_of(events: Iterable[RecordedEvent]) -> list[TimelineEntry]:
    """The agent-state timeline in a recorder's events: panes appearing and ending, agents
    detected and released, every status change."""
    entries = []
    for event in events:
        data = event.data
        pane_id = str(data.get("pane_id") or data.get("pane", {}).get("pane_id", "?"))
        kind = event.kind
        if kind in ("pane.agent_status_changed", "pane_agent_status_changed"):
            title = data.get("title")
            entries.append(TimelineEntry(event.at, pane_id, "status", data.get("agent"),
                                         data.get("agent_status"),
                                         f"title={title!r}" if title else ""))  # fmt: skip
        elif kind == "pane_agent_detected":
            released = bool(data.get("released"))
            entries.append(TimelineEntry(event.at, pane_id, "released" if released else "detected",
                                         data.get("agent"), data.get("final_status")))  # fmt: skip
        elif kind in ("pane_created", "pane_closed", "pane_exited"):
            entries.append(TimelineEntry(event.at, pane_id, kind.removeprefix("pane_")))
    return entries


# -- the scene: what the server shows -------------------------------------------------------


def _box(caption: str, text: str, width_cap: int = 160) -> list[str]:
    body = text.rstrip("\n").split("\n") if text.strip() else ["(blank)"]
    while body and not body[-1].strip():
        body.pop()
    body = [line.rstrip()[:width_cap] for line in body] or ["(blank)"]
    width = max(len(caption) + 4, *(len(line) for line in body))
    top = f"┌─ {caption} " + "─" * (width - len(caption) - 3) + "┐"
    return [top, *(f"│{line.ljust(width)}│" for line in body), "└" + "─" * width + "┘"]


def _heading(title: str) -> str:
    return f"──────── {title} " + "─" * max(4, 60 - len(title))


def _json_short(line: Line, limit: int = 300) -> str:
    text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Forensics:
    """Collects a failing test's Herdr state and renders the report section and HTML page."""

    def __init__(
        self,
        socket_path: str | os.PathLike[str],
        *,
        tail: WireTail | None = None,
        events: EventRecorder | None = None,
        origin: float | None = None,
        timeout: float = 2.0,
        screen_lines: int | None = None,
        title: str = "",
    ) -> None:
        self.socket_path = Path(socket_path)
        self.origin = time.monotonic() if origin is None else origin
        self.tail = tail if tail is not None else WireTail(origin=self.origin)
        self.events = events
        self.timeout = timeout
        self.screen_lines = screen_lines
        self.title = title
        self._ids = iter(range(1, 1 << 62))
        self._scene: Scene | None = None
        self._tail_entries: list[WireEntry] | None = None

    # -- collecting -----------------------------------------------------------------------

    def _call(self, method: str, params: Line) -> Line:
        request_id = f"{ID_PREFIX}:{next(self._ids)}"
        return _request(self.socket_path, method, params, self.timeout, request_id)

    def collect(self) -> Scene:
        """Read the server's workspaces, tabs, panes, layouts and screens. Never raises."""
        if self._tail_entries is None:
            self._tail_entries = self.tail.entries()  # before our own requests
        scene = Scene()
        try:
            self._collect_into(scene)
        except Exception as exc:  # the report must never break on a broken server
            scene.errors.append(f"collection stopped: {_short_error(exc)}")
        self._scene = scene
        return scene

    def _collect_into(self, scene: Scene) -> None:
        try:
            snapshot = self._call("session.snapshot", {}).get("snapshot", {})
        except _Failed as exc:
            scene.errors.append(f"could not read session.snapshot: {exc}")
            snapshot = self._fallback_snapshot(scene)
            if snapshot is None:
                return
        scene.focused_pane_id = snapshot.get("focused_pane_id")
        layouts = {lay.get("tab_id"): lay for lay in snapshot.get("layouts", [])}
        panes_by_tab: dict[str, list[Line]] = {}
        for pane in snapshot.get("panes", []):
            panes_by_tab.setdefault(str(pane.get("tab_id")), []).append(pane)
        tabs_by_ws: dict[str, list[Line]] = {}
        for tab in snapshot.get("tabs", []):
            tabs_by_ws.setdefault(str(tab.get("workspace_id")), []).append(tab)
        for ws in snapshot.get("workspaces", []):
            view = WorkspaceView(ws)
            for tab in tabs_by_ws.get(str(ws.get("workspace_id")), []):
                layout = layouts.get(tab.get("tab_id"))
                rects = {p.get("pane_id"): p.get("rect") for p in (layout or {}).get("panes", [])}
                tab_view = TabView(tab, layout)
                for pane in panes_by_tab.get(str(tab.get("tab_id")), []):
                    pane_view = PaneView(pane, rects.get(pane.get("pane_id")))
                    self._read_screen(pane_view)
                    tab_view.panes.append(pane_view)
                view.tabs.append(tab_view)
            scene.workspaces.append(view)

    def _fallback_snapshot(self, scene: Scene) -> Line | None:
        """Build a snapshot from workspace.list, tab.list, pane.list and pane.layout."""
        try:
            workspaces = self._call("workspace.list", {}).get("workspaces", [])
            tabs = self._call("tab.list", {}).get("tabs", [])
            panes = self._call("pane.list", {}).get("panes", [])
        except _Failed as exc:
            scene.errors.append(f"could not read the panes: {exc}")
            return None
        layouts = []
        seen_tabs: set[str] = set()
        for pane in panes:
            tab_id = str(pane.get("tab_id"))
            if tab_id in seen_tabs:
                continue
            seen_tabs.add(tab_id)
            try:
                layouts.append(
                    self._call("pane.layout", {"pane_id": pane.get("pane_id")}).get("layout", {})
                )
            except _Failed as exc:
                scene.errors.append(f"could not read the layout of tab {tab_id}: {exc}")
        focused = next((p.get("pane_id") for p in panes if p.get("focused")), None)
        return {
            "workspaces": workspaces,
            "tabs": tabs,
            "panes": panes,
            "layouts": layouts,
            "focused_pane_id": focused,
        }

    def _read_screen(self, pane: PaneView) -> None:
        params: Line = {"pane_id": pane.pane_id, "source": "visible"}
        if self.screen_lines is not None:
            params["lines"] = self.screen_lines
        try:
            read = self._call("pane.read", params).get("read", {})
        except _Failed as exc:
            pane.screen_error = str(exc)
            return
        pane.screen = str(read.get("text", ""))

    @property
    def scene(self) -> Scene:
        """The collected scene (collected now if not yet)."""
        return self._scene if self._scene is not None else self.collect()

    def wire_entries(self) -> list[WireEntry]:
        """The protocol tail as it stood when collection began."""
        if self._tail_entries is None:
            return self.tail.entries()
        return self._tail_entries

    def timeline_entries(self) -> list[TimelineEntry]:
        """The agent timeline (empty when no events were recorded)."""
        return timeline_of(self.events.events) if self.events is not None else []

    def timeline_errors(self) -> list[str]:
        """Why the timeline may be incomplete (the recorder's failure, if any)."""
        error = self.events.error if self.events is not None else None
        return [error] if error else []

    # -- rendering ------------------------------------------------------------------------

    def render_text(self) -> str:
        """The report section: headed blocks "panes", "protocol tail", "agent timeline"."""
        scene = self.scene
        out = [_heading("panes")]
        out.extend(f"! {error}" for error in scene.errors)
        if not scene.workspaces and not scene.errors:
            out.append("(no workspaces)")
        for ws in scene.workspaces:
            for tab in ws.tabs:
                out.append(
                    f"workspace {ws.info.get('workspace_id')} {ws.info.get('label', '')!r}"
                    f"{' (focused)' if ws.info.get('focused') else ''}"
                    f" · tab {tab.info.get('tab_id')} {tab.info.get('label', '')!r}"
                    f"{' (active)' if tab.info.get('focused') else ''}"
                    f"{' · zoomed' if (tab.layout or {}).get('zoomed') else ''}"
                )
                for pane in tab.panes:
                    if pane.screen is None:
                        text = f"(screen not readable: {pane.screen_error})"
                    else:
                        text = pane.screen
                    out.extend(_box(pane.caption(), text))
        entries = self.wire_entries()
        out.append(_heading(f"protocol tail (last {len(entries)} of {self.tail.seen})"))
        if not entries:
            out.append("(nothing recorded)")
        for entry in entries:
            arrow = "→" if entry.kind == "request" else "←" if entry.kind == "response" else "⇠"
            out.append(f"+{entry.at:7.3f}s {arrow} {_json_short(entry.line)}")
        timeline = self.timeline_entries()
        out.append(_heading("agent timeline"))
        if self.events is None:
            out.append("(not recorded)")
        else:
            out.extend(entry.text() for entry in timeline)
            if not timeline:
                out.append("(no agent activity)")
            out.extend(f"! {error}" for error in self.timeline_errors())
        return "\n".join(out) + "\n"

    def render_html(
        self, path: str | os.PathLike[str], *, failure: str | None = None, pings: bool = False
    ) -> Path:
        """Write one self-contained HTML page drawing the panes at their layout rectangles
        (``failure``: the test's failure message and traceback, shown first; ``pings``:
        keep ping requests and their answers in the protocol tail)."""
        from .html_report import render_page

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            render_page(
                self.title or "herdr forensics",
                self.scene,
                self.wire_entries(),
                self.timeline_entries(),
                self.timeline_errors(),
                failure=failure,
                pings=pings,
            ),
            encoding="utf-8",
        )
        return target
