"""What the forensics read, as plain data: wire lines, the agent timeline and the scene.

:mod:`pytest_herdr.forensics` collects these and :mod:`pytest_herdr.html_report` renders
them; both import this module and neither imports the other's, so the two stay free of an
import circle (the renderer used to import its data types back from the collector).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Line", "PaneView", "Scene", "TabView", "TimelineEntry", "WireEntry", "WorkspaceView"]

Line = dict[str, Any]


@dataclass(frozen=True)
class WireEntry:
    """One line seen on the wire."""

    at: float  # seconds since the origin
    kind: str  # "request", "response" or "event"
    line: Line


@dataclass(frozen=True)
class TimelineEntry:
    """One agent-state observation."""

    at: float  # seconds since the test started
    pane_id: str
    what: str  # "initial", "status", "detected", "released", "created", "closed", "exited"
    agent: str | None = None
    status: str | None = None
    detail: str = ""

    def text(self) -> str:
        """One line of the report."""
        parts = [f"+{self.at:7.3f}s", f"{self.pane_id:<8}", self.what]
        if self.agent:
            parts.append(f"agent={self.agent}")
        if self.status:
            parts.append(f"status={self.status}")
        if self.detail:
            parts.append(self.detail)
        return " ".join(parts)


@dataclass
class PaneView:
    """One pane: its PaneInfo, layout rectangle and visible screen."""

    info: Line
    rect: Line | None = None
    screen: str | None = None
    screen_error: str | None = None

    @property
    def pane_id(self) -> str:
        """The pane's id."""
        return str(self.info.get("pane_id", "?"))

    @property
    def focused(self) -> bool:
        """Focused in its tab's layout (else as PaneInfo says)."""
        return bool(self.info.get("focused"))

    def caption(self) -> str:
        """``w1:p1 · agent pi · working · focused · 60x40 at 0,0``"""
        parts = [self.pane_id]
        if self.info.get("label"):
            parts.append(repr(self.info["label"]))
        parts.append(f"agent {self.info.get('agent') or '-'}")
        parts.append(str(self.info.get("agent_status", "unknown")))
        if self.focused:
            parts.append("focused")
        if self.rect:
            rect = self.rect
            parts.append(
                f"{rect.get('width')}x{rect.get('height')} at {rect.get('x')},{rect.get('y')}"
            )
        return " · ".join(parts)


@dataclass
class TabView:
    """One tab: its TabInfo, layout and panes (in layout order)."""

    info: Line
    layout: Line | None
    panes: list[PaneView] = field(default_factory=list)


@dataclass
class WorkspaceView:
    """One workspace and its tabs."""

    info: Line
    tabs: list[TabView] = field(default_factory=list)


@dataclass
class Scene:
    """Everything :meth:`Forensics.collect` read (and what it could not)."""

    workspaces: list[WorkspaceView] = field(default_factory=list)
    focused_pane_id: str | None = None
    errors: list[str] = field(default_factory=list)

    def panes(self) -> list[PaneView]:
        """Every pane of every tab."""
        return [pane for ws in self.workspaces for tab in ws.tabs for pane in tab.panes]
