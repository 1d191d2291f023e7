"""Wire shapes built from the model: WorkspaceInfo, TabInfo, PaneInfo, PaneLayoutSnapshot.

Field sets, order and omission rules follow Herdr (reference §3.2): optional fields are left
out when absent rather than sent as null, ``revision`` is always present, and rollups pick
the pane with the highest status priority.
"""

from __future__ import annotations

from typing import Any

from herdr_sim.model.layout import Rect, layout_snapshot
from herdr_sim.model.session import Pane, PaneRef, Session, Tab, Workspace

#: Rollup priority (§5.5): blocked > done > working > idle > unknown.
_PRIORITY = {"blocked": 4, "done": 3, "working": 2, "idle": 1, "unknown": 0}


def public_status(pane: Pane) -> str:
    """``done`` is an idle agent nobody has looked at since it finished."""
    if pane.state == "idle" and not pane.seen:
        return "done"
    return pane.state


def rollup(panes: list[Pane]) -> str:
    """The status of a tab or workspace: its highest-priority pane's."""
    best = "unknown"
    for pane in panes:
        status = public_status(pane)
        if _PRIORITY[status] > _PRIORITY[best]:
            best = status
    return best


def workspace_info(session: Session, ws: Workspace) -> dict[str, Any]:
    """WorkspaceInfo; ``number`` is the 1-based display position, not the id number."""
    keys = ws.panes()
    info: dict[str, Any] = {
        "workspace_id": ws.public_id,
        "number": session.workspaces.index(ws) + 1,
        "label": ws.label if ws.label is not None else ws.auto_label,
        "focused": session.active_workspace is ws,
        "pane_count": len(keys),
        "tab_count": len(ws.tabs),
        "active_tab_id": ws.tab_id(ws.tabs[ws.active_tab]),
        "agent_status": rollup([session.panes[key] for key in keys]),
    }
    if ws.tokens:
        info["tokens"] = dict(ws.tokens)
    if ws.worktree is not None:
        info["worktree"] = {
            "repo_key": ws.worktree.key,
            "repo_name": ws.worktree.label,
            "repo_root": ws.worktree.repo_root,
            "checkout_path": ws.worktree.checkout_path,
            "is_linked_worktree": ws.worktree.is_linked_worktree,
        }
    return info


def tab_info(session: Session, ws: Workspace, tab: Tab) -> dict[str, Any]:
    """TabInfo; ``number`` is stable, the default label is the position."""
    keys = tab.layout.panes()
    position = ws.tabs.index(tab) + 1
    return {
        "tab_id": ws.tab_id(tab),
        "workspace_id": ws.public_id,
        "number": tab.number,
        "label": tab.label if tab.label is not None else str(position),
        "focused": session.is_active_tab(ws, tab),
        "pane_count": len(keys),
        "agent_status": rollup([session.panes[key] for key in keys]),
    }


def strip_title(title: str | None) -> str | None:
    """The terminal title minus one leading spinner glyph (Braille, dots, stars)."""
    if not title:
        return title
    first = title[0]
    if ("\u2800" <= first <= "\u28ff") or first in "·•●○◐◓◑◒✳✶✻✽✢*":
        return title[1:].lstrip() or None
    return title


def pane_info(
    session: Session,
    ref: PaneRef,
    *,
    cwd: str | None,
    foreground_cwd: str | None,
    terminal_title: str | None,
    scroll: dict[str, int] | None = None,
) -> dict[str, Any]:
    """PaneInfo in Herdr's field order, optional fields omitted when absent.

    ``scroll`` is the live terminal's ``PaneScrollInfo`` (Herdr's ``pane_info`` in
    ``src/app/creation.rs`` fills it from the pane's runtime whenever there is one).
    """
    pane = ref.pane
    info: dict[str, Any] = {
        "pane_id": ref.pane_id,
        "terminal_id": pane.terminal_id,
        "workspace_id": ref.workspace.public_id,
        "tab_id": ref.tab_id,
        "focused": session.is_focused(ref),
    }
    optional: list[tuple[str, Any]] = [
        ("cwd", cwd),
        ("foreground_cwd", foreground_cwd),
        ("label", pane.label),
        ("agent", pane.agent),
        ("title", pane.title),
        ("terminal_title", terminal_title),
        ("terminal_title_stripped", strip_title(terminal_title)),
        ("display_agent", pane.display_agent),
    ]
    info.update((key, value) for key, value in optional if value is not None)
    info["agent_status"] = public_status(pane)
    if pane.state_labels:
        info["state_labels"] = dict(pane.state_labels)
    if pane.tokens:
        info["tokens"] = dict(pane.tokens)
    if pane.agent_rec.session is not None:
        info["agent_session"] = pane.agent_rec.session.view()
    if scroll is not None:
        info["scroll"] = scroll
    info["revision"] = pane.revision
    return info


def agent_info(
    session: Session,
    ref: PaneRef,
    *,
    cwd: str | None,
    foreground_cwd: str | None,
    terminal_title: str | None,
) -> dict[str, Any]:
    """AgentInfo (``agent.list``/``session.snapshot.agents``) in Herdr's field order."""
    pane = ref.pane
    rec = pane.agent_rec
    info: dict[str, Any] = {"terminal_id": pane.terminal_id}
    optional: list[tuple[str, Any]] = [
        ("name", rec.name),
        ("agent", pane.agent),
        ("title", pane.title),
        ("terminal_title", terminal_title),
        ("terminal_title_stripped", strip_title(terminal_title)),
        ("display_agent", pane.display_agent),
    ]
    info.update((key, value) for key, value in optional if value is not None)
    info["agent_status"] = public_status(pane)
    if rec.screen_detection_skipped():
        info["screen_detection_skipped"] = True
    if pane.state_labels:
        info["state_labels"] = dict(pane.state_labels)
    if pane.tokens:
        info["tokens"] = dict(pane.tokens)
    if rec.session is not None:
        info["agent_session"] = rec.session.view()
    info["workspace_id"] = ref.workspace.public_id
    info["tab_id"] = ref.tab_id
    info["pane_id"] = ref.pane_id
    info["focused"] = session.is_focused(ref)
    info["state_change_seq"] = rec.state_change_seq
    if cwd is not None:
        info["cwd"] = cwd
    if foreground_cwd is not None:
        info["foreground_cwd"] = foreground_cwd
    info["revision"] = pane.revision
    return info


def layout_view(session: Session, ws: Workspace, tab: Tab, area: Rect) -> dict[str, Any]:
    """PaneLayoutSnapshot of one tab (rects with pane chrome; zoom only sets the flag)."""
    del session
    return layout_snapshot(
        tab.layout, area, workspace_id=ws.public_id, tab_id=ws.tab_id(tab), public_id=ws.pane_id
    )
