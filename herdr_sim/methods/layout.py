"""``layout.*`` handlers: export a tab's tree, build a tab from a tree, set one split ratio."""

from __future__ import annotations

import math
from typing import Any

from herdr_sim.host.shell import validate_env
from herdr_sim.registry import method
from herdr_sim.services import lifecycle
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import (
    Bool,
    F,
    Float,
    Kind,
    ListOf,
    MapOf,
    Nullable,
    Obj,
    ParamError,
    Str,
)

from ..model.geometry import to_f32
from ..model.layout import MAX_LAYOUT_DEPTH, MAX_LAYOUT_PANES, InvalidRatioError
from ..model.session import PaneRef, Tab, Workspace
from .specs import FOCUS, OPT_STR, SPLIT_DIRECTION


class LayoutNodeKind(Kind):
    """``LayoutNode``: ``{"type":"pane",…}`` or ``{"type":"split",…,first,second}``."""

    expected = "internally tagged enum LayoutNode"
    _pane = Obj(
        fields={
            "pane_id": OPT_STR,
            "cwd": OPT_STR,
            "label": OPT_STR,
            "command": F(Nullable(ListOf(Str()))),
            "env": F(MapOf(Str()), default=dict),
        }
    )

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, dict):
            raise self.mismatch(value)
        kind = value.get("type")
        if kind == "pane":
            out: dict[str, Any] = self._pane.check(value, where)
        elif kind == "split":
            split = Obj(
                fields={
                    "direction": F(SPLIT_DIRECTION, required=True),
                    "ratio": F(Float(), required=True),
                    "first": F(self, required=True),
                    "second": F(self, required=True),
                }
            )
            out = split.check(value, where)
        elif kind is None:
            raise ParamError("missing field `type`")
        else:
            raise ParamError(f"unknown variant `{kind}`, expected `pane` or `split`")
        out["type"] = kind
        return out

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "description": "LayoutNode (pane or split)"}


TARGET = Obj(fields={"tab_id": OPT_STR, "pane_id": OPT_STR})


def _target(rt: Runtime, tab_id: str | None, pane_id: str | None) -> tuple[Workspace, Tab]:
    not_found = HerdrError("layout_not_found", "layout target not found")
    if tab_id is not None and pane_id is not None:
        raise not_found
    if tab_id is not None:
        found = rt.session.find_tab(tab_id)
        if found is None:
            raise not_found
        return found
    if pane_id is not None:
        ref = rt.session.find_pane(pane_id)
        if ref is None:
            raise not_found
        return ref.workspace, ref.tab
    ws = rt.session.active_workspace
    if ws is None:
        raise not_found
    return ws, ws.tabs[ws.active_tab]


def describe(rt: Runtime, ws: Workspace, tab: Tab) -> dict[str, Any]:
    """LayoutDescription: the portable tree with each pane's cwd, label and launch command."""

    def node(tree: Any) -> dict[str, Any]:
        if hasattr(tree, "pane"):
            ref = PaneRef(ws, tab, rt.session.panes[tree.pane])
            # Herdr's LayoutPane field order: pane_id, label, cwd, command.
            pane: dict[str, Any] = {"type": "pane", "pane_id": ref.pane_id}
            if ref.pane.label is not None:
                pane["label"] = ref.pane.label
            pane["cwd"] = rt.live_cwd(ref)
            if ref.pane.launch_argv is not None:
                pane["command"] = list(ref.pane.launch_argv)
            return pane
        return {
            "type": "split",
            "direction": tree.direction,
            "ratio": tree.ratio,
            "first": node(tree.first),
            "second": node(tree.second),
        }

    return {
        "workspace_id": ws.public_id,
        "tab_id": ws.tab_id(tab),
        "zoomed": tab.layout.zoomed,
        "focused_pane_id": ws.pane_id(tab.layout.focused),
        "root": node(tab.layout.to_tree()),
    }


@method("layout.export", TARGET, result="layout_export", mutates=False)
async def export(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """A tab's layout as a tree that ``layout.apply`` can rebuild."""
    ws, tab = _target(rt, p["tab_id"], p["pane_id"])
    return {"type": "layout_export", "layout": describe(rt, ws, tab)}


def validate_tree(root: dict[str, Any]) -> None:
    """Herdr's limits: at most 24 panes, depth 16, non-empty commands, valid env."""
    panes = 0

    def visit(node: dict[str, Any], depth: int) -> None:
        nonlocal panes
        if depth > MAX_LAYOUT_DEPTH:
            raise HerdrError(
                errors.INVALID_LAYOUT, f"layout depth is {depth}; maximum is {MAX_LAYOUT_DEPTH}"
            )
        if node["type"] == "pane":
            panes += 1
            if panes > MAX_LAYOUT_PANES:
                raise HerdrError(
                    errors.INVALID_LAYOUT, f"layout has more than {MAX_LAYOUT_PANES} panes"
                )
            if node["command"] is not None and not node["command"]:
                raise HerdrError(errors.INVALID_LAYOUT, "pane command must not be empty")
            problem = validate_env(node["env"])
            if problem is not None:
                raise HerdrError(errors.INVALID_LAYOUT, problem)
            return
        # Herdr's ratio is an f32: serde makes 1e39 infinite, and validation refuses it
        # (src/app/api/layouts.rs)
        if not math.isfinite(to_f32(node["ratio"])):
            raise HerdrError(errors.INVALID_LAYOUT, "split ratio must be finite")
        visit(node["first"], depth + 1)
        visit(node["second"], depth + 1)

    visit(root, 1)


def _first_leaf(node: dict[str, Any]) -> dict[str, Any]:
    while node["type"] == "split":
        node = node["first"]
    return node


@method(
    "layout.apply",
    Obj(
        fields={
            "root": F(LayoutNodeKind(), required=True),
            "tab_id": OPT_STR,
            "workspace_id": OPT_STR,
            "tab_label": OPT_STR,
            "focus": FOCUS,
        }
    ),
    result="layout_apply",
)
async def apply(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Build a new tab from a tree; with ``tab_id`` it replaces that tab."""
    replace = None
    if p["tab_id"] is not None:
        replace = rt.session.find_tab(p["tab_id"])
        if replace is None:
            raise errors.tab_not_found(p["tab_id"])
        if p["workspace_id"] is not None:
            raise HerdrError("invalid_target", "use either tab_id or workspace_id, not both")
    if replace is not None:
        ws = replace[0]
    elif p["workspace_id"] is not None:
        ws = rt.workspace(p["workspace_id"])
    elif rt.session.active_workspace is not None:
        ws = rt.session.active_workspace
    else:
        raise errors.no_active_workspace()
    validate_tree(p["root"])
    root_leaf = _first_leaf(p["root"])
    label = p["tab_label"]
    if label is None and replace is not None:
        label = replace[1].label
    replace_was_active = replace is not None and rt.session.is_active_tab(*replace)
    # Herdr's root cwd: the leaf's, else the replaced tab's focused pane's, else the
    # focused pane's of the target workspace (not of the active one).
    follow_ws, follow_tab = replace if replace is not None else (ws, ws.tabs[ws.active_tab])
    follow = PaneRef(follow_ws, follow_tab, rt.session.panes[follow_tab.layout.focused])
    cwd = root_leaf["cwd"] or rt.live_cwd(follow)
    tab, root = rt.session.create_tab(ws, cwd, rt.session.clean_label(label), False)
    created: list[int] = []

    def launch(ref: PaneRef, leaf: dict[str, Any]) -> None:
        ref.pane.launch_argv = leaf["command"]
        ref.pane.label = rt.session.clean_label(leaf["label"])
        created.append(ref.pane.key)
        rt.spawn(ref, leaf["env"])

    def build(key: int, node: dict[str, Any]) -> None:
        if node["type"] == "pane":
            return
        leaf = _first_leaf(node["second"])
        ref = rt.session.locate(key)
        new = rt.session.split(
            ref, node["direction"], node["ratio"], leaf["cwd"] or rt.live_cwd(ref), False
        )
        launch(PaneRef(ws, tab, new), leaf)
        build(key, node["first"])
        build(new.key, node["second"])

    try:
        launch(rt.session.locate(root.key), root_leaf)
        build(root.key, p["root"])
    except OSError as exc:
        rt.session.close_tab(ws, tab)
        await rt.reap(created)
        raise HerdrError("layout_apply_failed", str(exc)) from None
    rt.resize_tab(ws, tab)
    if replace is not None:
        old_ws, old_tab = replace
        closed_id = old_ws.tab_id(old_tab)
        keys, _ = rt.session.close_tab(old_ws, old_tab)
        rt.hub.publish(lifecycle.tab_closed(closed_id, old_ws.public_id))
        await rt.reap(keys)
    if p["focus"] or replace_was_active:
        rt.session.focus_tab(ws, tab)
    rt.hub.publish(lifecycle.tab_created(rt.tab_view(ws, tab)))
    for key in tab.layout.panes():
        rt.hub.publish(lifecycle.pane_created(rt.pane_view(rt.session.locate(key))))
    rt.hub.publish(lifecycle.layout_updated(rt.layout_view(ws, tab)))
    return {"type": "layout_apply", "layout": describe(rt, ws, tab)}


@method(
    "layout.set_split_ratio",
    Obj(
        fields={
            "tab_id": OPT_STR,
            "pane_id": OPT_STR,
            "path": F(ListOf(Bool()), required=True),
            "ratio": F(Float(), required=True),
        }
    ),
    result="layout_split_ratio_set",
)
async def set_split_ratio(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Set the ratio of the split at a tree path (``[]`` is the root split)."""
    if not math.isfinite(p["ratio"]):
        raise HerdrError("invalid_ratio", "ratio must be finite")
    ws, tab = _target(rt, p["tab_id"], p["pane_id"])
    try:
        changed = tab.layout.set_split_ratio(p["path"], p["ratio"])
    except InvalidRatioError:
        raise HerdrError("invalid_ratio", "ratio must be finite") from None
    if not changed:
        raise HerdrError("split_not_found", "split path not found")
    rt.publish_layout(ws, tab)
    return {"type": "layout_split_ratio_set", "layout": describe(rt, ws, tab)}
