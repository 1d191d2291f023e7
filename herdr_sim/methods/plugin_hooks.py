"""Plugin hooks: ``[[startup]]`` commands when the server starts, ``[[events]]`` commands
when a hookable lifecycle event is emitted (``src/app/api/plugins/runtime.rs``).

Herdr checks every emitted event against ``PLUGIN_HOOK_EVENT_KINDS`` (workspace, worktree,
tab and pane lifecycle, agent detection and status; not output or layout changes), re-reads
the registry, and starts each enabled plugin's matching hook with ``HERDR_PLUGIN_EVENT`` and
``HERDR_PLUGIN_EVENT_JSON`` in its environment; each run is a command log entry with
``event`` set. Startup hooks run once per server start with ``event: "startup"``. The
registry is read only for those events, and a missing registry file costs one ``lstat``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from herdr_sim.herdr_plugins.registry import (
    HOOK_EVENT_NAMES,
    PluginError,
    effective_platforms,
    manifest_available,
)
from herdr_sim.services.events import Envelope
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.errors import HerdrError

from ..model.session import PaneRef
from .plugins import HOST_PLATFORM, host, pane_context, plugin_context, start_command

__all__ = ["attach"]

log = logging.getLogger(__name__)

#: wire kind (``pane_created``) → hook name (``pane.created``)
_HOOK_NAMES = {name.replace(".", "_", 1): name for name in HOOK_EVENT_NAMES}


def attach(rt: Runtime) -> None:
    """Run the startup hooks and start listening for hookable events."""
    context = plugin_context(rt, "plugin.startup") | {"invocation_source": "startup"}
    for plugin in _enabled(rt):
        for step in plugin.get("startup", ()):
            if _supported(step, plugin):
                _start(rt, plugin, step["command"], context, "startup", None)
    rt.hub.add_listener(lambda envelope: _on_event(rt, envelope))


def _enabled(rt: Runtime) -> list[dict[str, Any]]:
    """Enabled plugins whose manifest is readable, by id; nothing when the registry fails."""
    try:
        plugins = host(rt).registry.load()
    except (OSError, ValueError, PluginError) as exc:
        log.warning("plugin registry unreadable, hooks skipped: %s", exc)
        return []
    plugins.sort(key=lambda plugin: str(plugin["plugin_id"]))
    return [plugin for plugin in plugins if plugin["enabled"] and manifest_available(plugin)]


def _supported(item: dict[str, Any], plugin: dict[str, Any]) -> bool:
    platforms = effective_platforms(item, plugin)
    return platforms is None or HOST_PLATFORM in platforms


def _start(
    rt: Runtime,
    plugin: dict[str, Any],
    command: list[str],
    context: dict[str, Any],
    event: str,
    event_json: str | None,
) -> None:
    try:
        start_command(rt, plugin, command, context, event=event, event_json=event_json)
    except HerdrError as exc:  # the limit: logged as a failed run, as in Herdr
        log.warning("plugin hook %s of %s not started: %s", event, plugin["plugin_id"], exc)


def _on_event(rt: Runtime, envelope: Envelope) -> None:
    name = _HOOK_NAMES.get(str(envelope.get("event")))
    if name is None or rt.stopping:
        return
    plugins = [
        plugin
        for plugin in _enabled(rt)
        if any(hook["on"] == name for hook in plugin.get("events", ()))
    ]
    if not plugins:
        return
    event_json = json.dumps(envelope, separators=(",", ":"))
    context = _event_context(rt, envelope["data"], name)
    for plugin in plugins:
        for hook in plugin["events"]:
            if hook["on"] == name and _supported(hook, plugin):
                _start(rt, plugin, hook["command"], context, name, event_json)


def _event_context(rt: Runtime, data: dict[str, Any], correlation_id: str) -> dict[str, Any]:
    """Herdr's ``plugin_context_for_event``, by the ids the event carries: its pane (with
    tab and workspace) when that still exists, else its workspace, else the ids alone."""
    pane_id = _id_of(data, "pane_id", "pane")
    ref = rt.session.find_pane(pane_id) if pane_id is not None else None
    if ref is not None:
        return pane_context(rt, ref, correlation_id)
    workspace_id = _id_of(data, "workspace_id", "workspace")
    ws = rt.session.find_workspace(workspace_id) if workspace_id is not None else None
    if ws is not None and ws.tabs:
        tab = ws.tabs[ws.active_tab]
        focused = PaneRef(ws, tab, rt.session.panes[tab.layout.focused])
        return pane_context(rt, focused, correlation_id)
    tab_id = data.get("tab_id") if isinstance(data.get("tab_id"), str) else None
    ids = {"workspace_id": workspace_id, "tab_id": tab_id, "focused_pane_id": pane_id}
    context = {key: value for key, value in ids.items() if value is not None}
    return context | {"invocation_source": "api", "correlation_id": correlation_id}


def _id_of(data: dict[str, Any], key: str, nested: str) -> str | None:
    """``data[key]``, else ``data[nested][key]`` (events carry ids flat or in an info)."""
    value = data.get(key)
    if value is None and isinstance(data.get(nested), dict):
        value = data[nested].get(key)
    return value if isinstance(value, str) else None
