"""``tab.*`` handlers."""

from __future__ import annotations

from typing import Any

from .. import errors
from ..errors import HerdrError
from ..model.session import ModelError
from ..params import F, Int, Obj
from ..registry import method
from ..runtime import Runtime
from .specs import ENV, FOCUS, OPT_STR, REQ_STR
from .workspace import check_env

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
    check_env(p["env"])
    if p["workspace_id"] is not None:
        ws = rt.workspace(p["workspace_id"])
    else:
        active = rt.session.active_workspace
        if active is None:
            raise errors.no_active_workspace()
        ws = active
    cwd = p["cwd"] or rt.default_cwd()
    tab, pane = rt.session.create_tab(ws, cwd, rt.session.clean_label(p["label"]), p["focus"])
    ref = rt.session.locate(pane.key)
    try:
        rt.spawn(ref, p["env"])
    except OSError as exc:
        rt.session.close_tab(ws, tab)
        raise HerdrError(errors.TAB_CREATE_FAILED, f"failed to create tab: {exc}") from None
    tab_view = rt.tab_view(ws, tab)
    pane_view = rt.pane_view(ref)
    rt.hub.publish("tab_created", {"tab": tab_view})
    rt.hub.publish("pane_created", {"pane": pane_view})
    rt.hub.publish("layout_updated", {"layout": rt.layout_view(ws, tab)})
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
    """Set (or with a blank label, clear) a tab's custom label."""
    ws, tab = rt.tab(p["tab_id"])
    tab.label = rt.session.clean_label(p["label"])
    view = rt.tab_view(ws, tab)
    rt.hub.publish(
        "tab_renamed",
        {"tab_id": view["tab_id"], "workspace_id": ws.public_id, "label": view["label"]},
    )
    return {"type": "tab_info", "tab": view}


@method(
    "tab.move",
    Obj(fields={"tab_id": REQ_STR, "insert_index": F(Int(0), required=True)}),
    result="tab_list",
)
async def move(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Reorder a tab within its workspace."""
    ws, tab = rt.tab(p["tab_id"])
    try:
        changed = rt.session.move_tab(ws, tab, p["insert_index"])
    except ModelError:
        raise HerdrError(
            errors.TAB_MOVE_FAILED, f"insert index {p['insert_index']} is out of range"
        ) from None
    views = [rt.tab_view(ws, t) for t in ws.tabs]
    if changed:
        rt.hub.publish(
            "tab_moved",
            {
                "tab_id": ws.tab_id(tab),
                "workspace_id": ws.public_id,
                "insert_index": ws.tabs.index(tab),
                "tabs": views,
            },
        )
    return {"type": "tab_list", "tabs": views}


@method("tab.close", TAB_TARGET, result="ok")
async def close(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Close a tab; the last tab closes its workspace."""
    ws, tab = rt.tab(p["tab_id"])
    tab_id, ws_view = ws.tab_id(tab), rt.workspace_view(ws)
    keys, ws_closed = rt.session.close_tab(ws, tab)
    rt.hub.publish("tab_closed", {"tab_id": tab_id, "workspace_id": ws.public_id})
    if ws_closed:
        rt.hub.publish("workspace_closed", {"workspace_id": ws.public_id, "workspace": ws_view})
    await rt.reap(keys)
    return {"type": "ok"}
