"""``tab.*`` handlers."""

from __future__ import annotations

from typing import Any

from herdr_sim.registry import method
from herdr_sim.services import lifecycle
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import F, Int, Obj

from ..model.session import ModelError
from .specs import ENV, FOCUS, OPT_STR, REQ_STR
from .workspace import check_env, is_position_form

TAB_TARGET = Obj(fields={"tab_id": REQ_STR})


@method(
    "tab.create",
    Obj(
        fields={
            "workspace_id": OPT_STR,
            "cwd": OPT_STR,
            "focus": FOCUS,
            "label": OPT_STR,
            "env": ENV,
        }
    ),
    result="tab_created",
)
async def create(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Add a tab with a fresh root pane to a workspace (default: the active one)."""
    workspace_id = p["workspace_id"]
    found = None
    if workspace_id is not None:
        found = rt.session.find_workspace(workspace_id)
        if found is None and not is_position_form(workspace_id):
            raise errors.workspace_not_found(workspace_id)
    else:
        found = rt.session.active_workspace
        if found is None:
            raise errors.no_active_workspace()
    check_env(p["env"])
    if found is None:
        # Herdr resolved a position to an index it only checks at spawn time.
        raise HerdrError(errors.TAB_CREATE_FAILED, "workspace disappeared")
    ws = found
    cwd = p["cwd"] if p["cwd"] is not None else rt.focused_cwd(ws)
    # Herdr stores a custom name verbatim (no trimming; "" is a name, not a clear).
    tab, pane = rt.session.create_tab(ws, cwd, p["label"], p["focus"])
    pane.cwd = rt.launch_dir(cwd, p["env"])
    ref = rt.session.locate(pane.key)
    try:
        rt.spawn(ref, p["env"])
    except OSError as exc:
        rt.session.close_tab(ws, tab)
        raise HerdrError(errors.TAB_CREATE_FAILED, f"failed to create tab: {exc}") from None
    tab_view = rt.tab_view(ws, tab)
    pane_view = rt.pane_view(ref)
    rt.hub.publish(lifecycle.tab_created(tab_view))
    rt.hub.publish(lifecycle.pane_created(pane_view))
    rt.hub.publish(lifecycle.layout_updated(rt.layout_view(ws, tab)))
    return {"type": "tab_created", "tab": tab_view, "root_pane": pane_view}


@method("tab.list", Obj(fields={"workspace_id": OPT_STR}), result="tab_list", mutates=False)
async def list_(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Tabs of one workspace, or of all workspaces in order."""
    if p["workspace_id"] is not None:
        workspaces = [rt.workspace(p["workspace_id"])]
    else:
        workspaces = rt.session.workspaces
    return {
        "type": "tab_list",
        "tabs": [rt.tab_view(ws, tab) for ws in workspaces for tab in ws.tabs],
    }


@method("tab.get", TAB_TARGET, result="tab_info", mutates=False)
async def get(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """One tab."""
    ws, tab = rt.tab(p["tab_id"])
    return {"type": "tab_info", "tab": rt.tab_view(ws, tab)}


@method("tab.focus", TAB_TARGET, result="tab_info")
async def focus(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Switch to a tab (and its workspace); its panes become seen."""
    ws, tab = rt.tab(p["tab_id"])
    before = {key: rt.session.panes[key].seen for key in tab.layout.panes()}
    rt.session.focus_tab(ws, tab)
    for key, seen in before.items():
        if not seen:
            rt.publish_status(rt.session.locate(key))
    return {"type": "tab_info", "tab": rt.tab_view(ws, tab)}


@method("tab.rename", Obj(fields={"tab_id": REQ_STR, "label": REQ_STR}), result="tab_info")
async def rename(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Set a tab's custom label, verbatim (Herdr neither trims it nor treats "" as a clear)."""
    ws, tab = rt.tab(p["tab_id"])
    tab.label = p["label"]
    rt.hub.publish(lifecycle.tab_renamed(ws.tab_id(tab), ws.public_id, p["label"]))
    return {"type": "tab_info", "tab": rt.tab_view(ws, tab)}


@method(
    "tab.move",
    Obj(fields={"tab_id": REQ_STR, "insert_index": F(Int(0), required=True)}),
    result="tab_list",
)
async def move(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Reorder a tab within its workspace.

    ``tab.moved`` is emitted only when the order changed.
    """
    ws, tab = rt.tab(p["tab_id"])
    insert_index = p["insert_index"]
    try:
        changed = rt.session.move_tab(ws, tab, insert_index)
    except ModelError as exc:
        raise HerdrError(errors.TAB_MOVE_FAILED, str(exc)) from None
    views = [rt.tab_view(ws, t) for t in ws.tabs]
    if changed:
        rt.hub.publish(lifecycle.tab_moved(ws.tab_id(tab), ws.public_id, insert_index, views))
    return {"type": "tab_list", "tabs": views}


@method("tab.close", TAB_TARGET, result="ok")
async def close(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Close a tab; the last tab closes its workspace."""
    ws, tab = rt.tab(p["tab_id"])
    if len(ws.tabs) <= 1 and len(rt.session.worktree_group(ws)) >= 2:
        raise errors.group_close_needs_confirmation("tab")
    tab_id, ws_view = ws.tab_id(tab), rt.workspace_view(ws)
    keys, ws_closed = rt.session.close_tab(ws, tab)
    rt.hub.publish(lifecycle.tab_closed(tab_id, ws.public_id))
    if ws_closed:
        rt.hub.publish(lifecycle.workspace_closed(ws.public_id, ws_view))
    await rt.reap(keys)
    return {"type": "ok"}
