"""``pane.*`` handlers for structure and geometry: split, list, focus, resize, move, close…"""

from __future__ import annotations

from typing import Any

from .. import errors
from ..errors import HerdrError
from ..metadata import apply_pane_metadata, metadata_params
from ..model.layout import MAX_LAYOUT_PANES, Layout
from ..model.session import PaneRef, Tab, Workspace
from ..params import Enum, F, Float, Nullable, Obj, Tagged
from ..registry import method
from ..runtime import Runtime, workspace_auto_label
from .specs import (
    DIRECTION,
    ENV,
    FOCUS,
    OPT_FLOAT,
    OPT_PANE_TARGET,
    OPT_STR,
    PANE_TARGET,
    REQ_STR,
    SPLIT_DIRECTION,
)
from .workspace import check_env

RIGHT_CLICK = F(Enum(values=("herdr", "pane")), default="herdr")
ZOOM_MODE = F(Enum(values=("toggle", "on", "off")), default="toggle")


@method(
    "pane.split",
    Obj(
        fields={
            "workspace_id": OPT_STR,
            "target_pane_id": OPT_STR,
            "direction": F(SPLIT_DIRECTION, required=True),
            "ratio": OPT_FLOAT,
            "cwd": OPT_STR,
            "focus": FOCUS,
            "right_click": RIGHT_CLICK,
            "env": ENV,
        }
    ),
    result="pane_info",
)
async def split(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Split a pane; the new pane (returned) runs a fresh shell."""
    check_env(p["env"])
    if p["target_pane_id"] is not None:
        target = rt.pane(p["target_pane_id"])
    elif p["workspace_id"] is not None:
        ws = rt.workspace(p["workspace_id"])
        tab = ws.tabs[ws.active_tab]
        target = PaneRef(ws, tab, rt.session.panes[tab.layout.focused])
    else:
        target = rt.optional_pane(None)
    if len(target.tab.layout) >= MAX_LAYOUT_PANES:
        raise HerdrError(
            errors.PANE_SPLIT_FAILED, f"a tab can hold at most {MAX_LAYOUT_PANES} panes"
        )
    cwd = p["cwd"] or rt.live_cwd(target)
    ratio = p["ratio"]
    pane = rt.session.split(target, p["direction"], ratio, cwd, p["focus"])
    ref = PaneRef(target.workspace, target.tab, pane)
    rt.resize_tab(target.workspace, target.tab)
    try:
        rt.spawn(ref, p["env"])
    except OSError as exc:
        rt.session.close_pane(ref)
        rt.resize_tab(target.workspace, target.tab)
        raise HerdrError(errors.PANE_SPLIT_FAILED, f"failed to split pane: {exc}") from None
    view = rt.pane_view(ref)
    rt.hub.publish("pane_created", {"pane": view})
    rt.hub.publish("layout_updated", {"layout": rt.layout_view(target.workspace, target.tab)})
    return {"type": "pane_info", "pane": view}


@method("pane.list", Obj(fields={"workspace_id": OPT_STR}), result="pane_list", mutates=False)
async def list_(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Panes of one workspace or of all, in layout order."""
    refs = rt.session.all_panes()
    if p["workspace_id"] is not None:
        ws = rt.workspace(p["workspace_id"])
        refs = [ref for ref in refs if ref.workspace is ws]
    return {"type": "pane_list", "panes": [rt.pane_view(ref) for ref in refs]}


@method("pane.get", PANE_TARGET, result="pane_info", mutates=False)
async def get(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """One pane."""
    return {"type": "pane_info", "pane": rt.pane_view(rt.pane(p["pane_id"]))}


@method(
    "pane.current", Obj(fields={"caller_pane_id": OPT_STR}), result="pane_current", mutates=False
)
async def current(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """The caller's pane when it says which, else the focused pane."""
    if p["caller_pane_id"] is not None:
        ref = rt.session.find_pane(p["caller_pane_id"])
        if ref is None:
            raise errors.pane_not_found()
    else:
        ref = rt.optional_pane(None)
    return {"type": "pane_current", "pane": rt.pane_view(ref)}


def _focus_and_report(rt: Runtime, ref: PaneRef) -> None:
    """Focus a pane; panes whose ``done`` turned into ``idle`` report it."""
    unseen = [key for key in ref.tab.layout.panes() if not rt.session.panes[key].seen]
    rt.session.focus_pane(ref)
    for key in unseen:
        rt.publish_status(rt.session.locate(key))


@method("pane.focus", PANE_TARGET, result="pane_info")
async def focus(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Focus a pane, switching workspace and tab to it."""
    ref = rt.pane(p["pane_id"])
    _focus_and_report(rt, ref)
    return {"type": "pane_info", "pane": rt.pane_view(ref)}


@method("pane.rename", Obj(fields={"pane_id": REQ_STR, "label": OPT_STR}), result="pane_info")
async def rename(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Set or clear a pane's manual label (no event, as in Herdr)."""
    ref = rt.pane(p["pane_id"])
    ref.pane.label = rt.session.clean_label(p["label"])
    return {"type": "pane_info", "pane": rt.pane_view(ref)}


@method("pane.close", PANE_TARGET, result="ok")
async def close(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Close a pane and end its process tree."""
    await rt.remove_pane(rt.pane(p["pane_id"]))
    return {"type": "ok"}


@method("pane.layout", OPT_PANE_TARGET, result="pane_layout", mutates=False)
async def layout(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """The layout snapshot of the pane's tab."""
    ref = rt.optional_pane(p["pane_id"])
    return {"type": "pane_layout", "layout": rt.layout_view(ref.workspace, ref.tab)}


@method(
    "pane.neighbor",
    Obj(fields={"pane_id": OPT_STR, "direction": F(DIRECTION, required=True)}),
    result="pane_neighbor",
    mutates=False,
)
async def neighbor(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """The adjacent pane in a direction, if any."""
    ref = rt.optional_pane(p["pane_id"])
    other = ref.tab.layout.neighbor(ref.pane.key, p["direction"], rt.area)
    result: dict[str, Any] = {"pane_id": ref.pane_id, "direction": p["direction"]}
    if other is not None:
        result["neighbor_pane_id"] = ref.workspace.pane_id(other)
    result["layout"] = rt.layout_view(ref.workspace, ref.tab)
    return {"type": "pane_neighbor", "neighbor": result}


@method("pane.edges", OPT_PANE_TARGET, result="pane_edges", mutates=False)
async def edges(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Which sides of the pane touch the tab's outer edge."""
    ref = rt.optional_pane(p["pane_id"])
    sides = ref.tab.layout.edges(ref.pane.key, rt.area)
    return {
        "type": "pane_edges",
        "edges": {
            "pane_id": ref.pane_id,
            **{side: sides[side] for side in ("left", "right", "up", "down")},
            "layout": rt.layout_view(ref.workspace, ref.tab),
        },
    }


@method(
    "pane.focus_direction",
    Obj(fields={"pane_id": OPT_STR, "direction": F(DIRECTION, required=True)}),
    result="pane_focus_direction",
)
async def focus_direction(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Move focus to the neighbour in a direction."""
    ref = rt.optional_pane(p["pane_id"])
    other = ref.tab.layout.neighbor(ref.pane.key, p["direction"], rt.area)
    result: dict[str, Any] = {"changed": other is not None}
    if other is None:
        result["reason"] = "no_neighbor"
    result["source_pane_id"] = ref.pane_id
    if other is not None:
        _focus_and_report(rt, PaneRef(ref.workspace, ref.tab, rt.session.panes[other]))
        result["focused_pane_id"] = ref.workspace.pane_id(other)
    result["layout"] = rt.layout_view(ref.workspace, ref.tab)
    return {"type": "pane_focus_direction", "focus": result}


@method(
    "pane.resize",
    Obj(fields={"pane_id": OPT_STR, "direction": F(DIRECTION, required=True), "amount": OPT_FLOAT}),
    result="pane_resize",
)
async def resize(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Move the divider on one side of a pane."""
    ref = rt.optional_pane(p["pane_id"])
    layout_ = ref.tab.layout
    changed = layout_.resize(ref.pane.key, p["direction"], p["amount"], rt.area)
    if changed:
        rt.publish_layout(ref.workspace, ref.tab)
    result: dict[str, Any] = {"changed": changed}
    if not changed:
        result["reason"] = "unchanged"
    result.update(
        {
            "pane_id": ref.pane_id,
            "focused_pane_id": ref.workspace.pane_id(layout_.focused),
            "layout": rt.layout_view(ref.workspace, ref.tab),
        }
    )
    return {"type": "pane_resize", "resize": result}


@method(
    "pane.zoom",
    Obj(
        fields={
            "pane_id": OPT_STR,
            "mode": ZOOM_MODE,
        }
    ),
    result="pane_zoom",
)
async def zoom(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Zoom (or unzoom) a pane to fill its tab."""
    ref = rt.optional_pane(p["pane_id"])
    was_focused = rt.session.is_focused(ref)
    outcome = ref.tab.layout.set_zoom(p["mode"], ref.pane.key)
    rt.session.focus_pane(ref)
    focus_changed = outcome.focus_changed or not was_focused
    if outcome.zoom_changed:
        rt.publish_layout(ref.workspace, ref.tab)
    result: dict[str, Any] = {
        "changed": outcome.zoom_changed or focus_changed,
        "zoom_changed": outcome.zoom_changed,
        "focus_changed": focus_changed,
    }
    if outcome.reason is not None:
        result["reason"] = outcome.reason
    result.update(
        {
            "pane_id": ref.pane_id,
            "focused_pane_id": ref.workspace.pane_id(ref.tab.layout.focused),
            "zoomed": ref.tab.layout.zoomed,
            "layout": rt.layout_view(ref.workspace, ref.tab),
        }
    )
    return {"type": "pane_zoom", "zoom": result}


@method(
    "pane.swap",
    Obj(
        fields={
            "pane_id": OPT_STR,
            "direction": F(Nullable(DIRECTION)),
            "source_pane_id": OPT_STR,
            "target_pane_id": OPT_STR,
        }
    ),
    result="pane_swap",
)
async def swap(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Exchange two panes' places (directional, or source + target)."""
    directional = p["direction"] is not None
    explicit = p["source_pane_id"] is not None or p["target_pane_id"] is not None
    if (
        directional == explicit
        or (explicit and (p["source_pane_id"] is None or p["target_pane_id"] is None))
        or (directional and p["source_pane_id"] is not None)
    ):
        raise HerdrError(
            errors.INVALID_PANE_SWAP,
            "provide either direction with optional pane_id, or source_pane_id and target_pane_id",
        )
    if directional:
        source = rt.optional_pane(p["pane_id"])
        outcome = source.tab.layout.swap_direction(source.pane.key, p["direction"], rt.area)
        target_id = None if outcome.target is None else source.workspace.pane_id(outcome.target)
    else:
        source = rt.pane(p["source_pane_id"])
        target = rt.session.find_pane(p["target_pane_id"])
        target_id = p["target_pane_id"] if target is None else target.pane_id
        if target is None:
            return _swap_result(rt, source, False, "not_found", target_id)
        if target.tab is not source.tab:
            return _swap_result(rt, source, False, "cross_tab", target.pane_id)
        outcome = source.tab.layout.swap(source.pane.key, target.pane.key)
    if outcome.changed:
        rt.publish_layout(source.workspace, source.tab)
    return _swap_result(rt, source, outcome.changed, outcome.reason, target_id)


def _swap_result(
    rt: Runtime, source: PaneRef, changed: bool, reason: str | None, target_id: str | None
) -> dict[str, Any]:
    result: dict[str, Any] = {"changed": changed}
    if reason is not None:
        result["reason"] = reason
    result["source_pane_id"] = source.pane_id
    if target_id is not None:
        result["target_pane_id"] = target_id
    result["focused_pane_id"] = source.workspace.pane_id(source.tab.layout.focused)
    result["layout"] = rt.layout_view(source.workspace, source.tab)
    return {"type": "pane_swap", "swap": result}


MOVE_DESTINATION = Tagged(
    variants={
        "tab": Obj(
            fields={
                "tab_id": REQ_STR,
                "target_pane_id": OPT_STR,
                "split": F(SPLIT_DIRECTION, required=True),
                "ratio": F(Nullable(Float())),
            }
        ),
        "new_tab": Obj(fields={"workspace_id": OPT_STR, "label": OPT_STR}),
        "new_workspace": Obj(fields={"label": OPT_STR, "tab_label": OPT_STR}),
    }
)


@method(
    "pane.move",
    Obj(
        fields={
            "pane_id": REQ_STR,
            "destination": F(MOVE_DESTINATION, required=True),
            "focus": FOCUS,
        }
    ),
    result="pane_move",
)
async def move(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Move a pane to another tab, a new tab or a new workspace; its process keeps running."""
    source = rt.session.find_pane(p["pane_id"])
    if source is None:
        raise HerdrError(errors.PANE_NOT_FOUND, "source pane not found")
    dest = p["destination"]
    src_ws, src_tab, pane = source.workspace, source.tab, source.pane
    previous = {
        "previous_pane_id": source.pane_id,
        "previous_workspace_id": src_ws.public_id,
        "previous_tab_id": source.tab_id,
    }
    created_ws: Workspace | None = None
    created_tab: Tab | None = None
    if dest["type"] == "tab":
        target_ws, target_tab = rt.tab(dest["tab_id"])
        if target_tab is src_tab:
            return _move_noop(rt, source, previous, "same_tab")
        if target_tab.layout.zoomed:
            return _move_noop(rt, source, previous, "zoomed_tab")
        if dest["target_pane_id"] is not None:
            anchor = rt.session.find_pane(dest["target_pane_id"])
            if anchor is None or anchor.tab is not target_tab:
                raise HerdrError(
                    errors.TARGET_PANE_NOT_FOUND,
                    f"target pane {dest['target_pane_id']} not found in tab {dest['tab_id']}",
                )
            anchor_key = anchor.pane.key
        else:
            anchor_key = target_tab.layout.focused
        if len(target_tab.layout) >= MAX_LAYOUT_PANES:
            raise HerdrError(errors.PANE_MOVE_FAILED, "target tab is full")
        closed = rt.session.detach_pane(source)
        target_tab.layout.split(anchor_key, pane.key, dest["split"], dest["ratio"])
    else:
        closed = None
        if dest["type"] == "new_tab":
            target_ws = rt.workspace(dest["workspace_id"]) if dest["workspace_id"] else src_ws
            if target_ws is src_ws and len(src_tab.layout) == 1:
                return _move_noop(rt, source, previous, "same_tab")
        else:
            ws, _, _ = _new_workspace_shell(rt, source, dest)
            target_ws = created_ws = ws
        closed = rt.session.detach_pane(source)
        target_tab = Tab(
            number=target_ws.next_tab_number,
            layout=Layout(pane.key),
            label=rt.session.clean_label(
                dest["label"] if dest["type"] == "new_tab" else dest["tab_label"]
            ),
        )
        target_ws.next_tab_number += 1
        target_ws.tabs.append(target_tab)
        created_tab = target_tab
        if created_ws is not None:
            rt.session.workspaces.append(created_ws)
            if rt.session.active is None:
                rt.session.focus_workspace(created_ws)
    if target_ws is not src_ws:
        rt.session.renumber_into(pane, src_ws, target_ws)
    ref = PaneRef(target_ws, target_tab, pane)
    if p["focus"]:
        rt.session.focus_pane(ref)
    rt.resize_tab(target_ws, target_tab)
    result: dict[str, Any] = {"changed": True, **previous, "pane": rt.pane_view(ref)}
    source_alive = src_ws in rt.session.workspaces and src_tab in src_ws.tabs
    if source_alive:
        rt.resize_tab(src_ws, src_tab)
        result["source_layout"] = rt.layout_view(src_ws, src_tab)
    result["target_layout"] = rt.layout_view(target_ws, target_tab)
    event: dict[str, Any] = {**previous, "pane": result["pane"]}
    if created_ws is not None:
        result["created_workspace"] = event["created_workspace"] = rt.workspace_view(created_ws)
    if created_tab is not None:
        result["created_tab"] = event["created_tab"] = rt.tab_view(target_ws, created_tab)
    if closed is not None:
        kind, _, closed_id = closed.partition(":")
        result[f"closed_{kind}_id"] = event[f"closed_{kind}_id"] = closed_id
    focused = rt.session.focused_pane()
    result["focused_pane_id"] = focused.pane_id if focused is not None else ref.pane_id
    rt.hub.publish("pane_moved", event)
    if source_alive:
        rt.hub.publish("layout_updated", {"layout": result["source_layout"]})
    rt.hub.publish("layout_updated", {"layout": result["target_layout"]})
    return {"type": "pane_move", "move_result": result}


def _new_workspace_shell(
    rt: Runtime, source: PaneRef, dest: dict[str, Any]
) -> tuple[Workspace, None, None]:
    """A workspace record with no tab yet, to receive a moved pane."""
    ws = Workspace(
        number=rt.session.next_workspace_number,
        identity_cwd=source.pane.cwd,
        label=rt.session.clean_label(dest["label"]),
    )
    ws.auto_label = workspace_auto_label(source.pane.cwd)
    rt.session.next_workspace_number += 1
    return ws, None, None


def _move_noop(
    rt: Runtime, source: PaneRef, previous: dict[str, Any], reason: str
) -> dict[str, Any]:
    layout_view = rt.layout_view(source.workspace, source.tab)
    focused = rt.session.focused_pane()
    return {
        "type": "pane_move",
        "move_result": {
            "changed": False,
            "reason": reason,
            **previous,
            "pane": rt.pane_view(source),
            "source_layout": layout_view,
            "target_layout": layout_view,
            "focused_pane_id": focused.pane_id if focused is not None else source.pane_id,
        },
    }


@method("pane.report_metadata", metadata_params(target="pane_id"), result="ok")
async def report_metadata(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Set or clear a pane's tokens and presentation (title, display name, state labels)."""
    apply_pane_metadata(rt, rt.pane(p["pane_id"]), p)
    return {"type": "ok"}
