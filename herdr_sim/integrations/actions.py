"""Install, uninstall and inspect the simulator's own agent integrations.

The files, places, config edits and messages are Herdr's (``src/integration/targets.rs``,
``actions.rs``, ``registry.rs``); the files' contents are the project's own integrations,
written from the integration guide and also installed by the real-agent fixtures
(``herdr_sim/real_agents/assets/``: the session hook of Claude Code and Codex, the pi
extension, the opencode server plugin), plus the opencode TUI plugin Herdr adds
(``assets/opencode-tui-session.js``). The simulator ships integrations for the agents it
fakes (pi, claude, codex, opencode); the other targets are listed with their real state
but not installed, which fails with a message saying so. Every path resolves against the
``env`` given: the simulator passes its panes' environment (HOME the fakes' sandbox),
never its own HOME.
"""

from __future__ import annotations

import copy
import json
import os
import pwd
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..fake_agent.personas import LAUNCHER_KINDS
from ..real_agents.home import SESSION_HOOK_ASSET, hook_command
from ..real_agents.opencode import PLUGIN_ASSET
from ..real_agents.pi import EXTENSION_ASSET
from .config_edits import (
    OPENCODE_TUI_SPEC,
    codex_config_with_hooks,
    ensure_command_hook,
    hooks_object,
    is_tui_spec,
    opencode_tui_config,
    read_json_object,
    remove_command_hooks,
    write_file,
)
from .targets import (
    HOOK_SCRIPT,
    claude_dir,
    codex_dir,
    opencode_dir,
    pi_extension_dir,
    target,
)

__all__ = [
    "PROVIDED",
    "IntegrationError",
    "guard_home",
    "install",
    "uninstall",
]

Env = Mapping[str, str]
ASSETS = Path(__file__).with_name("assets")

#: the targets the simulator has an integration of its own for (its fake agents' kinds)
PROVIDED = LAUNCHER_KINDS

#: what Claude's settings may hold from Herdr's integrations, old and current (event,
#: actions): install and uninstall remove all of them (``claude_settings.rs``)
_CLAUDE_HOOK_ACTIONS = (
    ("PostToolUse", ("working",)),
    ("PostToolUseFailure", ("working",)),
    ("SubagentStop", ("working",)),
    ("PermissionRequest", ("blocked",)),
    ("SessionStart", ("idle", "session")),
    ("UserPromptSubmit", ("working",)),
    ("PreToolUse", ("working",)),
    ("Stop", ("idle",)),
    ("SessionEnd", ("release",)),
)
_CODEX_HOOK_ACTIONS = (
    ("PermissionRequest", ("blocked",)),
    ("SessionStart", ("idle", "session")),
    ("UserPromptSubmit", ("working",)),
    ("PreToolUse", ("working",)),
    ("Stop", ("idle",)),
)
#: the hook timeout (seconds) of the SessionStart entries
_HOOK_TIMEOUT = 10


class IntegrationError(OSError):
    """An install or uninstall that failed; the message is Herdr's."""


def guard_home(env: Env, users_homes: tuple[str | None, ...] = ()) -> None:
    """Refuse an ``env`` whose HOME is the user's own home (the password database's, or
    one of ``users_homes``): the simulator writes integrations only into a HOME of its
    own, such as its fake agents' sandbox or a test's private HOME."""
    home = env.get("HOME")
    if not home:
        return  # the install fails on the missing HOME, as in Herdr
    try:
        own = [pwd.getpwuid(os.getuid()).pw_dir]
    except KeyError:
        own = []
    real = {os.path.realpath(path) for path in (*own, *users_homes) if path}
    if os.path.realpath(home) in real:
        raise IntegrationError(
            f"the Herdr simulator does not write agent integrations into your home ({home}); "
            "with its fake agents on, its panes have a sandbox HOME of their own"
        )


# -- install ----------------------------------------------------------------------------------


def _asset(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _session_hook(agent: str) -> str:
    return _asset(SESSION_HOOK_ASSET).replace("@AGENT@", agent)


def _install_pi(env: Env) -> list[str]:
    directory = pi_extension_dir(env)
    if not directory.is_dir():
        if not directory.parent.is_dir():
            raise IntegrationError(
                f"pi extension directory not found at {directory}. install pi first"
            )
        directory.mkdir()
    path = directory / "herdr-agent-state.ts"
    write_file(path, _asset(EXTENSION_ASSET))
    return [f"installed pi integration to {path}"]


def _commands(hook: Path, actions: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(hook_command(hook, action) for action in actions)


def _install_claude(env: Env) -> list[str]:
    directory = claude_dir(env)
    if not directory.is_dir():
        raise IntegrationError(
            f"claude directory not found at {directory}. install claude code first"
        )
    (directory / "hooks").mkdir(exist_ok=True)
    hook = directory / "hooks" / HOOK_SCRIPT
    settings_path = directory / "settings.json"
    settings = read_json_object(settings_path, "claude settings")
    original = copy.deepcopy(settings)
    write_file(hook, _session_hook("claude"), 0o755)
    hooks = hooks_object(settings, settings_path, "claude settings", create=True)
    assert hooks is not None
    command = hook_command(hook, "session")
    canonical = {
        "matcher": "*",
        "hooks": [{"type": "command", "command": command, "timeout": _HOOK_TIMEOUT}],
    }
    for event, actions in _CLAUDE_HOOK_ACTIONS:
        keep = canonical if event == "SessionStart" else None
        remove_command_hooks(hooks, event, _commands(hook, actions), keep=keep)
    ensure_command_hook(hooks, "SessionStart", command, _HOOK_TIMEOUT, "*")
    if settings != original:
        write_file(settings_path, json.dumps(settings, indent=2) + "\n")
    return [
        f"installed claude integration hook to {hook}",
        f"ensured claude settings at {settings_path}",
    ]


def _install_codex(env: Env) -> list[str]:
    directory = codex_dir(env)
    if not directory.is_dir():
        raise IntegrationError(
            f"codex config directory not found at {directory}. install codex first"
        )
    hook = directory / HOOK_SCRIPT
    hooks_path = directory / "hooks.json"
    doc = read_json_object(hooks_path, "codex hooks file")
    write_file(hook, _session_hook("codex"), 0o755)
    hooks = hooks_object(doc, hooks_path, "codex hooks file", create=True)
    assert hooks is not None
    for event, actions in _CODEX_HOOK_ACTIONS:
        remove_command_hooks(hooks, event, _commands(hook, actions))
    ensure_command_hook(hooks, "SessionStart", hook_command(hook, "session"), _HOOK_TIMEOUT, None)
    write_file(hooks_path, json.dumps(doc, indent=2))
    config_path = directory / "config.toml"
    existing = config_path.read_text(encoding="utf-8") if config_path.is_file() else ""
    updated = codex_config_with_hooks(existing)
    if updated != existing:
        write_file(config_path, updated)
    return [
        f"installed codex integration hook to {hook}",
        f"ensured codex hooks at {hooks_path}",
        f"ensured codex config at {config_path}",
    ]


def _install_opencode(env: Env) -> list[str]:
    directory = opencode_dir(env)
    if not directory.is_dir():
        raise IntegrationError(
            f"opencode config directory not found at {directory}. install opencode first"
        )
    config = opencode_tui_config(directory)
    (directory / "plugins").mkdir(exist_ok=True)
    plugin = directory / "plugins" / "herdr-agent-state.js"
    write_file(plugin, _asset(PLUGIN_ASSET))
    tui_plugin = directory / "herdr-tui-session.js"
    write_file(tui_plugin, _asset(ASSETS / "opencode-tui-session.js"))
    config_path = directory / "tui.jsonc"
    plugins = config.setdefault("plugin", [])
    if not any(is_tui_spec(item) for item in plugins):
        plugins.append(OPENCODE_TUI_SPEC)
        write_file(config_path, json.dumps(config, indent=2) + "\n")
    return [
        f"installed opencode integration plugin to {plugin}",
        f"installed opencode tui integration plugin to {tui_plugin}",
        f"ensured opencode tui plugin config at {config_path}",
    ]


# -- uninstall --------------------------------------------------------------------------------


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def _uninstall_pi(env: Env) -> list[str]:
    path = pi_extension_dir(env) / "herdr-agent-state.ts"
    if _remove(path):
        return [f"removed pi integration extension at {path}"]
    return [f"no pi integration extension found at {path}"]


def _unhook(
    path: Path, description: str, hook: Path, table: tuple[tuple[str, tuple[str, ...]], ...]
) -> bool:
    """Remove the integration's hook entries from a hooks JSON file; whether any were."""
    if not path.is_file():
        return False
    doc = read_json_object(path, description)
    hooks = hooks_object(doc, path, description, create=False)
    if hooks is None:
        return False
    removed = False
    for event, actions in table:
        removed |= remove_command_hooks(hooks, event, _commands(hook, actions))
    # Codex's hooks.json is written as install writes it (serde's pretty form, no newline)
    return removed and _rewrite(path, doc, "" if path.name == "hooks.json" else "\n")


def _rewrite(path: Path, doc: dict[str, Any], end: str = "\n") -> bool:
    write_file(path, json.dumps(doc, indent=2) + end)
    return True


def _uninstall_claude(env: Env) -> list[str]:
    directory = claude_dir(env)
    hook = directory / "hooks" / HOOK_SCRIPT
    settings = directory / "settings.json"
    updated = _unhook(settings, "claude settings", hook, _CLAUDE_HOOK_ACTIONS)
    removed = _remove(hook)
    return [
        f"removed claude hook at {hook}" if removed else f"no claude hook found at {hook}",
        f"removed herdr claude hook entries from {settings}"
        if updated
        else f"no herdr claude hook entries found in {settings}",
    ]


def _uninstall_codex(env: Env) -> list[str]:
    directory = codex_dir(env)
    hook = directory / HOOK_SCRIPT
    hooks_path = directory / "hooks.json"
    updated = _unhook(hooks_path, "codex hooks file", hook, _CODEX_HOOK_ACTIONS)
    removed = _remove(hook)
    return [
        f"removed codex hook at {hook}" if removed else f"no codex hook found at {hook}",
        f"removed herdr codex hook entries from {hooks_path}"
        if updated
        else f"no herdr codex hook entries found in {hooks_path}",
        f"left codex config unchanged at {directory / 'config.toml'}",
    ]


def _uninstall_opencode(env: Env) -> list[str]:
    directory = opencode_dir(env)
    config_path = directory / "tui.jsonc"
    plugin = directory / "plugins" / "herdr-agent-state.js"
    tui_plugin = directory / "herdr-tui-session.js"
    updated = False
    if config_path.is_file():
        config = opencode_tui_config(directory)
        plugins = config.get("plugin")
        if isinstance(plugins, list) and any(is_tui_spec(item) for item in plugins):
            kept = [item for item in plugins if not is_tui_spec(item)]
            if kept:
                config["plugin"] = kept
            else:
                del config["plugin"]
            updated = _rewrite(config_path, config)
    messages = [
        f"removed opencode integration plugin at {plugin}"
        if _remove(plugin)
        else f"no opencode integration plugin found at {plugin}",
        f"removed opencode tui integration plugin at {tui_plugin}"
        if _remove(tui_plugin)
        else f"no opencode tui integration plugin found at {tui_plugin}",
    ]
    if updated:
        messages.append(f"removed herdr opencode plugin entry from {config_path}")
    return messages


_INSTALL: dict[str, Callable[[Env], list[str]]] = {
    "pi": _install_pi,
    "claude": _install_claude,
    "codex": _install_codex,
    "opencode": _install_opencode,
}
_UNINSTALL: dict[str, Callable[[Env], list[str]]] = {
    "pi": _uninstall_pi,
    "claude": _uninstall_claude,
    "codex": _uninstall_codex,
    "opencode": _uninstall_opencode,
}


def _not_provided(name: str) -> IntegrationError:
    return IntegrationError(
        f"{target(name).label} integration is not provided by the Herdr simulator "
        f"(it has integrations for {', '.join(PROVIDED)})"
    )


def install(name: str, env: Env, users_homes: tuple[str | None, ...] = ()) -> list[str]:
    """Install the integration for target ``name`` under ``env``'s HOME; Herdr's messages.
    Raises :class:`OSError` (an :class:`IntegrationError` for Herdr's refusals and for a
    HOME that is the user's own: :func:`guard_home`)."""
    if name not in _INSTALL:
        raise _not_provided(name)
    guard_home(env, users_homes)
    return _INSTALL[name](env)


def uninstall(name: str, env: Env, users_homes: tuple[str | None, ...] = ()) -> list[str]:
    """Remove what :func:`install` added (config edits included); Herdr's messages."""
    if name not in _UNINSTALL:
        raise _not_provided(name)
    guard_home(env, users_homes)
    return _UNINSTALL[name](env)
