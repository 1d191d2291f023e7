"""The edits an integration makes to an agent's own config files, and their undoing.

What is edited, and how, are Herdr's facts (``src/integration/config_edit.rs``,
``claude_settings.rs``, ``opencode_config.rs``): a ``hooks`` object of event → entries
(``{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}``) in Claude's
``settings.json`` and Codex's ``hooks.json``, ``[features] hooks = true`` in Codex's
``config.toml``, and the ``plugin`` list of opencode's ``tui.jsonc``. Uninstalling removes
exactly the entries the integration added and leaves everything else as it was. Files are
replaced atomically (a symlink at the path is replaced, never followed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from orchestrator.client.file_trust.private_files import write_atomic

__all__ = [
    "OPENCODE_TUI_SPEC",
    "ConfigError",
    "codex_config_with_hooks",
    "ensure_command_hook",
    "hooks_object",
    "is_tui_spec",
    "jsonc_loads",
    "opencode_tui_config",
    "read_json_object",
    "remove_command_hooks",
    "write_file",
]


class ConfigError(OSError):
    """A config file the integration must edit cannot be read as what it should be."""


def write_file(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename (its directory must
    exist; it may be a link of the user's own, as a config directory often is)."""
    write_atomic(path, text, mode=mode, create_parent=False, own_link_parent=True)


def read_json_object(path: Path, description: str, *, loads: Any = json.loads) -> dict[str, Any]:
    """A JSON file's top-level object; ``{}`` when the file does not exist."""
    if not path.is_file():
        return {}
    try:
        value = loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ConfigError(f"failed to parse {path}: {err}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{description} at {path} must be a JSON object")
    return value


def hooks_object(
    doc: dict[str, Any], path: Path, description: str, *, create: bool
) -> dict[str, Any] | None:
    """``doc["hooks"]`` (created when ``create``); None when absent and not created."""
    if "hooks" not in doc:
        if not create:
            return None
        doc["hooks"] = {}
    hooks = doc["hooks"]
    if not isinstance(hooks, dict):
        raise ConfigError(f"{description} hooks at {path} must be a JSON object")
    return hooks


def _entries(hooks: dict[str, Any], event: str) -> list[Any]:
    entries = hooks[event]
    if not isinstance(entries, list):
        raise ConfigError(f"hook entries for {event} must be an array")
    return entries


def _runs(hook: Any, commands: tuple[str, ...]) -> bool:
    return (
        isinstance(hook, dict) and hook.get("type") == "command" and hook.get("command") in commands
    )


def ensure_command_hook(
    hooks: dict[str, Any], event: str, command: str, timeout: int, matcher: str | None
) -> None:
    """Add an entry running ``command`` on ``event`` unless one already runs it."""
    entries = _entries(hooks, event) if event in hooks else hooks.setdefault(event, [])
    for existing in entries:
        inner = existing.get("hooks") if isinstance(existing, dict) else None
        if isinstance(inner, list) and any(_runs(hook, (command,)) for hook in inner):
            return
    entry: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
    entry["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
    entries.append(entry)


def remove_command_hooks(
    hooks: dict[str, Any], event: str, commands: tuple[str, ...], *, keep: Any = None
) -> bool:
    """Remove the hooks running one of ``commands`` from ``event``'s entries (entries left
    empty go, and the event with them); the first entry equal to ``keep`` stays as it is.
    Whether anything was removed."""
    if event not in hooks:
        return False
    entries = _entries(hooks, event)
    removed = False
    kept_canonical = False
    survivors: list[Any] = []
    for entry in entries:
        if keep is not None and not kept_canonical and entry == keep:
            kept_canonical = True
            survivors.append(entry)
            continue
        inner = entry.get("hooks") if isinstance(entry, dict) else None
        if not isinstance(inner, list):
            survivors.append(entry)
            continue
        left = [hook for hook in inner if not _runs(hook, commands)]
        removed |= len(left) != len(inner)
        if left:
            entry["hooks"] = left
            survivors.append(entry)
    entries[:] = survivors
    if not entries and keep is None:
        del hooks[event]
    return removed


# -- codex config.toml ------------------------------------------------------------------------

_TABLE = re.compile(r"^\s*(\[\[?[^\]]*\]\]?)\s*(#.*)?$")


def _table_header(line: str) -> str | None:
    found = _TABLE.match(line)
    return found.group(1).replace(" ", "") if found else None


def _is_key(line: str, key: str) -> bool:
    text = line.strip()
    return text.startswith(key) and text[len(key) :].lstrip().startswith("=")


def codex_config_with_hooks(content: str) -> str:
    """``config.toml`` with ``hooks = true`` in its top-level ``[features]`` table (added
    when missing) and the deprecated ``codex_hooks`` key of that table gone."""
    lines = content.splitlines()
    in_features = False
    header: int | None = None
    hooks_at: int | None = None
    deprecated: list[int] = []
    for index, line in enumerate(lines):
        table = _table_header(line)
        if table is not None:
            in_features = table == "[features]"
            if in_features and header is None:
                header = index
            continue
        if in_features and _is_key(line, "codex_hooks"):
            deprecated.append(index)
        elif in_features and _is_key(line, "hooks"):
            hooks_at = index
    if hooks_at is not None:
        lines[hooks_at] = "hooks = true"
    for index in reversed(deprecated):
        del lines[index]
    if hooks_at is None and header is None:
        text = content.rstrip("\n")
        return (text + "\n\n" if text else "") + "[features]\nhooks = true\n"
    if hooks_at is None and header is not None:
        lines.insert(header + 1, "hooks = true")
    return "\n".join(lines) + ("\n" if content.endswith("\n") or not content else "")


# -- JSONC (opencode's tui.jsonc) -------------------------------------------------------------


def _strip(text: str, drop: Any) -> str:
    """``text`` with what ``drop(text, index)`` (outside strings) says to skip removed:
    ``drop`` returns the index to continue at, or None to keep the character."""
    out: list[str] = []
    index, in_string = 0, False
    while index < len(text):
        char = text[index]
        if in_string:
            out.append(char)
            if char == "\\" and index + 1 < len(text):
                out.append(text[index + 1])
                index += 1
            elif char == '"':
                in_string = False
            index += 1
            continue
        if char == '"':
            in_string = True
            out.append(char)
            index += 1
            continue
        skip_to = drop(text, index)
        if skip_to is None:
            out.append(char)
            index += 1
        else:
            index = skip_to
    return "".join(out)


def _comment_end(text: str, index: int) -> int | None:
    if text.startswith("//", index):
        end = text.find("\n", index)
        return len(text) if end < 0 else end
    if text.startswith("/*", index):
        end = text.find("*/", index + 2)
        if end < 0:
            raise ValueError("unterminated block comment")
        return end + 2
    return None


def _trailing_comma(text: str, index: int) -> int | None:
    if text[index] != ",":
        return None
    rest = text[index + 1 :].lstrip()
    return index + 1 if rest[:1] in ("}", "]") else None


def jsonc_loads(text: str) -> Any:
    """JSON with comments and trailing commas, as opencode reads its config."""
    return json.loads(_strip(_strip(text, _comment_end), _trailing_comma))


#: the ``plugin`` entry of the integration's TUI plugin in opencode's ``tui.jsonc``
OPENCODE_TUI_SPEC = "./herdr-tui-session.js"


def opencode_tui_config(directory: Path) -> dict[str, Any]:
    """opencode's ``tui.jsonc`` in ``directory`` (``{}`` when missing), checked as Herdr
    checks it before an edit."""
    path = directory / "tui.jsonc"
    if not path.is_file():
        return {}
    try:
        value = jsonc_loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ConfigError(f"failed to parse OpenCode TUI config at {path}: {err}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"OpenCode TUI config at {path} must be a JSON object")
    if "plugin" in value and not isinstance(value["plugin"], list):
        raise ConfigError(f"OpenCode TUI config plugin list at {path} must be an array")
    return value


def is_tui_spec(item: Any) -> bool:
    """Whether a ``plugin`` list item names the integration's TUI plugin (alone or with
    options)."""
    return item == OPENCODE_TUI_SPEC or (
        isinstance(item, list) and bool(item) and item[0] == OPENCODE_TUI_SPEC
    )
