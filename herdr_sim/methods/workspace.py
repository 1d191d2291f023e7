"""``workspace.*`` handlers."""

from __future__ import annotations

from typing import Any

from herdr_sim.host.shell import validate_env
from herdr_sim.registry import method
from herdr_sim.services import lifecycle
from herdr_sim.services.metadata import (
    apply_workspace_metadata,
    check_workspace_report,
    metadata_params,
)
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Bool, F, Int, Obj

from ..model.ids import parse_position
from ..model.session import ModelError, PaneRef, Tab, Workspace
from .specs import ENV, FOCUS, OPT_STR, REQ_STR

WS_TARGET = Obj(fields={"workspace_id": REQ_STR})


def check_env(env: dict[str, str]) -> None:
    """Herdr refuses env it could not pass to a process (``invalid_env``)."""
    problem = validate_env(env)
    if problem is not None:
        raise HerdrError(errors.INVALID_ENV, problem)


def is_position_form(text: str) -> bool:
    """``<N>`` or ``w_<N>`` (N ≥ 1): Herdr parses these to an index before checking it exists.

    Handlers that validate their other params between the two steps therefore report a
    validation error, not ``workspace_not_found``, for an out-of-range position.
    """
    return parse_position(text.removeprefix("w_")) is not None


@method(
    "workspace.create",
    Obj(
        fields={
            "cwd": OPT_STR,
            "focus": FOCUS,
            "label": OPT_STR,
            "env": ENV,
            "source_workspace_id": OPT_STR,
        }
    ),
    result="workspace_created",
)
async def create(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Create a workspace with one tab and one pane running a shell."""
    cwd = p["cwd"]
    if cwd is None and p["source_workspace_id"] is not None:
        cwd = rt.focused_cwd(rt.workspace(p["source_workspace_id"]))
    if cwd is None:
        cwd = rt.default_cwd()
    check_env(p["env"])
    ws, tab, ref = open_workspace(rt, cwd, p["label"], p["focus"], p["env"])
    ws_view, tab_view, pane_view = publish_opened(rt, ws, tab, ref)
    return {
        "type": "workspace_created",
        "workspace": ws_view,
        "tab": tab_view,
        "root_pane": pane_view,
    }


def open_workspace(
    rt: Runtime, cwd: str, label: str | None, focus: bool, env: dict[str, str]
) -> tuple[Workspace, Tab, PaneRef]:
    """Create a workspace with one tab and one pane and start its shell; no events yet
    (callers that set more state first publish them with :func:`publish_opened`)."""
    # Herdr stores a custom name verbatim (no trimming; "" is a name, not a clear).
    ws, tab, pane = rt.session.create_workspace(cwd, label, focus)
    ws.auto_label = rt.auto_label(cwd)
    pane.cwd = rt.launch_dir(cwd, env)
    # the label follows the root pane's cwd from here on (a missing cwd keeps its label
    # while the shell stays in the HOME it fell back to)
    ws.auto_label_for = pane.cwd
    ref = rt.session.locate(pane.key)
    try:
        rt.spawn(ref, env)
    except OSError as exc:
        rt.session.close_workspace(ws)
        raise HerdrError(
            errors.WORKSPACE_CREATE_FAILED, f"failed to create workspace: {exc}"
        ) from None
    return ws, tab, ref


def publish_opened(
    rt: Runtime, ws: Workspace, tab: Tab, ref: PaneRef
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Herdr's events of a new workspace (created, its tab, its pane, the layout); returns
    the three views."""
    ws_view = rt.workspace_view(ws)
    tab_view = rt.tab_view(ws, tab)
    pane_view = rt.pane_view(ref)
    rt.hub.publish(lifecycle.workspace_created(ws_view))
    rt.hub.publish(lifecycle.tab_created(tab_view))
    rt.hub.publish(lifecycle.pane_created(pane_view))
    rt.hub.publish(lifecycle.layout_updated(rt.layout_view(ws, tab)))
    return ws_view, tab_view, pane_view


@method("workspace.list", Obj(fields={}), result="workspace_list", mutates=False)
async def list_(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Every workspace in display order."""
    return {
        "type": "workspace_list",
        "workspaces": [rt.workspace_view(ws) for ws in rt.session.workspaces],
    }


@method("workspace.get", WS_TARGET, result="workspace_info", mutates=False)
async def get(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """One workspace."""
    return {
        "type": "workspace_info",
        "workspace": rt.workspace_view(rt.workspace(p["workspace_id"])),
    }


@method("workspace.focus", WS_TARGET, result="workspace_info")
async def focus(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Make a workspace active (its active tab's panes become seen)."""
    ws = rt.workspace(p["workspace_id"])
    rt.session.focus_workspace(ws)
    return {"type": "workspace_info", "workspace": rt.workspace_view(ws)}


@method(
    "workspace.rename",
    Obj(fields={"workspace_id": REQ_STR, "label": REQ_STR}),
    result="workspace_info",
)
async def rename(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Set the custom label, verbatim (Herdr neither trims it nor treats "" as a clear)."""
    ws = rt.workspace(p["workspace_id"])
    ws.label = p["label"]
    rt.hub.publish(lifecycle.workspace_renamed(ws.public_id, p["label"]))
    return {"type": "workspace_info", "workspace": rt.workspace_view(ws)}


@method(
    "workspace.move",
    Obj(fields={"workspace_id": REQ_STR, "insert_index": F(Int(0), required=True)}),
    result="workspace_list",
)
async def move(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Reorder a workspace; ``workspace.moved`` only when the order changed."""
    ws = rt.workspace(p["workspace_id"])
    insert_index = p["insert_index"]
    try:
        changed = rt.session.move_workspace(ws, insert_index)
    except ModelError as exc:
        raise HerdrError(errors.WORKSPACE_MOVE_FAILED, str(exc)) from None
    views = [rt.workspace_view(w) for w in rt.session.workspaces]
    if changed:
        rt.hub.publish(lifecycle.workspace_moved(ws.public_id, insert_index, views))
    return {"type": "workspace_list", "workspaces": views}


@method(
    "workspace.close",
    Obj(fields={"workspace_id": REQ_STR, "close_group": F(Bool(), default=False)}),
    result="ok",
)
async def close(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Close a workspace (a worktree group's parent: with close_group, the whole group).

    Herdr #2874: the parent of a group closes only when ``close_group`` asks for the group.
    """
    ws = rt.workspace(p["workspace_id"])
    group = rt.session.worktree_group(ws)
    if len(group) >= 2 and not p["close_group"]:
        raise HerdrError(
            errors.WORKSPACE_GROUP_CLOSE_REQUIRED,
            "workspace has linked worktree workspaces; use --group (close_group=true in the "
            "API) to close the group",
        )
    closed = [(member.public_id, rt.workspace_view(member)) for member in group]
    keys = [key for member in group for key in rt.session.close_workspace(member)]
    for workspace_id, view in closed:
        rt.hub.publish(lifecycle.workspace_closed(workspace_id, view))
    await rt.reap(keys)
    return {"type": "ok"}


@method(
    "workspace.report_metadata",
    metadata_params(target="workspace_id"),
    result="ok",
)
async def report_metadata(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Set or clear workspace tokens from a named source."""
    ws = rt.session.find_workspace(p["workspace_id"])
    if ws is None and not is_position_form(p["workspace_id"]):
        raise errors.workspace_not_found(p["workspace_id"])
    check_workspace_report(p)
    if ws is None:
        raise errors.workspace_not_found(p["workspace_id"])
    if apply_workspace_metadata(rt, ws, p):
        rt.hub.publish(lifecycle.workspace_metadata_updated(rt.workspace_view(ws)))
    return {"type": "ok"}
