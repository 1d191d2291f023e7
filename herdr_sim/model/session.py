"""The simulator's whole multiplexer state: workspaces, tabs, panes, focus and ids.

Pure data and rules, no I/O and no asyncio, so it can be property-tested alone. Processes
live in :mod:`herdr_sim.services.runtime`, which asks this model for ids and geometry and tells it
what happened. Every rule here is Herdr's (reference §2, §3.3, §3.4): numbers are never
reused, pane numbers are per workspace and shared by its tabs, tab numbers are stable,
workspace numbers are global to the server, and a pane moved to another workspace gets a new
public id while its old one stays resolvable as an alias.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from typing import Literal, TypeVar

from .agents import AgentBook, AgentRecord, AgentState
from .ids import (
    decode_number,
    new_terminal_id,
    pane_public_id,
    parse_position,
    tab_public_id,
    workspace_public_id,
)
from .layout import Layout, SplitDirection

T = TypeVar("T")


class ModelError(Exception):
    """A rule of the model was broken by the caller (the runtime maps it to a wire error)."""


@dataclass
class Pane:
    """One pane: a slot in a tab's layout that hosts one terminal."""

    key: int
    terminal_id: str
    cwd: str
    label: str | None = None
    #: Herdr's "seen" flag: an idle agent in a pane nobody looked at is ``done``.
    seen: bool = True
    state: AgentState = "unknown"
    agent: str | None = None
    title: str | None = None
    display_agent: str | None = None
    state_labels: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    revision: int = 0
    exited: bool = False
    #: the argv a layout asked the pane to run instead of a shell (exported by layout.export)
    launch_argv: list[str] | None = None
    #: where right-clicks go: Herdr's menu or the program (``pane.input.set``/``pane.split``)
    right_click: str = "herdr"
    #: the agent engine's record (authority, seqs, session, resume, name, detection inputs)
    agent_rec: AgentRecord = field(default_factory=AgentRecord)


@dataclass
class Tab:
    """One tab: a stable number, an optional custom label and a BSP layout of panes."""

    number: int
    layout: Layout
    label: str | None = None


@dataclass(frozen=True)
class WorktreeSpace:
    """Herdr's worktree membership of a workspace (``WorktreeSpaceMembership``): which
    repository it belongs to and which checkout it shows; set by the ``worktree.*`` methods."""

    key: str
    label: str
    repo_root: str
    checkout_path: str
    is_linked_worktree: bool


@dataclass
class Workspace:
    """One workspace: tabs, per-workspace counters and the pane-number map."""

    number: int
    identity_cwd: str
    label: str | None = None
    #: Herdr's automatic label (git repo name, ``~``, or the cwd's basename), set by the runtime
    auto_label: str = "workspace"
    #: the root pane's cwd when :attr:`auto_label` was last set (None: :attr:`identity_cwd`);
    #: the label is recomputed once the root pane's cwd differs from it
    auto_label_for: str | None = None
    tabs: list[Tab] = field(default_factory=list)
    active_tab: int = 0
    next_tab_number: int = 1
    next_pane_number: int = 1
    #: pane key → public pane number within this workspace
    pane_numbers: dict[int, int] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    #: the worktree group this workspace belongs to (None: not opened through worktree.*)
    worktree: WorktreeSpace | None = None

    @property
    def public_id(self) -> str:
        """``w<enc(number)>``."""
        return workspace_public_id(self.number)

    def tab_id(self, tab: Tab) -> str:
        """The public id of one of this workspace's tabs."""
        return tab_public_id(self.public_id, tab.number)

    def pane_id(self, key: int) -> str:
        """The public id of one of this workspace's panes."""
        return pane_public_id(self.public_id, self.pane_numbers[key])

    def panes(self) -> list[int]:
        """Pane keys of every tab, tabs in order, each in layout order."""
        return [key for tab in self.tabs for key in tab.layout.panes()]

    def allocate_pane_number(self) -> int:
        """The next pane number; never reused within this workspace."""
        number = self.next_pane_number
        self.next_pane_number += 1
        return number


@dataclass
class PaneRef:
    """Where a pane lives now."""

    workspace: Workspace
    tab: Tab
    pane: Pane

    @property
    def pane_id(self) -> str:
        """The pane's canonical public id."""
        return self.workspace.pane_id(self.pane.key)

    @property
    def tab_id(self) -> str:
        """The tab's public id."""
        return self.workspace.tab_id(self.tab)


class Session:
    """The state of one simulator server."""

    def __init__(self) -> None:
        self.workspaces: list[Workspace] = []
        self.active: int | None = None
        self.panes: dict[int, Pane] = {}
        self.next_workspace_number = 1
        self._keys = count(1)
        #: stale public pane id → pane key, left behind by cross-workspace moves
        self.aliases: dict[str, int] = {}
        #: the global agent engine counter (``state_change_seq``)
        self.agents = AgentBook()

    # -- lookups ----------------------------------------------------------------------------

    @property
    def active_workspace(self) -> Workspace | None:
        """The focused workspace, if any."""
        return None if self.active is None else self.workspaces[self.active]

    def locate(self, key: int) -> PaneRef:
        """Find a live pane by key."""
        for ws in self.workspaces:
            for tab in ws.tabs:
                if key in tab.layout:
                    return PaneRef(ws, tab, self.panes[key])
        raise ModelError(f"pane key {key} is not in any layout")

    def all_panes(self) -> list[PaneRef]:
        """Every pane, workspaces in display order, tabs in order, layout order."""
        return [
            PaneRef(ws, tab, self.panes[key])
            for ws in self.workspaces
            for tab in ws.tabs
            for key in tab.layout.panes()
        ]

    def find_workspace(self, text: str) -> Workspace | None:
        """Herdr's lenient workspace parsing: ``w1``, ``w_<pos>`` or a bare ``<pos>``."""
        for ws in self.workspaces:
            if ws.public_id == text:
                return ws
        position = parse_position(text[2:]) if text.startswith("w_") else parse_position(text)
        if position is not None and position <= len(self.workspaces):
            return self.workspaces[position - 1]
        return None

    def find_tab(self, text: str) -> tuple[Workspace, Tab] | None:
        """``<ws>:t<enc>`` (stable number), ``<ws>:<pos>`` or ``t_<ws>_<pos>`` (position)."""
        if text.startswith("t_") and "_" in text[2:]:
            ws_text, _, pos_text = text[2:].rpartition("_")
            ws = self.find_workspace(ws_text)
            position = parse_position(pos_text)
            if ws is not None and position is not None and position <= len(ws.tabs):
                return ws, ws.tabs[position - 1]
            return None
        ws_text, sep, rest = text.rpartition(":")
        if not sep:
            return None
        ws = self.find_workspace(ws_text)
        if ws is None:
            return None
        if rest.startswith("t"):
            number = decode_number(rest[1:])
            for tab in ws.tabs:
                if tab.number == number:
                    return ws, tab
            return None
        position = parse_position(rest)
        if position is not None and position <= len(ws.tabs):
            return ws, ws.tabs[position - 1]
        return None

    def find_pane(self, text: str) -> PaneRef | None:
        """Aliases first, then ``p_<raw>``, ``<ws>:p<enc>`` and the legacy ``<ws>-<N>``."""
        if text in self.aliases:
            return self.locate(self.aliases[text])
        if text.startswith("p_"):
            raw = text.rpartition("_")[2]
            if raw.isdigit() and int(raw) in self.panes:
                return self.locate(int(raw))
            return None
        ws_text, sep, rest = text.rpartition(":")
        if sep and rest.startswith("p"):
            number = decode_number(rest[1:])
        else:
            ws_text, sep, rest = text.rpartition("-")
            number = int(rest) if sep and rest.isdigit() else None
        if not sep or number is None:
            return None
        ws = self.find_workspace(ws_text)
        if ws is None:
            return None
        for key, pane_number in ws.pane_numbers.items():
            if pane_number == number:
                return self.locate(key)
        return None

    def naming(self) -> tuple[object, ...]:
        """What :meth:`find_pane` reads: aliases, workspaces in order with their ids and
        pane numbers, each tab's panes. Two equal namings resolve every pane id to the same
        pane, under the same canonical id, in the same tab (a cheap "can an id name another
        pane now" for the subscriptions that look a pane up on every poll)."""
        return (
            tuple(self.aliases.items()),
            tuple(
                (
                    ws.public_id,
                    tuple(ws.pane_numbers.items()),
                    tuple(tuple(tab.layout.panes()) for tab in ws.tabs),
                )
                for ws in self.workspaces
            ),
        )

    def find_exact_pane(self, text: str) -> PaneRef | None:
        """Only the exact current canonical id (``agent.start`` and agent targets)."""
        ref = self.find_pane(text)
        return ref if ref is not None and ref.pane_id == text else None

    def focused_pane(self) -> PaneRef | None:
        """The active workspace's focused pane."""
        ws = self.active_workspace
        if ws is None or not ws.tabs:
            return None
        tab = ws.tabs[ws.active_tab]
        return PaneRef(ws, tab, self.panes[tab.layout.focused])

    def is_focused(self, ref: PaneRef) -> bool:
        """Focused means: active workspace, its active tab, and that tab's focused pane."""
        ws = self.active_workspace
        return (
            ws is ref.workspace
            and ws.tabs[ws.active_tab] is ref.tab
            and ref.tab.layout.focused == ref.pane.key
        )

    def is_active_tab(self, ws: Workspace, tab: Tab) -> bool:
        """The tab is its workspace's active tab and the workspace is active."""
        return self.active_workspace is ws and ws.tabs[ws.active_tab] is tab

    # -- creation ---------------------------------------------------------------------------

    def _new_pane(self, ws: Workspace, cwd: str) -> Pane:
        key = next(self._keys)
        pane = Pane(key=key, terminal_id=new_terminal_id(), cwd=cwd)
        self.panes[key] = pane
        ws.pane_numbers[key] = ws.allocate_pane_number()
        # An alias that now names a real pane again is dropped (Herdr does the same).
        self.aliases.pop(ws.pane_id(key), None)
        return pane

    def adopt_pane(self, ws: Workspace, number: int, cwd: str) -> Pane:
        """A restored pane: its saved public number, a new key and a new terminal id."""
        key = next(self._keys)
        pane = Pane(key=key, terminal_id=new_terminal_id(), cwd=cwd)
        self.panes[key] = pane
        ws.pane_numbers[key] = number
        return pane

    def _new_tab(self, ws: Workspace, cwd: str, label: str | None) -> tuple[Tab, Pane]:
        pane = self._new_pane(ws, cwd)
        tab = Tab(number=ws.next_tab_number, layout=Layout(pane.key), label=label)
        ws.next_tab_number += 1
        ws.tabs.append(tab)
        return tab, pane

    def create_workspace(
        self, cwd: str, label: str | None, focus: bool
    ) -> tuple[Workspace, Tab, Pane]:
        """A workspace with tab ``t1`` and root pane ``p1``; focused if asked or none was."""
        ws = Workspace(number=self.next_workspace_number, identity_cwd=cwd, label=label)
        self.next_workspace_number += 1
        tab, pane = self._new_tab(ws, cwd, None)
        self.workspaces.append(ws)
        if focus or self.active is None:
            self.focus_workspace(ws)
        return ws, tab, pane

    def create_tab(
        self, ws: Workspace, cwd: str, label: str | None, focus: bool
    ) -> tuple[Tab, Pane]:
        """A new tab at the end of ``ws`` with a fresh root pane."""
        tab, pane = self._new_tab(ws, cwd, label)
        if focus:
            ws.active_tab = len(ws.tabs) - 1
            self.focus_workspace(ws)
        return tab, pane

    def split(
        self,
        target: PaneRef,
        direction: SplitDirection,
        ratio: float | None,
        cwd: str,
        focus: bool,
    ) -> Pane:
        """Split ``target``; the new pane takes the second half."""
        pane = self._new_pane(target.workspace, cwd)
        target.tab.layout.split(target.pane.key, pane.key, direction, ratio)
        if focus:
            self.focus_pane(PaneRef(target.workspace, target.tab, pane))
        return pane

    # -- focus ------------------------------------------------------------------------------

    def focus_workspace(self, ws: Workspace) -> None:
        """Make ``ws`` active; its active tab's panes count as seen."""
        self.active = self.workspaces.index(ws)
        self._mark_seen(ws.tabs[ws.active_tab])

    def focus_tab(self, ws: Workspace, tab: Tab) -> None:
        """Activate ``tab`` in ``ws`` and ``ws`` itself."""
        ws.active_tab = ws.tabs.index(tab)
        self.focus_workspace(ws)

    def focus_pane(self, ref: PaneRef) -> None:
        """Focus a pane, switching workspace and tab."""
        ref.tab.layout.focused = ref.pane.key
        self.focus_tab(ref.workspace, ref.tab)

    def _mark_seen(self, tab: Tab) -> None:
        for key in tab.layout.panes():
            self.panes[key].seen = True

    # -- renames and moves ------------------------------------------------------------------

    @staticmethod
    def clean_label(label: str | None) -> str | None:
        """Labels are trimmed; an empty label clears."""
        if label is None:
            return None
        label = label.strip()
        return label or None

    @staticmethod
    def _move_in(items: list[T], item: T, insert_index: int) -> bool:
        """Herdr's reorder rule: ``insert_index`` names a slot of the list *before* the move
        (0 = before the first, ``len`` = after the last), so moving forward lands one lower.
        Raises :class:`ModelError` past the end; returns whether the order changed."""
        if insert_index > len(items):
            raise ModelError(f"insert_index {insert_index} is out of bounds")
        source = items.index(item)
        target = insert_index - 1 if source < insert_index else insert_index
        if target == source:
            return False
        items.insert(target, items.pop(source))
        return True

    def move_workspace(self, ws: Workspace, insert_index: int) -> bool:
        """Reorder workspaces (focus stays on the same workspace); changed?"""
        active = self.active_workspace
        changed = self._move_in(self.workspaces, ws, insert_index)
        if active is not None:
            self.active = self.workspaces.index(active)
        return changed

    def move_tab(self, ws: Workspace, tab: Tab, insert_index: int) -> bool:
        """Reorder a tab within its workspace (the active tab stays active); changed?"""
        active = ws.tabs[ws.active_tab]
        changed = self._move_in(ws.tabs, tab, insert_index)
        ws.active_tab = ws.tabs.index(active)
        return changed

    # -- closing ----------------------------------------------------------------------------

    def _unlink_workspace(self, ws: Workspace) -> None:
        """Take ``ws`` out of the list; the next one (or the new last) becomes active."""
        index = self.workspaces.index(ws)
        active = self.active_workspace
        self.workspaces.pop(index)
        if not self.workspaces:
            self.active = None
        elif active is ws:
            self.active = min(index, len(self.workspaces) - 1)
            new = self.workspaces[self.active]
            self._mark_seen(new.tabs[new.active_tab])
        elif active is not None:
            self.active = self.workspaces.index(active)

    def _unlink_tab(self, ws: Workspace, tab: Tab) -> None:
        """Take ``tab`` out of ``ws`` with Herdr's rule for the tab that becomes active: an
        index past the end moves to the last tab; closing the active tab, or one before it,
        steps back one."""
        closed, active = ws.tabs.index(tab), ws.active_tab
        ws.tabs.pop(closed)
        if active >= len(ws.tabs):
            active = len(ws.tabs) - 1
        elif closed <= active and active > 0:
            active -= 1
        ws.active_tab = active
        if self.active_workspace is ws:
            self._mark_seen(ws.tabs[ws.active_tab])

    def worktree_group(self, ws: Workspace) -> list[Workspace]:
        """What closing ``ws`` closes in Herdr (``workspace_close_indices``): a worktree
        group's parent takes every member of its group, in display order; anything else only
        itself."""
        parent = ws.worktree
        if parent is None or parent.is_linked_worktree:
            return [ws]
        group = [
            other
            for other in self.workspaces
            if other.worktree is not None and other.worktree.key == parent.key
        ]
        return group if len(group) >= 2 else [ws]

    def close_workspace(self, ws: Workspace) -> list[int]:
        """Remove ``ws``; returns the keys of the panes that went with it."""
        keys = ws.panes()
        for key in keys:
            self._forget(key)
        self._unlink_workspace(ws)
        return keys

    def close_tab(self, ws: Workspace, tab: Tab) -> tuple[list[int], bool]:
        """Remove ``tab``; the last tab closes the workspace. (keys, workspace closed?)"""
        if len(ws.tabs) == 1:
            return self.close_workspace(ws), True
        keys = tab.layout.panes()
        for key in keys:
            self._forget(key)
        self._unlink_tab(ws, tab)
        return keys, False

    def close_pane(self, ref: PaneRef) -> Literal["pane", "tab", "workspace"]:
        """Remove one pane; an emptied tab goes, and an emptied last tab takes its workspace."""
        layout = ref.tab.layout
        if len(layout.panes()) == 1:
            _, ws_closed = self.close_tab(ref.workspace, ref.tab)
            return "workspace" if ws_closed else "tab"
        layout.remove(ref.pane.key)
        self._forget(ref.pane.key)
        return "pane"

    def _forget(self, key: int) -> None:
        self.panes.pop(key, None)
        for ws in self.workspaces:
            ws.pane_numbers.pop(key, None)
        for alias, target in list(self.aliases.items()):
            if target == key:
                del self.aliases[alias]

    # -- cross-workspace pane moves ---------------------------------------------------------

    def detach_pane(self, ref: PaneRef) -> str | None:
        """Take a pane out of its layout for a move; returns the closed container, if any.

        Returns ``"tab:<id>"`` or ``"workspace:<id>"`` when the source emptied. The pane
        record itself survives (the move keeps its terminal and process).
        """
        layout = ref.tab.layout
        if len(layout.panes()) > 1:
            layout.remove(ref.pane.key)
            return None
        ws = ref.workspace
        if len(ws.tabs) == 1:
            self._unlink_workspace(ws)
            return f"workspace:{ws.public_id}"
        tab_id = ws.tab_id(ref.tab)
        self._unlink_tab(ws, ref.tab)
        return f"tab:{tab_id}"

    def renumber_into(self, pane: Pane, source: Workspace, target: Workspace) -> str:
        """Give ``pane`` the next number of ``target``; its old id becomes an alias."""
        old_id = source.pane_id(pane.key)
        del source.pane_numbers[pane.key]
        target.pane_numbers[pane.key] = target.allocate_pane_number()
        self.aliases[old_id] = pane.key
        return old_id
