"""Typed results: frozen dataclasses built from Herdr's wire objects.

Each type names the fields callers use and keeps the whole wire object in ``raw``, so fields
added by a newer Herdr are never lost and nothing has to be re-encoded for the CLI-shaped
output of :meth:`HerdrClient.execute`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self


def _opt_str(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Pong:
    """``ping``: the server's version, protocol number and capabilities.

    Over the CLI the answer is ``herdr status server --json``, which adds ``running`` (false
    when no server listens: the command still exits 0) and ``compatible`` (whether that
    ``herdr`` executable speaks the server's protocol); over the socket both are ``None``.
    """

    version: str
    protocol: int | None
    capabilities: dict[str, Any] | None
    raw: dict[str, Any] = field(repr=False, compare=False)
    running: bool | None = None
    compatible: bool | None = None

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        protocol = raw.get("protocol")
        caps = raw.get("capabilities")
        running, compatible = raw.get("running"), raw.get("compatible")
        return cls(
            version=str(raw.get("version", "")),
            protocol=protocol if isinstance(protocol, int) else None,
            capabilities=caps if isinstance(caps, dict) else None,
            raw=raw,
            running=running if isinstance(running, bool) else None,
            compatible=compatible if isinstance(compatible, bool) else None,
        )


@dataclass(frozen=True)
class WorkspaceInfo:
    """One workspace (``WorkspaceInfo``)."""

    workspace_id: str
    number: int
    label: str
    focused: bool
    pane_count: int
    tab_count: int
    active_tab_id: str
    agent_status: str
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        return cls(
            workspace_id=raw["workspace_id"],
            number=int(raw.get("number", 0)),
            label=str(raw.get("label", "")),
            focused=bool(raw.get("focused", False)),
            pane_count=int(raw.get("pane_count", 0)),
            tab_count=int(raw.get("tab_count", 0)),
            active_tab_id=str(raw.get("active_tab_id", "")),
            agent_status=str(raw.get("agent_status", "unknown")),
            raw=raw,
        )


@dataclass(frozen=True)
class TabInfo:
    """One tab (``TabInfo``)."""

    tab_id: str
    workspace_id: str
    number: int
    label: str
    focused: bool
    pane_count: int
    agent_status: str
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        return cls(
            tab_id=raw["tab_id"],
            workspace_id=str(raw.get("workspace_id", "")),
            number=int(raw.get("number", 0)),
            label=str(raw.get("label", "")),
            focused=bool(raw.get("focused", False)),
            pane_count=int(raw.get("pane_count", 0)),
            agent_status=str(raw.get("agent_status", "unknown")),
            raw=raw,
        )


@dataclass(frozen=True)
class PaneInfo:
    """One pane (``PaneInfo``)."""

    pane_id: str
    terminal_id: str
    workspace_id: str
    tab_id: str
    focused: bool
    agent_status: str
    revision: int
    cwd: str | None
    agent: str | None
    label: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        return cls(
            pane_id=raw["pane_id"],
            terminal_id=str(raw.get("terminal_id", "")),
            workspace_id=str(raw.get("workspace_id", "")),
            tab_id=str(raw.get("tab_id", "")),
            focused=bool(raw.get("focused", False)),
            agent_status=str(raw.get("agent_status", "unknown")),
            revision=int(raw.get("revision", 0)),
            cwd=_opt_str(raw, "cwd"),
            agent=_opt_str(raw, "agent"),
            label=_opt_str(raw, "label"),
            raw=raw,
        )


@dataclass(frozen=True)
class AgentInfo:
    """One agent (``AgentInfo``): a pane whose terminal hosts a recognised agent."""

    terminal_id: str
    pane_id: str
    workspace_id: str
    tab_id: str
    name: str | None
    agent: str | None
    agent_status: str
    launch_pending: bool
    interactive_ready: bool
    state_change_seq: int
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        return cls(
            terminal_id=str(raw.get("terminal_id", "")),
            pane_id=str(raw.get("pane_id", "")),
            workspace_id=str(raw.get("workspace_id", "")),
            tab_id=str(raw.get("tab_id", "")),
            name=_opt_str(raw, "name"),
            agent=_opt_str(raw, "agent"),
            agent_status=str(raw.get("agent_status", "unknown")),
            launch_pending=bool(raw.get("launch_pending", False)),
            interactive_ready=bool(raw.get("interactive_ready", False)),
            state_change_seq=int(raw.get("state_change_seq", 0)),
            raw=raw,
        )


@dataclass(frozen=True)
class PaneRead:
    """A ``pane.read`` / ``agent.read`` result (``PaneReadResult``).

    ``truncated`` and ``revision`` are ``None`` when unknown: Herdr's CLI prints only the
    text of a read, so a read over the CLI cannot say whether it was cut.
    """

    pane_id: str
    source: str
    format: str
    text: str
    truncated: bool | None
    raw: dict[str, Any] = field(repr=False, compare=False)
    revision: int | None = None

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        truncated = raw.get("truncated")
        revision = raw.get("revision")
        return cls(
            pane_id=str(raw.get("pane_id", "")),
            source=str(raw.get("source", "")),
            format=str(raw.get("format", "text")),
            text=str(raw.get("text", "")),
            truncated=truncated if isinstance(truncated, bool) else None,
            raw=raw,
            revision=revision if isinstance(revision, int) else None,
        )


@dataclass(frozen=True)
class OutputMatch:
    """A ``pane.wait_for_output`` success (``output_matched``)."""

    pane_id: str
    matched_line: str
    read: PaneRead
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        return cls(
            pane_id=str(raw.get("pane_id", "")),
            matched_line=str(raw.get("matched_line", "")),
            read=PaneRead.from_wire(dict(raw.get("read") or {})),
            raw=raw,
        )


@dataclass(frozen=True)
class WorkspaceCreated:
    """``workspace.create``: the workspace, its first tab and that tab's root pane."""

    workspace: WorkspaceInfo
    tab: TabInfo
    root_pane: PaneInfo
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        return cls(
            workspace=WorkspaceInfo.from_wire(raw["workspace"]),
            tab=TabInfo.from_wire(raw["tab"]),
            root_pane=PaneInfo.from_wire(raw["root_pane"]),
            raw=raw,
        )


@dataclass(frozen=True)
class TabCreated:
    """``tab.create``: the tab and its root pane."""

    tab: TabInfo
    root_pane: PaneInfo
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        return cls(
            tab=TabInfo.from_wire(raw["tab"]),
            root_pane=PaneInfo.from_wire(raw["root_pane"]),
            raw=raw,
        )


@dataclass(frozen=True)
class AgentStarted:
    """``agent start``: the agent once ready and the argv typed into its pane."""

    agent: AgentInfo
    argv: tuple[str, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Self:
        return cls(
            agent=AgentInfo.from_wire(raw["agent"]),
            argv=tuple(str(a) for a in raw.get("argv", [])),
            raw=raw,
        )
