"""`herdr plugin ...`: link, list, enable, disable and unlink plugins; actions, logs, panes.

Argument handling, messages and exit codes follow Herdr's own hand-written parser
(``src/cli/plugin.rs``), not the clap-style one of the other groups: ``unknown option: X``,
``missing value for --flag`` and each subcommand's ``usage:`` line, exit 2. Responses print
as the other JSON commands do. As in Herdr, ``link`` and ``list`` work without a server: they
read and write the registry (``plugins.json`` in the simulator's config directory) directly,
and ``config-dir`` never needs one. ``install`` fetches a plugin from GitHub and runs its
build steps, which the simulator does not do.
"""

from __future__ import annotations

import json
from typing import Any

from ..client import Context
from ..errors import FatalError, ServerNotRunningError
from ..output import print_response, write_err, write_out
from ._common import env_assignment, print_lines
from .unsupported import unsupported

__all__ = ["run"]

_ID = "cli:plugin"
_HELP = (
    "herdr plugin commands:",
    "  herdr plugin install <owner>/<repo>[/subdir...] [--ref REF] [--yes]",
    "  herdr plugin uninstall <plugin_id|owner/repo[/subdir...]>",
    "  herdr plugin link <path> [--disabled]",
    "  herdr plugin list [--plugin ID] [--json]",
    "  herdr plugin config-dir <plugin_id>",
    "  herdr plugin unlink <plugin_id>",
    "  herdr plugin enable <plugin_id>",
    "  herdr plugin disable <plugin_id>",
    "  herdr plugin action <list|invoke>",
    "  herdr plugin log list [--plugin ID] [--limit N]",
    "  herdr plugin pane <open|focus|close>",
)
_ACTION_HELP = (
    "herdr plugin action commands:",
    "  herdr plugin action list [--plugin ID]",
    "  herdr plugin action invoke <action_id> [--plugin ID]",
)
_PANE_HELP = (
    "herdr plugin pane commands:",
    (
        "  herdr plugin pane open --plugin ID --entrypoint ID "
        "[--placement overlay|popup|split|tab|zoomed] [--width SIZE] [--height SIZE] "
        "[--workspace ID] [--target-pane PANE] [--direction right|down] [--cwd PATH] "
        "[--env KEY=VALUE] [--focus|--no-focus]"
    ),
    "  herdr plugin pane focus <pane_id>",
    "  herdr plugin pane close <pane_id>",
)
_HELP_WORDS = ("help", "--help", "-h")


class _Exit(Exception):
    """Stop parsing with this exit code (the message is already printed)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _usage(message: str) -> _Exit:
    write_err(message)
    return _Exit(2)


def _options(
    args: list[str], values: tuple[str, ...], switches: dict[str, tuple[str, Any]] | None = None
) -> dict[str, Any]:
    """Herdr's loop: ``--flag VALUE`` for ``values``, bare ``switches``; else
    ``unknown option``. A repeated value flag keeps the last; ``--env`` collects pairs."""
    found: dict[str, Any] = {}
    switches = switches or {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in switches:
            key, value = switches[arg]
            found[key] = value
            index += 1
        elif arg in values:
            if index + 1 >= len(args):
                raise _usage(f"missing value for {arg}")
            if arg == "--env":
                try:
                    key, value = env_assignment(args[index + 1])
                except Exception as exc:  # UsageError: Herdr prints it and exits 2
                    raise _usage(str(exc)) from None
                found.setdefault("--env", {})[key] = value
            else:
                found[arg] = args[index + 1]
            index += 2
        else:
            raise _usage(f"unknown option: {arg}")
    return found


def _one_id(args: list[str], usage: str) -> str:
    if len(args) != 1:
        raise _usage(usage)
    return args[0]


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr plugin <subcommand>``."""
    try:
        return _run(ctx, args)
    except _Exit as exit_:
        return exit_.code


def _run(ctx: Context, args: list[str]) -> int:
    sub, rest = (args[0], args[1:]) if args else (None, [])
    if sub == "link":
        return _link(ctx, rest)
    if sub == "list":
        return _list(ctx, rest)
    if sub == "config-dir":
        return _config_dir(ctx, rest)
    if sub == "unlink":
        plugin_id = _one_id(rest, "usage: herdr plugin unlink <plugin_id>")
        return _print(ctx, "plugin.unlink", {"plugin_id": plugin_id})
    if sub in ("enable", "disable"):
        plugin_id = _one_id(rest, f"usage: herdr plugin {sub} <plugin_id>")
        return _print(ctx, f"plugin.{sub}", {"plugin_id": plugin_id})
    if sub == "uninstall":
        return _uninstall(ctx, rest)
    if sub == "install":
        return unsupported("plugin install", "it clones a GitHub repository and runs its build")
    if sub == "action":
        return _action(ctx, rest)
    if sub in ("log", "logs"):
        return _logs(ctx, rest)
    if sub == "pane":
        return _pane(ctx, rest)
    print_lines(*_HELP)
    return 0 if sub in _HELP_WORDS else 2


def _print(ctx: Context, method: str, params: dict[str, Any]) -> int:
    return print_response(ctx.send(_ID, method, params))


# -- registry commands (link and list fall back to the registry file, as Herdr's do) --------


def _registry(ctx: Context) -> Any:
    from herdr_sim._version import HERDR_VERSION
    from herdr_sim.herdr_plugins.registry import Registry
    from orchestrator.client.socket_paths import config_dir

    return Registry(config_dir(ctx.env), HERDR_VERSION)


def _fatal(message: str) -> FatalError:
    """An ``io::Error::other(message)`` escaping Herdr's ``main``."""
    return FatalError(f"Custom {{ kind: Other, error: {json.dumps(message)} }}", message)


def _link(ctx: Context, args: list[str]) -> int:
    import os

    if not args:
        raise _usage("usage: herdr plugin link <path> [--disabled]")
    if ctx.is_remote:
        # The path is the remote machine's: never expanded here, and it must be absolute.
        from ..machine_target import remote_path_is_absolute

        if not remote_path_is_absolute(args[0]):
            raise _fatal("remote plugin link paths must be absolute")
        path = args[0]
    else:
        path = os.path.abspath(os.path.expanduser(args[0]))  # noqa: PTH100, PTH111
    opts = _options(
        args[1:], (), {"--disabled": ("enabled", False), "--enabled": ("enabled", True)}
    )
    params = {"path": path, "enabled": opts.get("enabled", True)}
    try:
        response = ctx.send(_ID, "plugin.link", params)
    except ServerNotRunningError:
        response = _offline_link(ctx, path, bool(params["enabled"]))
    return print_response(response)


def _offline_link(ctx: Context, path: str, enabled: bool) -> dict[str, Any]:
    from herdr_sim._version import HERDR_VERSION
    from herdr_sim.herdr_plugins.registry import PluginError, ensure_plugin_user_dirs, load_manifest

    registry = _registry(ctx)
    try:
        plugin = load_manifest(path, enabled, HERDR_VERSION)
        ensure_plugin_user_dirs(registry.config_dir, plugin["plugin_id"])
        registry.update(lambda plugins: plugins.__setitem__(plugin["plugin_id"], plugin))
    except PluginError as exc:
        raise _fatal(exc.message) from None
    except (OSError, ValueError) as exc:
        raise _fatal(str(exc)) from None
    return {"id": _ID, "result": {"type": "plugin_linked", "plugin": plugin}}


def _list(ctx: Context, args: list[str]) -> int:
    opts = _options(args, ("--plugin",), {"--json": ("json", True)})
    wanted = opts.get("--plugin")
    params = {} if wanted is None else {"plugin_id": wanted}
    try:
        response = ctx.send(_ID, "plugin.list", params)
    except ServerNotRunningError:
        try:
            plugins = _registry(ctx).load()
        except Exception:  # Herdr's offline `load()` logs and lists nothing
            plugins = []
        shown = [p for p in plugins if wanted is None or p["plugin_id"] == wanted]
        shown.sort(key=lambda plugin: str(plugin["plugin_id"]))
        response = {"id": _ID, "result": {"type": "plugin_list", "plugins": shown}}
    if opts.get("json") or "error" in response:
        return print_response(response)
    return _print_list_human(ctx, response["result"]["plugins"])


def _source_display(plugin: dict[str, Any]) -> str:
    source = plugin.get("source") or {}
    if source.get("kind") == "github":
        subdir = f"/{source['subdir']}" if source.get("subdir") else ""
        reference = source.get("requested_ref") or source.get("resolved_commit") or "unknown"
        owner, repo = source.get("owner") or "unknown", source.get("repo") or "unknown"
        return f"github:{owner}/{repo}{subdir}@{reference}"
    return f"local:{plugin['plugin_root']}"


def _print_list_human(ctx: Context, plugins: list[dict[str, Any]]) -> int:
    from herdr_sim.herdr_plugins.registry import plugin_config_dir
    from orchestrator.client.socket_paths import config_dir

    if not plugins:
        write_out("No plugins installed.\n")
        return 0
    lines = [f"{len(plugins)} plugin{'' if len(plugins) == 1 else 's'} installed:"]
    for plugin in plugins:
        warnings = plugin.get("warnings") or []
        state = "enabled" if plugin["enabled"] else "disabled"
        note = f"; {len(warnings)} warning(s)" if warnings else ""
        lines.append(
            f"- {plugin['plugin_id']} ({plugin['name']}) {state} [{_source_display(plugin)}{note}]"
        )
        lines.append(f"  config: {plugin_config_dir(config_dir(ctx.env), plugin['plugin_id'])}")
        lines.extend(f"  warning: {warning}" for warning in warnings)
    write_out("\n".join(lines) + "\n")
    return 0


def _config_dir(ctx: Context, args: list[str]) -> int:
    from herdr_sim.herdr_plugins.registry import ensure_plugin_user_dirs, plugin_config_dir
    from orchestrator.client.socket_paths import config_dir

    plugin_id = _one_id(args, "usage: herdr plugin config-dir <plugin_id>")
    base = config_dir(ctx.env)
    try:
        ensure_plugin_user_dirs(base, plugin_id)
    except OSError as exc:
        raise FatalError(repr(exc), str(exc)) from None
    write_out(f"{plugin_config_dir(base, plugin_id)}\n")
    return 0


def _uninstall(ctx: Context, args: list[str]) -> int:
    """Unlink a plugin by id (a GitHub-installed plugin's checkout is never made here)."""
    target = _one_id(args, "usage: herdr plugin uninstall <plugin_id|owner/repo[/subdir...]>")
    if "/" in target:
        write_err(f"plugin not installed: {target}")
        return 1
    try:
        response = ctx.send(_ID, "plugin.unlink", {"plugin_id": target})
    except ServerNotRunningError:

        def drop(plugins: dict[str, Any]) -> bool:
            return plugins.pop(target, None) is not None

        removed = bool(_registry(ctx).update(drop)[0])
    else:
        if "error" in response:
            return print_response(response)
        removed = bool(response["result"]["removed"])
    if not removed:
        write_err(f"plugin not installed: {target}")
        return 1
    write_out(f"Uninstalled {target}.\n")
    return 0


# -- actions, logs, panes ----------------------------------------------------------------------


def _action(ctx: Context, args: list[str]) -> int:
    sub, rest = (args[0], args[1:]) if args else (None, [])
    if sub == "list":
        opts = _options(rest, ("--plugin",))
        filters = {} if "--plugin" not in opts else {"plugin_id": opts["--plugin"]}
        return _print(ctx, "plugin.action.list", filters)
    if sub == "invoke":
        if not rest:
            raise _usage("usage: herdr plugin action invoke <action_id> [--plugin ID]")
        opts = _options(rest[1:], ("--plugin",))
        params: dict[str, Any] = {"action_id": rest[0]}
        if "--plugin" in opts:
            params["plugin_id"] = opts["--plugin"]
        params["context"] = {"invocation_source": "cli"}
        return _print(ctx, "plugin.action.invoke", params)
    print_lines(*_ACTION_HELP)
    return 0 if sub in _HELP_WORDS else 2


def _logs(ctx: Context, args: list[str]) -> int:
    rest = args[1:] if args[:1] == ["list"] else args
    opts = _options(rest, ("--plugin", "--limit"))
    params: dict[str, Any] = {}
    if "--plugin" in opts:
        params["plugin_id"] = opts["--plugin"]
    if "--limit" in opts:
        raw = opts["--limit"]
        if not (raw.isascii() and raw.lstrip("+").isdigit()):
            raise _usage(f"invalid --limit value: {raw}")
        params["limit"] = int(raw)
    return _print(ctx, "plugin.log.list", params)


_PLACEMENTS = {"overlay": "overlay", "popup": "popup", "split": "split", "tab": "tab"}
_PLACEMENTS |= {"zoomed": "zoomed", "fullscreen": "zoomed"}


def _popup_dimension(raw: str, flag: str) -> int | str:
    """Herdr's ``PopupSize::parse_cli``: cells, or a percentage from 1% to 100%."""
    if raw.endswith("%"):
        digits = raw[:-1]
        if not (digits.isascii() and digits.isdigit()) or int(digits) > 255:
            raise _usage(f"{flag} must be a number of cells or a percentage like 80%")
        if not 1 <= int(digits) <= 100:
            raise _usage(f"{flag} percentage must be between 1% and 100%")
        return f"{int(digits)}%"
    if not (raw.isascii() and raw.isdigit()) or int(raw) > 65535:
        raise _usage(f"{flag} must be a number of cells or a percentage like 80%")
    return int(raw)


_PANE_OPEN_VALUES = (
    "--plugin",
    "--entrypoint",
    "--placement",
    "--width",
    "--height",
    "--workspace",
    "--target-pane",
    "--direction",
    "--cwd",
    "--env",
)


def _pane(ctx: Context, args: list[str]) -> int:
    sub, rest = (args[0], args[1:]) if args else (None, [])
    if sub in ("focus", "close"):
        pane_id = _one_id(rest, f"usage: herdr plugin pane {sub} <pane_id>")
        return _print(ctx, f"plugin.pane.{sub}", {"pane_id": pane_id})
    if sub != "open":
        print_lines(*_PANE_HELP)
        return 0 if sub in _HELP_WORDS else 2
    values = _PANE_OPEN_VALUES
    opts = _options(rest, values, {"--focus": ("focus", True), "--no-focus": ("focus", False)})
    params: dict[str, Any] = {}
    for flag in ("--plugin", "--entrypoint"):
        if flag not in opts:
            raise _usage(f"missing required {flag}")
    params["plugin_id"], params["entrypoint"] = opts["--plugin"], opts["--entrypoint"]
    if "--placement" in opts:
        placement = _PLACEMENTS.get(opts["--placement"])
        if placement is None:
            raise _usage(f"invalid pane placement: {opts['--placement']}")
        params["placement"] = placement
    for flag, key in (("--width", "width"), ("--height", "height")):
        if flag in opts:
            params[key] = _popup_dimension(opts[flag], flag)
    if "--workspace" in opts:
        params["workspace_id"] = opts["--workspace"]
    if "--target-pane" in opts:
        params["target_pane_id"] = opts["--target-pane"]
    if "--direction" in opts:
        if opts["--direction"] not in ("right", "down"):
            raise _usage(f"invalid split direction: {opts['--direction']}")
        params["direction"] = opts["--direction"]
    if "--cwd" in opts:
        params["cwd"] = opts["--cwd"]
    params["focus"] = opts.get("focus", True)
    if opts.get("--env"):
        params["env"] = opts["--env"]
    return _print(ctx, "plugin.pane.open", params)
