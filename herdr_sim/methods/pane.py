"""``pane.*`` handlers for structure and geometry: split, list, focus, resize, move, close…"""

from __future__ import annotations

from typing import Any

from herdr_sim.registry import method
from herdr_sim.services import lifecycle
from herdr_sim.services.metadata import apply_pane_metadata, metadata_params
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Enum, F, Float, Nullable, Obj, Tagged

from ..model.layout import Layout
from ..model.session import PaneRef, Tab, Workspace
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
    """Split a pane; the new pane (returned) runs a fresh shell.

    As in Herdr, an unresolvable target (pane, workspace or nothing focused) is
    ``pane_not_found`` "pane not found", checked before the env.
    """
    found: PaneRef | None
    if p["target_pane_id"] is not None:
        found = rt.session.find_pane(p["target_pane_id"])
    elif p["workspace_id"] is not None:
        ws = rt.session.find_workspace(p["workspace_id"])
        found = None
        if ws is not None and ws.tabs:
            tab = ws.tabs[ws.active_tab]
            found = PaneRef(ws, tab, rt.session.panes[tab.layout.focused])
    else:
        found = rt.session.focused_pane()
    if found is None:
        raise errors.pane_not_found()
    target = found
    check_env(p["env"])
    cwd = p["cwd"] or rt.live_cwd(target)
    ratio = p["ratio"]
    pane = rt.session.split(target, p["direction"], ratio, cwd, p["focus"])
    pane.right_click = p["right_click"]
    ref = PaneRef(target.workspace, target.tab, pane)
    rt.resize_tab(target.workspace, target.tab)
    try:
        rt.spawn(ref, p["env"])
    except OSError as exc:
        rt.session.close_pane(ref)
        rt.resize_tab(target.workspace, target.tab)
        raise HerdrError(errors.PANE_SPLIT_FAILED, f"failed to split pane: {exc}") from None
    view = rt.pane_view(ref)
    rt.hub.publish(lifecycle.pane_created(view))
    rt.hub.publish(lifecycle.layout_updated(rt.layout_view(target.workspace, target.tab)))
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
    """Close a pane and end its process tree.

    Not the last pane of a worktree group's parent: that would close the group, which Herdr
    confirms first (``confirmation_required``).
    """
    ref = rt.pane(p["pane_id"])
    closes_workspace = len(ref.workspace.tabs) <= 1 and len(ref.tab.layout.panes()) <= 1
    if closes_workspace and len(rt.session.worktree_group(ref.workspace)) >= 2:
        raise errors.group_close_needs_confirmation("pane")
    await rt.remove_pane(ref)
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
    if outcome.zoom_changed or focus_changed:
        # Herdr emits layout.updated when either the zoom or the focus changed.
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
    """Exchange two panes' places (directional, or source + target).

    Herdr's rules: exactly one form; a directional source that does not resolve is
    ``pane_not_found`` "source pane not found"; in the explicit form, unknown panes are a
    ``not_found`` no-op (not an error), answered in the tab of whichever pane resolved.
    """
    directional = p["direction"] is not None
    explicit = p["source_pane_id"] is not None or p["target_pane_id"] is not None
    if directional == explicit:
        raise HerdrError(
            errors.INVALID_PANE_SWAP,
            "provide either direction with optional pane_id, or source_pane_id and target_pane_id",
        )
    reason: str | None
    if directional:
        source = (
            rt.session.find_pane(p["pane_id"])
            if p["pane_id"] is not None
            else rt.session.focused_pane()
        )
        if source is None:
            raise HerdrError(errors.PANE_NOT_FOUND, "source pane not found")
        ws, tab, source_key = source.workspace, source.tab, source.pane.key
        target_key = tab.layout.neighbor(source_key, p["direction"], rt.area)
        reason = None if target_key is not None else "no_neighbor"
        source_id = source.pane_id
        target_id = None if target_key is None else ws.pane_id(target_key)
    else:
        if p["source_pane_id"] is None:
            raise HerdrError(errors.INVALID_PANE_SWAP, "missing source_pane_id")
        if p["target_pane_id"] is None:
            raise HerdrError(errors.INVALID_PANE_SWAP, "missing target_pane_id")
        found_source = rt.session.find_pane(p["source_pane_id"])
        found_target = rt.session.find_pane(p["target_pane_id"])
        context = found_source or found_target
        if context is not None:
            ws, tab = context.workspace, context.tab
        else:
            active = rt.session.active_workspace
            if active is None or not active.tabs:
                raise HerdrError(errors.PANE_LAYOUT_UNAVAILABLE, "pane layout unavailable")
            ws, tab = active, active.tabs[active.active_tab]
        source_key = found_source.pane.key if found_source is not None else tab.layout.focused
        target_key = found_target.pane.key if found_target is not None else None
        if found_source is None or found_target is None:
            reason = "not_found"
        elif found_source.pane.key == found_target.pane.key:
            reason = "same_pane"
        elif found_source.tab is not found_target.tab:
            reason = "cross_tab"
        else:
            reason = None
        source_id = found_source.pane_id if found_source is not None else p["source_pane_id"]
        target_id = found_target.pane_id if found_target is not None else p["target_pane_id"]
    changed = False
    if reason is None and target_key is not None:
        changed = tab.layout.swap(source_key, target_key).changed
        if changed:
            rt.session.focus_pane(PaneRef(ws, tab, rt.session.panes[source_key]))
            rt.publish_layout(ws, tab)
    result: dict[str, Any] = {"changed": changed}
    if reason is not None:
        result["reason"] = reason
    result["source_pane_id"] = source_id
    if target_id is not None:
        result["target_pane_id"] = target_id
    result["focused_pane_id"] = ws.pane_id(tab.layout.focused)
    result["layout"] = rt.layout_view(ws, tab)
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
    """Move a pane to another tab, a new tab or a new workspace; its process keeps running.

    Herdr's order of checks: the source (``pane_not_found`` "source pane not found"), a
    zoomed source tab (``zoomed_tab`` no-op), then the destination. A cross-workspace move
    gives the pane the destination's next number and keeps its old id as an alias.
    """
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
    if src_tab.layout.zoomed:
        return _move_noop(rt, source, previous, "zoomed_tab", src_ws, src_tab)
    target_ws: Workspace | None = None
    target_tab: Tab | None = None
    anchor_key = 0
    if dest["type"] == "tab":
        target_ws, target_tab = rt.tab(dest["tab_id"])
        if target_tab is src_tab:
            return _move_noop(rt, source, previous, "same_tab", src_ws, src_tab)
        if target_tab.layout.zoomed:
            return _move_noop(rt, source, previous, "zoomed_tab", target_ws, target_tab)
        raw = dest["target_pane_id"]
        if raw is not None:
            anchor = rt.session.find_pane(raw)
            if anchor is None:
                raise HerdrError(errors.TARGET_PANE_NOT_FOUND, f"target pane {raw} not found")
            if anchor.tab is not target_tab:
                raise HerdrError(
                    errors.TARGET_PANE_NOT_FOUND,
                    f"target pane {raw} is not in tab {dest['tab_id']}",
                )
            anchor_key = anchor.pane.key
        else:
            anchor_key = target_tab.layout.focused
        cross = target_ws is not src_ws
    elif dest["type"] == "new_tab":
        target_ws = rt.workspace(dest["workspace_id"]) if dest["workspace_id"] else src_ws
        cross = target_ws is not src_ws
    else:
        cross = True
    closed_tab_id, closed_ws_id = _take_for_move(rt, source, cross)
    created_ws: Workspace | None = None
    created_tab: Tab | None = None
    if target_tab is not None:
        assert target_ws is not None
        target_tab.layout.split(
            anchor_key, pane.key, dest["split"], dest["ratio"], focus=p["focus"]
        )
    else:
        if target_ws is None:
            target_ws = created_ws = _new_workspace_shell(rt, source, dest)
        label = dest["label"] if dest["type"] == "new_tab" else dest["tab_label"]
        target_tab = created_tab = Tab(
            number=target_ws.next_tab_number,
            layout=Layout(pane.key),
            label=rt.session.clean_label(label),
        )
        target_ws.next_tab_number += 1
        target_ws.tabs.append(target_tab)
        if created_ws is not None:
            rt.session.workspaces.append(created_ws)
    if cross:
        rt.session.renumber_into(pane, src_ws, target_ws)
    ref = PaneRef(target_ws, target_tab, pane)
    if p["focus"] or rt.session.active is None:
        rt.session.focus_tab(target_ws, target_tab)
    rt.resize_tab(target_ws, target_tab)
    result: dict[str, Any] = {"changed": True, **previous, "pane": rt.pane_view(ref)}
    source_alive = closed_tab_id is None and closed_ws_id is None
    if source_alive:
        rt.resize_tab(src_ws, src_tab)
        result["source_layout"] = rt.layout_view(src_ws, src_tab)
    result["target_layout"] = rt.layout_view(target_ws, target_tab)
    created_ws_view = None if created_ws is None else rt.workspace_view(created_ws)
    created_tab_view = None if created_tab is None else rt.tab_view(target_ws, created_tab)
    moved = lifecycle.pane_moved(
        previous,
        result["pane"],
        created_workspace=created_ws_view,
        created_tab=created_tab_view,
        closed_workspace_id=closed_ws_id,
        closed_tab_id=closed_tab_id,
    )
    result.update((key, value) for key, value in moved.data.items() if key not in result)
    result["focused_pane_id"] = target_ws.pane_id(target_tab.layout.focused)
    if closed_tab_id is not None:
        rt.hub.publish(lifecycle.tab_closed(closed_tab_id, src_ws.public_id))
    if closed_ws_id is not None:
        rt.hub.publish(lifecycle.workspace_closed(closed_ws_id))
    if created_ws_view is not None:
        rt.hub.publish(lifecycle.workspace_created(created_ws_view))
    if created_tab_view is not None:
        rt.hub.publish(lifecycle.tab_created(created_tab_view))
    rt.hub.publish(moved)
    if source_alive:
        rt.hub.publish(lifecycle.layout_updated(result["source_layout"]))
    rt.hub.publish(lifecycle.layout_updated(result["target_layout"]))
    return {"type": "pane_move", "move_result": result}


def _take_for_move(rt: Runtime, source: PaneRef, cross: bool) -> tuple[str | None, str | None]:
    """Take the pane out of its layout; returns (closed tab id, closed workspace id).

    As in Herdr, a pane alone in its tab takes the tab with it, and the workspace goes too
    only when it emptied *and* the pane leaves for another workspace (a same-workspace
    ``new_tab`` move of a workspace's only pane keeps the workspace).
    """
    ws, tab = source.workspace, source.tab
    if len(tab.layout) > 1:
        tab.layout.remove(source.pane.key)
        return None, None
    tab_id = source.tab_id
    if len(ws.tabs) == 1 and not cross:
        ws.tabs.clear()
        ws.active_tab = 0
        return tab_id, None
    closed = rt.session.detach_pane(source)
    if closed is not None and closed.startswith("workspace:"):
        return tab_id, ws.public_id
    return tab_id, None


def _new_workspace_shell(rt: Runtime, source: PaneRef, dest: dict[str, Any]) -> Workspace:
    """A workspace record with no tab yet, to receive a moved pane."""
    cwd = rt.live_cwd(source)
    ws = Workspace(
        number=rt.session.next_workspace_number,
        identity_cwd=cwd,
        label=rt.session.clean_label(dest["label"]),
    )
    ws.auto_label = rt.auto_label(cwd)
    rt.session.next_workspace_number += 1
    return ws


def _move_noop(
    rt: Runtime,
    source: PaneRef,
    previous: dict[str, Any],
    reason: str,
    target_ws: Workspace,
    target_tab: Tab,
) -> dict[str, Any]:
    """``changed: false``; ``focused_pane_id`` is the target tab's focused pane, as in Herdr."""
    target_layout = rt.layout_view(target_ws, target_tab)
    return {
        "type": "pane_move",
        "move_result": {
            "changed": False,
            "reason": reason,
            **previous,
            "pane": rt.pane_view(source),
            "source_layout": rt.layout_view(source.workspace, source.tab),
            "target_layout": target_layout,
            "focused_pane_id": target_layout["focused_pane_id"],
        },
    }


@method("pane.report_metadata", metadata_params(target="pane_id"), result="ok")
async def report_metadata(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Set or clear a pane's tokens and presentation (title, display name, state labels)."""
    apply_pane_metadata(rt, rt.pane(p["pane_id"]), p)
    return {"type": "ok"}
