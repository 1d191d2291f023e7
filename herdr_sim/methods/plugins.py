"""``plugin.*`` handlers for the registry, actions and logs (panes: ``plugin_panes``).

Headless Herdr answers all of these without a client (``src/app/api/plugins/mod.rs``): the
registry is ``plugins.json`` in the config directory (here the simulator's own,
``herdr_cli.paths.config_dir`` of its environment, never the user's ``~/.config/herdr``); an
action runs its argv in the plugin directory and keeps its output in an in-memory log of the
last 200 commands (``runtime.rs``), answered at once with the ``running`` entry.

Manifest and registry rules live in :mod:`herdr_sim.herdr_plugins.registry`, running a command in
:mod:`herdr_sim.herdr_plugins.commands`; this module wires them to the session and the wire, and
holds what the pane handlers share (:class:`PluginHost`, the invocation context).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herdr_sim.herdr_plugins.commands import CommandResult, run_command
from herdr_sim.herdr_plugins.registry import (
    PluginError,
    Registry,
    effective_platforms,
    ensure_platform_supported,
    ensure_plugin_user_dirs,
    load_manifest,
    managed_checkout_path,
    manifest_available,
    normalize_action_id,
    normalize_plugin_id,
    plugin_config_dir,
    plugin_state_dir,
    simulator_state_dir,
)
from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Bool, Enum, F, Kind, Nullable, Obj
from herdr_sim.wire.request_context import current_request_id
from orchestrator.client import socket_paths as paths

from ..model.session import PaneRef
from .specs import AGENT_STATUS, OPT_STR, OPT_U64, REQ_STR

__all__ = [
    "HOST_PLATFORM",
    "PluginHost",
    "herdr_env",
    "host",
    "load_registry",
    "pane_context",
    "plugin_context",
    "plugin_failure",
    "plugin_id_param",
    "start_command",
]

#: commands that may run at once (``MAX_PLUGIN_COMMANDS_IN_FLIGHT``)
MAX_IN_FLIGHT = 32
#: command logs kept (``PLUGIN_COMMAND_LOG_LIMIT``)
LOG_LIMIT = 200
#: the platform name manifests use for this host
HOST_PLATFORM = "macos" if sys.platform == "darwin" else "windows" if os.name == "nt" else "linux"
_INVALID_PLUGIN_ID = (
    "plugin id must be non-empty, <= 120 characters, and contain only ASCII letters, digits, "
    "colon, dot, underscore, or hyphen"
)


@dataclass
class PluginHost:
    """The plugin side of one simulator: its registry, command logs and plugin panes."""

    registry: Registry
    logs: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=LOG_LIMIT))
    next_log_id: int = 1
    in_flight: int = 0
    #: pane key → (plugin id, entrypoint); keys are never reused, so a closed pane's record
    #: is skipped until the next plugin pane opens and drops it (Herdr drops it when the
    #: pane dies)
    panes: dict[int, tuple[str, str]] = field(default_factory=dict)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def config_dir(self) -> Path:
        """The directory holding ``plugins.json`` and the plugins' config directories."""
        return self.registry.config_dir

    @property
    def state_dir(self) -> Path:
        """The stand-in for Herdr's state directory (plugins' ``HERDR_PLUGIN_STATE_DIR``)."""
        return simulator_state_dir(self.config_dir)

    def path_env(self, plugin: dict[str, Any]) -> dict[str, str]:
        """``HERDR_PLUGIN_ROOT``/``_CONFIG_DIR``/``_STATE_DIR`` (``env.rs``)."""
        plugin_id = str(plugin["plugin_id"])
        return {
            "HERDR_PLUGIN_ROOT": str(plugin["plugin_root"]),
            "HERDR_PLUGIN_CONFIG_DIR": str(plugin_config_dir(self.config_dir, plugin_id)),
            "HERDR_PLUGIN_STATE_DIR": str(plugin_state_dir(self.state_dir, plugin_id)),
        }

    def user_dirs(self, plugin: dict[str, Any]) -> None:
        """Create the plugin's config and state dirs (``plugin_user_dir_create_failed``)."""
        try:
            ensure_plugin_user_dirs(self.config_dir, str(plugin["plugin_id"]))
        except OSError as exc:
            raise HerdrError("plugin_user_dir_create_failed", str(exc)) from None


_HOSTS: weakref.WeakKeyDictionary[Runtime, PluginHost] = weakref.WeakKeyDictionary()


def host(rt: Runtime) -> PluginHost:
    """The plugin host of a simulator, created on first use in its config directory
    (``$HERDR_SIM_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/herdr-sim``, of its environment)."""
    found = _HOSTS.get(rt)
    if found is None:
        config_dir = paths.config_dir(rt.config.base_env)
        found = PluginHost(Registry(config_dir, rt.config.version))
        _HOSTS[rt] = found
    return found


def plugin_failure(exc: PluginError) -> HerdrError:
    """A manifest or platform failure as the wire error Herdr answers with."""
    return HerdrError(exc.code, exc.message)


def load_registry(h: PluginHost) -> dict[str, dict[str, Any]]:
    """The registry by id, manifests reloaded (``plugin_registry_load_failed``)."""
    try:
        return {str(p["plugin_id"]): p for p in h.registry.load()}
    except (OSError, ValueError, PluginError) as exc:
        message = exc.message if isinstance(exc, PluginError) else str(exc)
        raise HerdrError("plugin_registry_load_failed", message) from None


def _update(h: PluginHost, mutation: Callable[[dict[str, dict[str, Any]]], Any]) -> Any:
    """Change the registry under its lock (``plugin_registry_save_failed``)."""
    try:
        result, _entries = h.registry.update(mutation)
    except (OSError, ValueError, PluginError) as exc:
        message = exc.message if isinstance(exc, PluginError) else str(exc)
        raise HerdrError("plugin_registry_save_failed", message) from None
    return result


def plugin_id_param(raw: str) -> str:
    """A ``plugin_id`` parameter normalised, else Herdr's ``invalid_plugin_id`` answer."""
    found = normalize_plugin_id(raw)
    if found is None:
        raise HerdrError("invalid_plugin_id", _INVALID_PLUGIN_ID)
    return found


def _optional_plugin_id(raw: str | None) -> str | None:
    return None if raw is None else plugin_id_param(raw)


class _Any(Kind):
    """Any JSON value, passed through (a worktree snapshot inside a context)."""

    expected = "any value"

    def check(self, value: Any, where: str) -> Any:
        return value

    def schema(self) -> dict[str, Any]:
        return {}


_CONTEXT_STR_FIELDS = (
    "workspace_id",
    "workspace_label",
    "workspace_cwd",
    "tab_id",
    "tab_label",
    "focused_pane_id",
    "focused_pane_cwd",
    "focused_pane_agent",
    "selected_text",
    "invocation_source",
    "correlation_id",
    "clicked_url",
    "link_handler_id",
)
#: ``PluginInvocationContext`` in Herdr's field order
_CONTEXT_ORDER = (
    "workspace_id",
    "workspace_label",
    "workspace_cwd",
    "worktree",
    "tab_id",
    "tab_label",
    "focused_pane_id",
    "focused_pane_cwd",
    "focused_pane_agent",
    "focused_pane_status",
    "selected_text",
    "invocation_source",
    "correlation_id",
    "clicked_url",
    "link_handler_id",
)
CONTEXT = Obj(
    fields={
        **dict.fromkeys(_CONTEXT_STR_FIELDS, OPT_STR),
        "worktree": F(_Any()),
        "focused_pane_status": F(Nullable(AGENT_STATUS)),
    }
)
SOURCE = Obj(
    fields={
        "kind": F(Enum(values=("local", "github")), default="local"),
        **dict.fromkeys(("owner", "repo", "subdir", "requested_ref", "resolved_commit"), OPT_STR),
        "managed_path": OPT_STR,
        "installed_unix_ms": OPT_U64,
    }
)
PLUGIN_TARGET = Obj(fields={"plugin_id": REQ_STR})
PLUGIN_FILTER = Obj(fields={"plugin_id": OPT_STR})


# -- registry ---------------------------------------------------------------------------------


@method(
    "plugin.link",
    Obj(
        fields={
            "path": REQ_STR,
            "enabled": F(Bool(), default=True),
            "source": F(Nullable(SOURCE)),
        }
    ),
    result="plugin_linked",
)
async def link(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Read a plugin's manifest and add (or replace) it in the registry."""
    h = host(rt)
    try:
        plugin = load_manifest(p["path"], p["enabled"], rt.config.version)
    except PluginError as exc:
        raise plugin_failure(exc) from None
    if p["source"] is not None:
        plugin["source"] = _checked_source(h, plugin, p["source"])
    h.user_dirs(plugin)

    def insert(plugins: dict[str, dict[str, Any]]) -> None:
        plugins[plugin["plugin_id"]] = plugin

    _update(h, insert)
    return {"type": "plugin_linked", "plugin": plugin}


def _checked_source(h: PluginHost, plugin: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    """Herdr's ``normalize_plugin_source``: a GitHub source must be the plugin's managed
    checkout (``<config>/plugins/github/<slug>-<hash>``) and contain its manifest."""
    source = {key: value for key, value in raw.items() if value is not None}
    if source["kind"] == "local":
        return source
    if "managed_path" not in source:
        raise HerdrError("invalid_plugin_source", "GitHub plugin source requires managed_path")
    try:
        managed = Path(source["managed_path"]).resolve(strict=True)
        root = Path(plugin["plugin_root"]).resolve(strict=True)
        expected = managed_checkout_path(h.config_dir, plugin["plugin_id"]).resolve(strict=True)
    except OSError as exc:
        raise HerdrError("invalid_plugin_source", str(exc)) from None
    if managed != expected:
        raise HerdrError(
            "invalid_plugin_source", "GitHub plugin managed_path does not match the plugin id"
        )
    if not root.is_relative_to(managed):
        raise HerdrError(
            "invalid_plugin_source", "plugin manifest is not inside the managed checkout"
        )
    return source


@method("plugin.list", PLUGIN_FILTER, result="plugin_list", mutates=False)
async def list_(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Linked plugins sorted by id, manifests re-read (unreadable ones carry a warning)."""
    wanted = _optional_plugin_id(p["plugin_id"])
    plugins = load_registry(host(rt))
    shown = [plugins[key] for key in sorted(plugins) if wanted is None or key == wanted]
    return {"type": "plugin_list", "plugins": shown}


@method("plugin.unlink", PLUGIN_TARGET, result="plugin_unlinked")
async def unlink(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Remove a plugin from the registry; its panes keep running as plain panes."""
    h = host(rt)
    plugin_id = plugin_id_param(p["plugin_id"])
    removed = bool(_update(h, lambda plugins: plugins.pop(plugin_id, None) is not None))
    if removed:
        h.panes = {key: rec for key, rec in h.panes.items() if rec[0] != plugin_id}
    return {"type": "plugin_unlinked", "plugin_id": plugin_id, "removed": removed}


async def _set_enabled(rt: Runtime, raw_id: str, enabled: bool) -> dict[str, Any]:
    h = host(rt)
    plugin_id = plugin_id_param(raw_id)

    def toggle(plugins: dict[str, dict[str, Any]]) -> bool:
        if plugin_id not in plugins:
            return False
        plugins[plugin_id]["enabled"] = enabled
        return True

    if not _update(h, toggle):
        raise HerdrError("plugin_not_found", "plugin not found")
    plugin = load_registry(h).get(plugin_id)
    if plugin is None:
        raise HerdrError("plugin_not_found", "plugin not found")
    kind = "plugin_enabled" if enabled else "plugin_disabled"
    return {"type": kind, "plugin": plugin}


@method("plugin.enable", PLUGIN_TARGET, result="plugin_enabled")
async def enable(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Enable a linked plugin (its actions, hooks and panes may run)."""
    return await _set_enabled(rt, p["plugin_id"], True)


@method("plugin.disable", PLUGIN_TARGET, result="plugin_disabled")
async def disable(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Disable a linked plugin (it stays in the registry)."""
    return await _set_enabled(rt, p["plugin_id"], False)


# -- actions ----------------------------------------------------------------------------------


def _action_info(plugin: dict[str, Any], action: dict[str, Any]) -> dict[str, Any]:
    """``PluginActionInfo``: the action with its plugin id and effective platforms."""
    info: dict[str, Any] = {
        "plugin_id": plugin["plugin_id"],
        "action_id": action["id"],
        "title": action["title"],
    }
    for key in ("description", "contexts"):
        if key in action:
            info[key] = action[key]
    info["command"] = action["command"]
    platforms = effective_platforms(action, plugin)
    if platforms is not None:
        info["platforms"] = platforms
    return info


def _all_actions(plugins: dict[str, dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [
        (plugin, action)
        for plugin in plugins.values()
        if manifest_available(plugin)
        for action in plugin.get("actions", ())
    ]


@method("plugin.action.list", PLUGIN_FILTER, result="plugin_action_list", mutates=False)
async def action_list(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Every action of the linked plugins (enabled or not), sorted by ``plugin.action``."""
    wanted = _optional_plugin_id(p["plugin_id"])
    infos = [
        _action_info(plugin, action)
        for plugin, action in _all_actions(load_registry(host(rt)))
        if wanted is None or plugin["plugin_id"] == wanted
    ]
    infos.sort(key=lambda info: f"{info['plugin_id']}.{info['action_id']}")
    return {"type": "plugin_action_list", "actions": infos}


def _find_action(
    plugins: dict[str, dict[str, Any]], plugin_id: str | None, action_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Herdr's ``find_plugin_action``: by plugin and id, else by a unique (qualified) id."""
    if plugin_id is not None:
        wanted_plugin = normalize_plugin_id(plugin_id)
        if wanted_plugin is None:
            raise HerdrError("invalid_plugin_id", "invalid plugin id")
        wanted_action = normalize_action_id(action_id)
        if wanted_action is None:
            raise HerdrError("invalid_plugin_action_id", "invalid action id")
        plugin = plugins.get(wanted_plugin)
        if plugin is None:
            raise HerdrError("plugin_not_found", "plugin not found")
        if not manifest_available(plugin):
            raise HerdrError(
                "plugin_manifest_unavailable", f"plugin {wanted_plugin} manifest is unavailable"
            )
        for action in plugin.get("actions", ()):
            if action["id"] == wanted_action:
                return plugin, action
        raise HerdrError("plugin_action_not_found", "plugin action not found")
    action_id = action_id.strip()
    matches = [
        (plugin, action)
        for plugin, action in _all_actions(plugins)
        if action_id in (action["id"], f"{plugin['plugin_id']}.{action['id']}")
    ]
    if not matches:
        raise HerdrError("plugin_action_not_found", "plugin action not found")
    if len(matches) > 1:
        raise HerdrError(
            "ambiguous_plugin_action",
            "plugin action id matches more than one action; include plugin_id",
        )
    return matches[0]


def plugin_context(rt: Runtime, correlation_id: str) -> dict[str, Any]:
    """Herdr's ``current_plugin_context``: the active workspace, its tab and focused pane."""
    ws = rt.session.active_workspace
    if ws is None or not ws.tabs:
        return {"invocation_source": "api", "correlation_id": correlation_id}
    tab = ws.tabs[ws.active_tab]
    return pane_context(rt, PaneRef(ws, tab, rt.session.panes[tab.layout.focused]), correlation_id)


def pane_context(rt: Runtime, ref: PaneRef, correlation_id: str) -> dict[str, Any]:
    """Herdr's ``plugin_context_for_pane``: a pane with its tab and workspace."""
    ws_view = rt.workspace_view(ref.workspace)
    tab_view = rt.tab_view(ref.workspace, ref.tab)
    pane = rt.pane_view(ref)
    context = {
        "workspace_id": ws_view["workspace_id"],
        "workspace_label": ws_view["label"],
        "workspace_cwd": pane.get("cwd") or rt.focused_cwd(ref.workspace),
        "tab_id": tab_view["tab_id"],
        "tab_label": tab_view["label"],
        "focused_pane_id": pane["pane_id"],
        "focused_pane_cwd": pane.get("cwd"),
        "focused_pane_agent": pane.get("agent"),
        "focused_pane_status": pane["agent_status"],
        "invocation_source": "api",
        "correlation_id": correlation_id,
    }
    return {key: value for key, value in context.items() if value is not None}


def _merge_context(current: dict[str, Any], given: dict[str, Any] | None) -> dict[str, Any]:
    """Each field the caller gave wins over the current one (``merge_plugin_context``)."""
    merged = current | {key: value for key, value in (given or {}).items() if value is not None}
    return {key: merged[key] for key in _CONTEXT_ORDER if merged.get(key) is not None}


def herdr_env(rt: Runtime) -> dict[str, str]:
    return {
        "HERDR_SOCKET_PATH": str(rt.socket_path),
        "HERDR_ENV": "1",
    }


def _command_env(
    rt: Runtime,
    h: PluginHost,
    plugin: dict[str, Any],
    context: dict[str, Any],
    extra: dict[str, str],
) -> dict[str, str]:
    """The server's env plus Herdr's plugin variables (``start_plugin_command``).

    The simulator's ``herdr`` comes first on PATH, so a plugin that runs ``herdr`` talks to
    this simulator and never to a real Herdr.
    """
    env = dict(rt.config.base_env)
    env["PATH"] = os.pathsep.join(filter(None, (str(rt.cli_dir), env.get("PATH"))))
    env |= h.path_env(plugin) | herdr_env(rt)
    env["HERDR_PLUGIN_ID"] = str(plugin["plugin_id"])
    env["HERDR_PLUGIN_CONTEXT_JSON"] = json.dumps(context, separators=(",", ":"))
    env["HERDR_BIN_PATH"] = str(rt.cli_dir / "herdr")
    env |= extra
    for key, var in (
        ("workspace_id", "HERDR_WORKSPACE_ID"),
        ("tab_id", "HERDR_TAB_ID"),
        ("focused_pane_id", "HERDR_PANE_ID"),
        ("clicked_url", "HERDR_PLUGIN_CLICKED_URL"),
        ("link_handler_id", "HERDR_PLUGIN_LINK_HANDLER_ID"),
    ):
        if context.get(key) is not None:
            env[var] = str(context[key])
    return env


async def _finish(h: PluginHost, log: dict[str, Any], run: Awaitable[CommandResult]) -> None:
    """Wait for a command and complete its log entry (Herdr's ``PluginCommandFinished``)."""
    try:
        result = await run
    finally:
        h.in_flight -= 1
    log |= {
        "status": "succeeded" if result.succeeded else "failed",
        "finished_unix_ms": int(time.time() * 1000),
    }
    if result.exit_code is not None:
        log["exit_code"] = result.exit_code
    log |= {"stdout": result.stdout, "stderr": result.stderr}
    if result.error is not None:
        log["error"] = result.error


def start_command(
    rt: Runtime,
    plugin: dict[str, Any],
    command: list[str],
    context: dict[str, Any],
    *,
    action_id: str | None = None,
    event: str | None = None,
    event_json: str | None = None,
) -> dict[str, Any]:
    """Log and start an action's or a hook's command (Herdr's ``start_plugin_command``);
    the returned log entry is ``running``. Past 32 running commands the entry is logged
    ``failed`` and ``plugin_command_limit_reached`` raised."""
    h = host(rt)
    h.user_dirs(plugin)
    log: dict[str, Any] = {
        "log_id": f"plugin-log-{h.next_log_id}",
        "plugin_id": plugin["plugin_id"],
    }
    h.next_log_id += 1
    if action_id is not None:
        log["action_id"] = action_id
    if event is not None:
        log["event"] = event
    log |= {
        "command": list(command),
        "status": "running",
        "started_unix_ms": int(time.time() * 1000),
    }
    if h.in_flight >= MAX_IN_FLIGHT:
        message = f"maximum concurrent plugin commands reached ({MAX_IN_FLIGHT})"
        log |= {
            "status": "failed",
            "finished_unix_ms": log["started_unix_ms"],
            "stdout": "",
            "stderr": "",
            "error": message,
        }
        h.logs.append(log)
        raise HerdrError("plugin_command_limit_reached", message)
    h.logs.append(log)
    extra = {
        "HERDR_PLUGIN_ACTION_ID": action_id,
        "HERDR_PLUGIN_EVENT": event,
        "HERDR_PLUGIN_EVENT_JSON": event_json,
    }
    root = Path(plugin["plugin_root"])
    env = _command_env(rt, h, plugin, context, {k: v for k, v in extra.items() if v is not None})
    h.in_flight += 1
    snapshot = dict(log)
    task = asyncio.get_running_loop().create_task(_finish(h, log, run_command(command, root, env)))
    h.tasks.add(task)
    task.add_done_callback(h.tasks.discard)
    return snapshot


@method(
    "plugin.action.invoke",
    Obj(
        fields={
            "action_id": REQ_STR,
            "plugin_id": OPT_STR,
            "context": F(Nullable(CONTEXT)),
        }
    ),
    result="plugin_action_invoked",
)
async def action_invoke(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Start an enabled plugin's action; answers at once with its ``running`` log entry."""
    h = host(rt)
    plugins = load_registry(h)
    plugin, action = _find_action(plugins, p["plugin_id"], p["action_id"])
    if not plugin["enabled"]:
        raise HerdrError("plugin_disabled", f"plugin {plugin['plugin_id']} is disabled")
    info = _action_info(plugin, action)
    qualified = f"{info['plugin_id']}.{info['action_id']}"
    try:
        ensure_platform_supported(
            effective_platforms(action, plugin), f"action '{qualified}'", HOST_PLATFORM
        )
    except PluginError as exc:
        raise plugin_failure(exc) from None
    context = _merge_context(plugin_context(rt, current_request_id.get()), p["context"])
    log = start_command(rt, plugin, action["command"], context, action_id=action["id"])
    return {"type": "plugin_action_invoked", "action": info, "context": context, "log": log}


@method(
    "plugin.log.list",
    Obj(fields={"plugin_id": OPT_STR, "limit": OPT_U64}),
    result="plugin_log_list",
    mutates=False,
)
async def log_list(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """The newest command logs (default 50, 1-200), oldest first."""
    wanted = _optional_plugin_id(p["plugin_id"])
    limit = min(max(p["limit"] if p["limit"] is not None else 50, 1), LOG_LIMIT)
    logs = [dict(log) for log in host(rt).logs if wanted is None or log["plugin_id"] == wanted]
    return {"type": "plugin_log_list", "logs": logs[-limit:]}
