"""What ``integration.list`` and ``herdr integration status`` report: each target's
installed state, read from the version marker of its file (Herdr's ``registry.rs``:
``integration_status_at``, ``parse_integration_version``), and whether its agent is
available (its command on PATH; Codex's standalone install too).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .config_edits import ConfigError, is_tui_spec, opencode_tui_config
from .targets import INTEGRATION_VERSION_MARKER, TARGETS, Target, codex_dir, opencode_dir

__all__ = ["integration_list", "state_of", "version_in"]

Env = Mapping[str, str]


def version_in(path: Path) -> int | None:
    """The integration version marked in a file (Herdr's ``parse_integration_version``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.splitlines():
        marker = line.strip().lstrip("/").lstrip("#").strip()
        if marker.startswith(INTEGRATION_VERSION_MARKER):
            try:
                return int(marker[len(INTEGRATION_VERSION_MARKER) :].strip())
            except ValueError:
                continue  # Herdr's find_map: the next marker line may hold a number
    return None


def state_of(entry: Target, env: Env) -> tuple[str, Path]:
    """``not_installed``, ``current`` or ``outdated`` (Herdr's ``integration_status_at``),
    and the file that says so."""
    path = entry.status_path(env)
    if not path.is_file():
        return "not_installed", path
    version = version_in(path)
    state = "current" if version is not None and version >= entry.version else "outdated"
    if entry.name == "opencode" and state == "current" and not _opencode_tui_ok(env, entry):
        state = "outdated"
    return state, path


def _opencode_tui_ok(env: Env, entry: Target) -> bool:
    directory = opencode_dir(env)
    version = version_in(directory / "herdr-tui-session.js")
    if version is None or version < entry.version:
        return False
    try:
        plugins = opencode_tui_config(directory).get("plugin")
    except ConfigError:
        return False
    return isinstance(plugins, list) and any(is_tui_spec(item) for item in plugins)


def _on_path(command: str, env: Env) -> bool:
    for directory in (env.get("PATH") or "").split(os.pathsep):
        candidate = Path(directory or ".") / command
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return True
    return False


def _codex_standalone(env: Env) -> bool:
    releases = codex_dir(env) / "packages" / "standalone" / "releases"
    try:
        found = list(releases.iterdir())
    except OSError:
        return False
    return any(os.access(item / "bin" / "codex", os.X_OK) for item in found)


def integration_list(env: Env) -> list[dict[str, Any]]:
    """``integration.list``'s ``IntegrationInfo`` of every target, in protocol order."""
    listed: list[dict[str, Any]] = []
    for entry in TARGETS:
        try:
            state, _path = state_of(entry, env)
        except OSError:  # no HOME: Herdr leaves the target out
            continue
        available = any(_on_path(command, env) for command in entry.commands) or (
            entry.name == "codex" and _codex_standalone(env)
        )
        listed.append(
            {
                "target": entry.name,
                "label": entry.label,
                "command": entry.command,
                "available": available or state != "not_installed",
                "state": state,
            }
        )
    return listed
