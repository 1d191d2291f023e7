"""Herdr's lifecycle events, one typed builder per event (reference §6).

Every event the simulator emits is built here and published with
:meth:`herdr_sim.services.events.EventHub.publish`, so an event's fields, their order and which of
them are optional are written down once, and mypy checks each call site's arguments. The
data's ``type`` is added by the hub. The views (``pane``, ``tab``, ``workspace``,
``layout``) are the wire dicts built by :mod:`herdr_sim.wire.views`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

__all__ = [
    "Event",
    "EventKind",
    "layout_updated",
    "pane_agent_detected",
    "pane_agent_status_changed",
    "pane_closed",
    "pane_created",
    "pane_exited",
    "pane_focused",
    "pane_moved",
    "pane_updated",
    "tab_closed",
    "tab_created",
    "tab_focused",
    "tab_moved",
    "tab_renamed",
    "workspace_closed",
    "workspace_created",
    "workspace_focused",
    "workspace_metadata_updated",
    "workspace_moved",
    "workspace_renamed",
    "workspace_reordered",
    "workspace_updated",
    "worktree_created",
    "worktree_opened",
    "worktree_removed",
]

View = dict[str, Any]
EventKind = Literal[
    "workspace_created",
    "workspace_updated",
    "worktree_created",
    "worktree_opened",
    "worktree_removed",
    "workspace_closed",
    "workspace_renamed",
    "workspace_moved",
    "workspace_reordered",
    "workspace_focused",
    "workspace_metadata_updated",
    "tab_created",
    "tab_closed",
    "tab_renamed",
    "tab_moved",
    "tab_focused",
    "pane_created",
    "pane_closed",
    "pane_updated",
    "pane_focused",
    "pane_moved",
    "pane_exited",
    "pane_agent_detected",
    "pane_agent_status_changed",
    "layout_updated",
]


class Event(NamedTuple):
    """One lifecycle event: its underscore name and its data (without ``type``)."""

    kind: EventKind
    data: dict[str, Any]


# -- workspaces ---------------------------------------------------------------------------------


def workspace_created(workspace: View) -> Event:
    """``workspace_created``."""
    return Event("workspace_created", {"workspace": workspace})


def workspace_closed(workspace_id: str, workspace: View | None = None) -> Event:
    """``workspace_closed``; the view is left out where Herdr leaves it out (a pane move)."""
    data: dict[str, Any] = {"workspace_id": workspace_id}
    if workspace is not None:
        data["workspace"] = workspace
    return Event("workspace_closed", data)


def workspace_renamed(workspace_id: str, label: str) -> Event:
    """``workspace_renamed``."""
    return Event("workspace_renamed", {"workspace_id": workspace_id, "label": label})


def workspace_moved(workspace_id: str, insert_index: int, workspaces: list[View]) -> Event:
    """``workspace_moved`` with the new order."""
    return Event(
        "workspace_moved",
        {"workspace_id": workspace_id, "insert_index": insert_index, "workspaces": workspaces},
    )


def workspace_reordered(
    workspace_ids: list[str], before_workspace_id: str | None, workspaces: list[View]
) -> Event:
    """``workspace_reordered``: a block of workspaces moved (``workspace.move_block``); no
    ``before_workspace_id`` when the block went to the end (Herdr skips the ``None``)."""
    data: dict[str, Any] = {"workspace_ids": workspace_ids}
    if before_workspace_id is not None:
        data["before_workspace_id"] = before_workspace_id
    data["workspaces"] = workspaces
    return Event("workspace_reordered", data)


def workspace_focused(workspace_id: str) -> Event:
    """``workspace_focused``."""
    return Event("workspace_focused", {"workspace_id": workspace_id})


def workspace_metadata_updated(workspace: View) -> Event:
    """``workspace_metadata_updated``."""
    return Event("workspace_metadata_updated", {"workspace": workspace})


def workspace_updated(workspace: View) -> Event:
    """``workspace_updated``: the workspace's worktree membership changed."""
    return Event("workspace_updated", {"workspace": workspace})


# -- worktrees ----------------------------------------------------------------------------------


def worktree_created(workspace: View, worktree: View) -> Event:
    """``worktree_created``: ``worktree.create`` checked out a branch and opened it."""
    return Event("worktree_created", {"workspace": workspace, "worktree": worktree})


def worktree_opened(workspace: View, worktree: View, already_open: bool) -> Event:
    """``worktree_opened``: ``worktree.open`` opened (or found open) a checkout."""
    return Event(
        "worktree_opened",
        {"workspace": workspace, "worktree": worktree, "already_open": already_open},
    )


def worktree_removed(
    workspace_id: str, workspace: View | None, worktree: View, forced: bool
) -> Event:
    """``worktree_removed``: the checkout was removed (and its workspace closed)."""
    data: dict[str, Any] = {"workspace_id": workspace_id}
    if workspace is not None:
        data["workspace"] = workspace
    data.update(worktree=worktree, forced=forced)
    return Event("worktree_removed", data)


# -- tabs ---------------------------------------------------------------------------------------


def tab_created(tab: View) -> Event:
    """``tab_created``."""
    return Event("tab_created", {"tab": tab})


def tab_closed(tab_id: str, workspace_id: str) -> Event:
    """``tab_closed``."""
    return Event("tab_closed", {"tab_id": tab_id, "workspace_id": workspace_id})


def tab_renamed(tab_id: str, workspace_id: str, label: str) -> Event:
    """``tab_renamed``."""
    return Event("tab_renamed", {"tab_id": tab_id, "workspace_id": workspace_id, "label": label})


def tab_moved(tab_id: str, workspace_id: str, insert_index: int, tabs: list[View]) -> Event:
    """``tab_moved`` with the workspace's new tab order."""
    return Event(
        "tab_moved",
        {
            "tab_id": tab_id,
            "workspace_id": workspace_id,
            "insert_index": insert_index,
            "tabs": tabs,
        },
    )


def tab_focused(tab_id: str, workspace_id: str) -> Event:
    """``tab_focused``."""
    return Event("tab_focused", {"tab_id": tab_id, "workspace_id": workspace_id})


# -- panes --------------------------------------------------------------------------------------


def pane_created(pane: View) -> Event:
    """``pane_created``."""
    return Event("pane_created", {"pane": pane})


def pane_closed(pane_id: str, workspace_id: str) -> Event:
    """``pane_closed``."""
    return Event("pane_closed", {"pane_id": pane_id, "workspace_id": workspace_id})


def pane_updated(pane: View) -> Event:
    """``pane_updated``: the pane's name, tokens or managed launch changed."""
    return Event("pane_updated", {"pane": pane})


def pane_focused(pane_id: str, workspace_id: str) -> Event:
    """``pane_focused``."""
    return Event("pane_focused", {"pane_id": pane_id, "workspace_id": workspace_id})


def pane_exited(pane_id: str, workspace_id: str) -> Event:
    """``pane_exited``: the pane's shell ended; the pane leaves its tab with no
    ``pane_closed`` (only a ``layout_updated`` when the tab survives)."""
    return Event("pane_exited", {"pane_id": pane_id, "workspace_id": workspace_id})


def pane_moved(
    previous: Mapping[str, str],
    pane: View,
    *,
    created_workspace: View | None = None,
    created_tab: View | None = None,
    closed_workspace_id: str | None = None,
    closed_tab_id: str | None = None,
) -> Event:
    """``pane_moved``: the ``previous_*`` ids, the pane now, and what the move created or
    closed (each only when it happened)."""
    data: dict[str, Any] = {**previous, "pane": pane}
    optional = (
        ("created_workspace", created_workspace),
        ("created_tab", created_tab),
        ("closed_workspace_id", closed_workspace_id),
        ("closed_tab_id", closed_tab_id),
    )
    data.update((key, value) for key, value in optional if value is not None)
    return Event("pane_moved", data)


def pane_agent_detected(
    pane_id: str,
    workspace_id: str,
    *,
    agent: str | None = None,
    released: bool = False,
    final_status: str | None = None,
) -> Event:
    """``pane_agent_detected``: the pane's agent label changed, or (``released``) its agent
    left, with the status it ended in."""
    data: dict[str, Any] = {"pane_id": pane_id, "workspace_id": workspace_id}
    if agent is not None:
        data["agent"] = agent
    if released:
        data["released"] = True
        data["final_status"] = final_status
    return Event("pane_agent_detected", data)


def pane_agent_status_changed(
    pane_id: str,
    workspace_id: str,
    agent_status: str,
    *,
    agent: str | None = None,
    title: str | None = None,
    display_agent: str | None = None,
    state_labels: Mapping[str, str] | None = None,
) -> Event:
    """``pane_agent_status_changed``: the public status or the presentation changed (the
    presentation fields only when set)."""
    data: dict[str, Any] = {
        "pane_id": pane_id,
        "workspace_id": workspace_id,
        "agent_status": agent_status,
    }
    optional = (("agent", agent), ("title", title), ("display_agent", display_agent))
    data.update((key, value) for key, value in optional if value is not None)
    if state_labels:
        data["state_labels"] = dict(state_labels)
    return Event("pane_agent_status_changed", data)


# -- layouts ------------------------------------------------------------------------------------


def layout_updated(layout: View) -> Event:
    """``layout_updated``: a tab's layout snapshot after a change."""
    return Event("layout_updated", {"layout": layout})
