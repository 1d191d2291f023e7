"""``plugin.pane.*``: a plugin's pane entrypoint opened as a real pane (``panes.rs``).

Herdr opens a plugin pane as an ordinary pane whose process is the entrypoint's argv, in
the plugin directory unless the caller names a cwd, labelled with the entrypoint's title,
with Herdr's plugin variables in its environment; ``plugin.pane.focus``/``close`` act only on
panes opened this way (``src/app/api/plugins/mod.rs``). Overlay, split, zoomed and tab
placements are implemented; a popup is a floating pane only a TUI draws, and is refused.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from herdr_sim.herdr_plugins.commands import resolve_program
from herdr_sim.herdr_plugins.registry import (
    PluginError,
    effective_platforms,
    ensure_platform_supported,
    manifest_available,
    normalize_action_id,
)
from herdr_sim.registry import method
from herdr_sim.services import lifecycle
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Enum, F, Kind, Nullable, Obj, ParamError

from ..model.session import PaneRef
from .pane import _focus_and_report as focus_and_report
from .plugins import (
    HOST_PLATFORM,
    PluginHost,
    herdr_env,
    host,
    load_registry,
    pane_context,
    plugin_context,
    plugin_failure,
    plugin_id_param,
)
from .specs import ENV, FOCUS, OPT_STR, REQ_STR, SPLIT_DIRECTION
from .workspace import check_env

#: env a caller may not set on a plugin pane (``plugin_pane_protected_env_key``)
_PROTECTED_ENV = frozenset(
    {
        "HERDR_SOCKET_PATH",
        "HERDR_ENV",
        "HERDR_PLUGIN_ID",
        "HERDR_PLUGIN_ROOT",
        "HERDR_PLUGIN_CONFIG_DIR",
        "HERDR_PLUGIN_STATE_DIR",
        "HERDR_PLUGIN_ENTRYPOINT_ID",
        "HERDR_PLUGIN_CONTEXT_JSON",
        "HERDR_BIN_PATH",
    }
)


class _PopupSize(Kind):
    """``PopupSize``: a cell count (u16) or a percentage string like ``80%``."""

    expected = "a cell count or percentage string like 80%"

    def check(self, value: Any, where: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise self.mismatch(value)
        if isinstance(value, int):
            if not 0 <= value <= 65535:
                raise ParamError(f"invalid value: integer `{value}`, expected u16")
            return value
        if not value.endswith("%"):
            raise ParamError("string sizes must be percentages like 80%; use a number for cells")
        digits = value[:-1]
        if not (digits.isascii() and digits.isdigit() and 1 <= int(digits) <= 100):
            raise ParamError("percentage must be between 1% and 100%")
        return value

    def schema(self) -> dict[str, Any]:
        return {
            "oneOf": [
                {"type": "integer", "minimum": 0, "maximum": 65535},
                {"type": "string", "pattern": "^(100|[1-9][0-9]?)%$"},
            ]
        }


#: the ``correlation_id`` of a plugin pane's context (Herdr's ``"plugin-pane"``)
PANE_CID = "plugin-pane"
PLACEMENT = Enum(values=("overlay", "popup", "split", "tab", "zoomed"))


# -- plugin panes -----------------------------------------------------------------------------


@method(
    "plugin.pane.open",
    Obj(
        fields={
            "plugin_id": REQ_STR,
            "entrypoint": REQ_STR,
            "placement": F(Nullable(PLACEMENT)),
            "width": F(Nullable(_PopupSize())),
            "height": F(Nullable(_PopupSize())),
            "workspace_id": OPT_STR,
            "target_pane_id": OPT_STR,
            "direction": F(Nullable(SPLIT_DIRECTION)),
            "cwd": OPT_STR,
            "focus": FOCUS,
            "env": ENV,
        }
    ),
    result="plugin_pane_opened",
)
async def pane_open(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Open a plugin's pane entrypoint as a real pane running its command."""
    h = host(rt)
    plugins = load_registry(h)
    plugin_id = plugin_id_param(p["plugin_id"])
    plugin = plugins.get(plugin_id)
    if plugin is None:
        raise HerdrError("plugin_not_found", "plugin not found")
    if not manifest_available(plugin):
        raise HerdrError(
            "plugin_manifest_unavailable", f"plugin {plugin_id} manifest is unavailable"
        )
    if not plugin["enabled"]:
        raise HerdrError("plugin_disabled", f"plugin {plugin_id} is disabled")
    entrypoint = normalize_action_id(p["entrypoint"])
    if entrypoint is None:
        raise HerdrError("invalid_plugin_entrypoint", "invalid entrypoint id")
    pane = next((item for item in plugin.get("panes", ()) if item["id"] == entrypoint), None)
    if pane is None:
        raise HerdrError(
            "plugin_pane_not_found", f"plugin pane entrypoint '{entrypoint}' not found"
        )
    try:
        ensure_platform_supported(effective_platforms(pane, plugin), "plugin pane", HOST_PLATFORM)
    except PluginError as exc:
        raise plugin_failure(exc) from None
    placement = p["placement"] or pane["placement"]
    sized = p["width"] is not None or p["height"] is not None
    if placement != "popup" and sized:
        raise HerdrError(
            errors.INVALID_PARAMS, "width and height are only supported when placement is popup"
        )
    targeted = p["target_pane_id"] is not None or p["direction"] is not None
    if placement in ("overlay", "popup") and (p["workspace_id"] is not None or targeted):
        raise HerdrError(
            errors.INVALID_PARAMS, "overlay and popup plugin panes target the active pane"
        )
    if placement in ("split", "zoomed") and p["workspace_id"] is not None:
        raise HerdrError(
            errors.INVALID_PARAMS,
            "split and zoomed plugin panes target an existing pane; use target_pane_id",
        )
    if placement == "tab" and targeted:
        raise HerdrError(
            errors.INVALID_PARAMS,
            "tab plugin panes support workspace_id but not target_pane_id or direction",
        )
    if placement == "popup":
        raise HerdrError(
            errors.NOT_SUPPORTED,
            "plugin popup panes are drawn by an attached TUI outside every layout, which the "
            "simulator (herdr-sim) does not have; see docs/simulator/fidelity.md",
        )
    opener = _open_tab if placement == "tab" else _open_split
    ref = await opener(rt, h, plugin, pane, placement, p)
    return {"type": "plugin_pane_opened", "plugin_pane": _pane_record(rt, ref, plugin_id, pane)}


def _pane_env(
    rt: Runtime,
    h: PluginHost,
    plugin: dict[str, Any],
    entrypoint: str,
    given: dict[str, str],
    context: dict[str, Any],
    cwd: str,
) -> dict[str, str]:
    """``plugin_pane_launch_env``: the caller's env minus protected keys, then Herdr's."""
    check_env(given)
    h.user_dirs(plugin)
    env = {"PWD": cwd} | {key: value for key, value in given.items() if key not in _PROTECTED_ENV}
    env |= h.path_env(plugin) | herdr_env(rt)
    env |= {
        "HERDR_PLUGIN_ID": str(plugin["plugin_id"]),
        "HERDR_PLUGIN_ENTRYPOINT_ID": entrypoint,
        "HERDR_PLUGIN_CONTEXT_JSON": json.dumps(context, separators=(",", ":")),
    }
    return env


async def _open_split(
    rt: Runtime,
    h: PluginHost,
    plugin: dict[str, Any],
    pane: dict[str, Any],
    placement: str,
    p: dict[str, Any],
) -> PaneRef:
    """Overlay, split and zoomed placements: a split of an existing pane.

    An overlay splits the active workspace's focused pane to the right, focuses the new pane
    and zooms it (Herdr's ``spawn_overlay_argv_command``); split and zoomed split the
    ``target_pane_id`` (default: the focused pane) in ``direction`` (default right).
    """
    cwd = rt.launch_dir(p["cwd"] or str(plugin["plugin_root"]), p["env"])
    found: PaneRef | None
    if placement == "overlay":
        # the env is checked before the active pane is looked for, as in Herdr
        env = _pane_env(rt, h, plugin, pane["id"], p["env"], plugin_context(rt, PANE_CID), cwd)
        found = rt.session.focused_pane()
        if found is None:
            raise HerdrError("plugin_pane_open_failed", "no active workspace")
        direction, focus = "right", True
    else:
        raw = p["target_pane_id"]
        found = rt.session.focused_pane() if raw is None else rt.session.find_pane(raw)
        if found is None and raw is None:
            raise HerdrError("no_active_pane", "no active pane")
        if found is None:
            raise HerdrError(errors.PANE_NOT_FOUND, f"pane {raw} not found")
        context = pane_context(rt, found, PANE_CID)
        env = _pane_env(rt, h, plugin, pane["id"], p["env"], context, cwd)
        direction, focus = p["direction"] or "right", p["focus"] or placement == "zoomed"
    target = found
    previous_zoomed = target.tab.layout.zoomed  # a split unzooms
    new = rt.session.split(target, direction, None, cwd, focus)  # type: ignore[arg-type]
    ref = PaneRef(target.workspace, target.tab, new)

    _spawn_plugin_pane(rt, ref, pane, cwd, env)
    if placement != "split":
        target.tab.layout.set_zoom("on", new.key)
    if placement == "overlay":
        _watch_overlay(rt, ref, target.pane.key, previous_zoomed)
    rt.resize_tab(target.workspace, target.tab)
    return _finish_open(rt, h, ref, plugin, pane, created_tab=False)


def _watch_overlay(rt: Runtime, ref: PaneRef, previous_focus: int, previous_zoomed: bool) -> None:
    """When an overlay's process exits, give its tab back (Herdr's
    ``restore_overlay_after_exit``): if the overlay had the tab's focus, the pane focused
    before it gets focus again and the tab its old zoom; otherwise only the zoom the tab had
    at the exit is kept. Closing the pane by request restores nothing, as in Herdr."""
    ws, tab, key = ref.workspace, ref.tab, ref.pane.key

    def on_event(envelope: dict[str, Any]) -> None:
        if key not in rt.session.panes:  # closed by request: nothing to give back
            rt.hub.remove_listener(on_event)
            return
        if envelope.get("event") != "pane_exited":
            return
        found = rt.session.find_pane(str(envelope["data"].get("pane_id")))
        if found is None or found.pane.key != key:
            return
        rt.hub.remove_listener(on_event)
        was_focused = tab.layout.focused == key
        was_active = rt.session.is_active_tab(ws, tab)
        zoomed_at_exit = tab.layout.zoomed
        asyncio.get_running_loop().call_soon(restore, was_focused, was_active, zoomed_at_exit)

    def restore(was_focused: bool, was_active: bool, zoomed_at_exit: bool) -> None:
        if key in rt.session.panes or ws not in rt.session.workspaces or tab not in ws.tabs:
            return
        layout = tab.layout
        focus, zoomed = layout.focused, zoomed_at_exit
        if was_focused:
            if was_active:
                ws.active_tab = ws.tabs.index(tab)
            if previous_focus in layout.panes():
                focus = previous_focus
            zoomed = previous_zoomed
        layout.focus(focus)
        if len(layout) > 1 and layout.zoomed != zoomed:
            layout.set_zoom("on" if zoomed else "off", focus)
        rt.resize_tab(ws, tab)

    rt.hub.add_listener(on_event)


async def _open_tab(
    rt: Runtime,
    h: PluginHost,
    plugin: dict[str, Any],
    pane: dict[str, Any],
    placement: str,
    p: dict[str, Any],
) -> PaneRef:
    """Tab placement: a new tab (in ``workspace_id`` or the active workspace)."""
    if p["workspace_id"] is not None:
        ws = rt.session.find_workspace(p["workspace_id"])
        if ws is None:
            raise HerdrError(errors.WORKSPACE_NOT_FOUND, "workspace not found")
    else:
        ws = rt.session.active_workspace
        if ws is None:
            raise HerdrError("no_active_workspace", "no active workspace")
    context = {"invocation_source": "api", "correlation_id": PANE_CID}
    if ws.tabs:  # Herdr's plugin_context_for_workspace: its focused pane
        tab = ws.tabs[ws.active_tab]
        focused = PaneRef(ws, tab, rt.session.panes[tab.layout.focused])
        context = pane_context(rt, focused, PANE_CID)
    cwd = rt.launch_dir(p["cwd"] or str(plugin["plugin_root"]), p["env"])
    env = _pane_env(rt, h, plugin, pane["id"], p["env"], context, cwd)
    tab, new = rt.session.create_tab(ws, cwd, None, False)
    ref = PaneRef(ws, tab, new)
    try:
        _spawn_plugin_pane(rt, ref, pane, cwd, env)
    except HerdrError:
        rt.session.close_tab(ws, tab)
        raise
    if p["focus"]:
        rt.session.focus_tab(ws, tab)
    return _finish_open(rt, h, ref, plugin, pane, created_tab=True)


def _spawn_plugin_pane(
    rt: Runtime, ref: PaneRef, pane: dict[str, Any], cwd: str, env: dict[str, str]
) -> None:
    """Start the entrypoint's argv in the pane's pty, labelled with the pane's title."""
    ref.pane.launch_argv = resolve_program(list(pane["command"]), Path(cwd))
    ref.pane.label = pane["title"]
    try:
        rt.spawn(ref, env)
    except OSError as exc:
        if len(ref.tab.layout) > 1:
            rt.session.close_pane(ref)
            rt.resize_tab(ref.workspace, ref.tab)
        raise HerdrError("plugin_pane_open_failed", str(exc)) from None


def _finish_open(
    rt: Runtime,
    h: PluginHost,
    ref: PaneRef,
    plugin: dict[str, Any],
    pane: dict[str, Any],
    *,
    created_tab: bool,
) -> PaneRef:
    """Record the plugin pane and emit Herdr's events (``finish_plugin_pane_open``)."""
    live = rt.session.panes  # records of panes gone since are dropped here (bounded memory)
    h.panes = {key: record for key, record in h.panes.items() if key in live}
    h.panes[ref.pane.key] = (str(plugin["plugin_id"]), str(pane["id"]))
    if created_tab:
        rt.hub.publish(lifecycle.tab_created(rt.tab_view(ref.workspace, ref.tab)))
    rt.hub.publish(lifecycle.pane_created(rt.pane_view(ref)))
    rt.hub.publish(lifecycle.layout_updated(rt.layout_view(ref.workspace, ref.tab)))
    return ref


def _pane_record(rt: Runtime, ref: PaneRef, plugin_id: str, pane: dict[str, Any]) -> dict[str, Any]:
    return {"plugin_id": plugin_id, "entrypoint": pane["id"], "pane": rt.pane_view(ref)}


def _plugin_pane(rt: Runtime, raw: str) -> tuple[PaneRef, tuple[str, str]]:
    """A live pane opened by ``plugin.pane.open`` (else ``plugin_pane_not_found``)."""
    h = host(rt)
    ref = rt.session.find_pane(raw)
    record = None if ref is None else h.panes.get(ref.pane.key)
    if ref is None or record is None:
        raise HerdrError("plugin_pane_not_found", "plugin pane not found")
    return ref, record


@method("plugin.pane.focus", Obj(fields={"pane_id": REQ_STR}), result="plugin_pane_focused")
async def pane_focus(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Focus a plugin pane, switching workspace and tab to it."""
    ref, (plugin_id, entrypoint) = _plugin_pane(rt, p["pane_id"])
    focus_and_report(rt, ref)
    return {
        "type": "plugin_pane_focused",
        "plugin_pane": {
            "plugin_id": plugin_id,
            "entrypoint": entrypoint,
            "pane": rt.pane_view(ref),
        },
    }


@method("plugin.pane.close", Obj(fields={"pane_id": REQ_STR}), result="plugin_pane_closed")
async def pane_close(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Close a plugin pane like ``pane.close`` does; answers with the id as given."""
    ref, _record = _plugin_pane(rt, p["pane_id"])
    host(rt).panes.pop(ref.pane.key, None)
    await rt.remove_pane(ref)
    return {"type": "plugin_pane_closed", "pane_id": p["pane_id"]}
