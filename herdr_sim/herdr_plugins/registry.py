"""Herdr plugins without the server: the manifest (``herdr-plugin.toml``) and the registry.

Herdr reads a plugin's manifest when it is linked and again on every registry read, and keeps
the linked plugins in ``plugins.json`` in its config directory (``src/app/api/plugins/
manifest.rs``, ``src/persist/plugin_registry.rs``). This module holds those rules as plain
functions so the simulator's ``plugin.*`` methods, the ``herdr plugin`` CLI and anything that
ships its own manifest (the orchestrator's) all read a manifest the same way:

* :func:`load_manifest` parses and normalises a manifest into Herdr's ``InstalledPluginInfo``
  wire shape, raising :class:`PluginError` with Herdr's code and message;
* :class:`Registry` is the ``plugins.json`` of one config directory (locked, written
  atomically, manifests reloaded on every read as Herdr does);
* :func:`plugin_config_dir` / :func:`plugin_state_dir` are the per-plugin directories
  Herdr hands a plugin (``src/plugin_paths.rs``).

Trust: Herdr follows whatever the path names. The simulator is stricter, because a manifest
names commands it will run: a plugin directory or manifest that is a symlink, or a manifest,
plugin directory or registry file not owned by the user or writable by group or others, is
refused (:func:`check_trusted`). Files are opened with ``O_NOFOLLOW`` and checked on the open
descriptor, so nothing can be swapped in between the check and the read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from herdr_sim.wire.errors import PLUGIN_UNTRUSTED
from orchestrator.client.file_trust import locks
from orchestrator.client.file_trust import ownership as trusted_paths
from orchestrator.client.file_trust.private_files import write_atomic

__all__ = [
    "HOOK_EVENT_NAMES",
    "MANIFEST_FILE",
    "MANIFEST_UNAVAILABLE_PREFIX",
    "PluginError",
    "Registry",
    "check_trusted",
    "effective_platforms",
    "ensure_platform_supported",
    "ensure_plugin_user_dirs",
    "load_manifest",
    "managed_checkout_path",
    "manifest_available",
    "normalize_action_id",
    "normalize_plugin_id",
    "plugin_config_dir",
    "plugin_state_dir",
    "simulator_state_dir",
]

T = TypeVar("T")

#: the manifest file a plugin directory holds
MANIFEST_FILE = "herdr-plugin.toml"
#: the prefix of the warning a registry entry gets when its manifest cannot be reloaded
MANIFEST_UNAVAILABLE_PREFIX = "manifest unavailable: "
_REGISTRY_FILE = "plugins.json"
_LOCK_FILE = ".plugins.lock"
_ID_MAX_CHARS = 120
_PLATFORMS = ("linux", "macos", "windows")
_PLACEMENTS = ("overlay", "popup", "split", "tab", "zoomed")
_CONTEXTS = ("global", "workspace", "tab", "pane", "selection")
#: events a manifest's ``[[events]] on`` may name (Herdr's ``PLUGIN_HOOK_EVENT_KINDS``)
HOOK_EVENT_NAMES: tuple[str, ...] = (
    "workspace.created",
    "workspace.updated",
    "workspace.closed",
    "workspace.renamed",
    "workspace.moved",
    "workspace.reordered",
    "workspace.focused",
    "worktree.created",
    "worktree.opened",
    "worktree.removed",
    "tab.created",
    "tab.closed",
    "tab.renamed",
    "tab.moved",
    "tab.focused",
    "pane.created",
    "pane.closed",
    "pane.focused",
    "pane.moved",
    "pane.exited",
    "pane.agent_detected",
    "pane.agent_status_changed",
)
_PERCENT = re.compile(r"(100|[1-9][0-9]?)%")


class PluginError(Exception):
    """A plugin failure with Herdr's wire code (``plugin_manifest_parse_failed``, …)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


# -- identifiers -----------------------------------------------------------------------------


def _identifier(value: str, extra: str) -> str | None:
    value = value.strip()
    ok = (
        bool(value)
        and len(value) <= _ID_MAX_CHARS
        and all(ch.isascii() and (ch.isalnum() or ch in extra) for ch in value)
    )
    return value if ok else None


def normalize_plugin_id(value: str) -> str | None:
    """A plugin id trimmed, or None: 1-120 chars of ASCII letters, digits, ``:._-``."""
    return _identifier(value, ":._-")


def normalize_action_id(value: str) -> str | None:
    """An action, pane or link-handler id trimmed, or None: as a plugin id but no ``.``."""
    return _identifier(value, ":_-")


# -- trust -----------------------------------------------------------------------------------


_UNTRUSTED_BECAUSE = {
    trusted_paths.IS_LINK: "is a symlink",
    trusted_paths.NOT_REGULAR: "is not a regular file",
    trusted_paths.FOREIGN_OWNER: "is not owned by the current user",
    trusted_paths.WRITABLE: "is writable by group or others",
}


def _untrusted(what: str, problem: str) -> PluginError:
    return PluginError(PLUGIN_UNTRUSTED, f"{what} {_UNTRUSTED_BECAUSE[problem]}")


def check_trusted(st: os.stat_result, what: str) -> None:
    """Refuse a file or directory that another user owns or that group/others may write
    (:func:`orchestrator.client.file_trust.ownership.ownership_problem`)."""
    problem = trusted_paths.ownership_problem(st)
    if problem is not None:
        raise _untrusted(what, problem)


def _read_trusted(path: Path, what: str) -> str:
    """The text of ``path``, opened without following a symlink and checked on its fd."""
    fd = trusted_paths.open_own_file(path, lambda problem, _info: _untrusted(what, problem))
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode("utf-8")


# -- the manifest ----------------------------------------------------------------------------


def _parse_error(message: str) -> PluginError:
    return PluginError("plugin_manifest_parse_failed", message)


def _table(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _parse_error(f"invalid type for {where}: expected a table")
    return raw


def _string(raw: dict[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    if key not in raw:
        if required:
            raise _parse_error(f"missing field `{key}` in {where}")
        return None
    value = raw[key]
    if not isinstance(value, str):
        raise _parse_error(f"invalid type for `{key}` in {where}: expected a string")
    return value


def _strings(raw: dict[str, Any], key: str, where: str) -> list[str] | None:
    if key not in raw:
        return None
    value = raw[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _parse_error(f"invalid type for `{key}` in {where}: expected an array of strings")
    return list(value)


def _tables(raw: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = raw.get(key, [])
    if not isinstance(value, list):
        raise _parse_error(f"invalid type for `{key}`: expected an array of tables")
    return [_table(item, key) for item in value]


def _non_empty(value: str, code: str, message: str) -> str:
    value = value.strip()
    if not value:
        raise PluginError(code, message)
    return value


def _description(raw: dict[str, Any], where: str) -> str | None:
    value = _string(raw, "description", where, required=False)
    value = value.strip() if value is not None else None
    return value or None


def _platforms(raw: dict[str, Any], where: str) -> list[str] | None:
    values = _strings(raw, "platforms", where)
    if values is None:
        return None
    for value in values:
        if value not in _PLATFORMS:
            raise _parse_error(f"invalid_plugin_platform: unknown platform '{value}'")
    if not values:
        raise PluginError(
            "invalid_plugin_platform",
            "platforms must not be an empty array; omit the field to leave platforms undeclared",
        )
    return values


def _command(raw: dict[str, Any], where: str) -> list[str]:
    command = _strings(raw, "command", where)
    if command is None:
        raise _parse_error(f"missing field `command` in {where}")
    if not command or any(not arg for arg in command):
        raise PluginError("invalid_plugin_command", "command must contain non-empty argv strings")
    return command


def _with_platforms(item: dict[str, Any], platforms: list[str] | None) -> dict[str, Any]:
    if platforms is not None:
        item["platforms"] = platforms
    return item


def _popup_size(raw: dict[str, Any], key: str) -> int | str | None:
    if key not in raw:
        return None
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise _parse_error(f"invalid type for `{key}`: a cell count or percentage string")
    if isinstance(value, int):
        if not 0 <= value <= 65535:
            raise _parse_error(f"invalid value for `{key}`: {value}")
        return value
    if not value.endswith("%"):
        raise _parse_error("string sizes must be percentages like 80%; use a number for cells")
    if not _PERCENT.fullmatch(value):
        raise _parse_error("percentage must be between 1% and 100%")
    return value


def _version(text: str) -> tuple[int, int, int] | None:
    """Herdr's ``Version::parse``: ``[v]MAJOR.MINOR.PATCH`` of unsigned integers."""
    parts = text.removeprefix("v").split(".")
    if len(parts) != 3:
        return None
    numbers = []
    for part in parts:
        digits = part.removeprefix("+")
        if not digits.isascii() or not digits.isdigit():
            return None
        numbers.append(int(digits))
    return numbers[0], numbers[1], numbers[2]


def _min_version(raw: dict[str, Any], herdr_version: str) -> str:
    value = _string(raw, "min_herdr_version", "the manifest", required=False)
    message = "plugin min_herdr_version is required"
    if value is None:
        raise PluginError("invalid_plugin_min_herdr_version", message)
    value = _non_empty(value, "invalid_plugin_min_herdr_version", message)
    required = _version(value)
    current = _version(herdr_version) or (0, 0, 0)
    if required is None:
        raise PluginError(
            "invalid_plugin_min_herdr_version",
            f"plugin min_herdr_version must be a semantic version like {herdr_version}",
        )
    shown = ".".join(map(str, required))
    if required > current:
        raise PluginError(
            "plugin_requires_newer_herdr",
            f"plugin requires Herdr {shown} or newer; current Herdr is "
            + ".".join(map(str, current)),
        )
    return shown


def _unique(items: list[dict[str, Any]], code: str, kind: str) -> None:
    seen: set[str] = set()
    for item in items:
        if item["id"] in seen:
            raise PluginError(code, f"duplicate {kind} id '{item['id']}'")
        seen.add(item["id"])


def _action(raw: dict[str, Any]) -> dict[str, Any]:
    where = "actions"
    action_id = normalize_action_id(_string(raw, "id", where) or "")
    title = _string(raw, "title", where) or ""
    contexts = _strings(raw, "contexts", where) or []
    for context in contexts:
        if context not in _CONTEXTS:
            raise _parse_error(f"unknown variant `{context}` for `contexts`")
    platforms = _platforms(raw, where)
    command = _command(raw, where)
    if action_id is None:
        raise PluginError("invalid_plugin_action_id", "invalid action id")
    item: dict[str, Any] = {
        "id": action_id,
        "title": _non_empty(title, "invalid_plugin_action_title", "action title is required"),
    }
    description = _description(raw, where)
    if description is not None:
        item["description"] = description
    if contexts:
        item["contexts"] = contexts
    _with_platforms(item, platforms)
    item["command"] = command
    return item


def _pane(raw: dict[str, Any]) -> dict[str, Any]:
    where = "panes"
    pane_id = normalize_action_id(_string(raw, "id", where) or "")
    title = _string(raw, "title", where) or ""
    placement = _string(raw, "placement", where, required=False) or "overlay"
    if placement not in _PLACEMENTS:
        raise _parse_error(f"unknown variant `{placement}` for `placement`")
    width, height = _popup_size(raw, "width"), _popup_size(raw, "height")
    platforms = _platforms(raw, where)
    command = _command(raw, where)
    if pane_id is None:
        raise PluginError("invalid_plugin_pane_id", "invalid pane id")
    item: dict[str, Any] = {
        "id": pane_id,
        "title": _non_empty(title, "invalid_plugin_pane_title", "pane title is required"),
    }
    description = _description(raw, where)
    if description is not None:
        item["description"] = description
    _with_platforms(item, platforms)
    if placement != "popup" and (width is not None or height is not None):
        raise PluginError(
            "invalid_plugin_pane_size",
            "pane width and height are only supported when placement is popup",
        )
    item["placement"] = placement
    if width is not None:
        item["width"] = width
    if height is not None:
        item["height"] = height
    item["command"] = command
    return item


def _hook(raw: dict[str, Any]) -> dict[str, Any]:
    on = _string(raw, "on", "events") or ""
    platforms = _platforms(raw, "events")
    command = _command(raw, "events")
    item: dict[str, Any] = {"on": _non_empty(on, "invalid_plugin_event", "event name is required")}
    _with_platforms(item, platforms)
    item["command"] = command
    return item


def _link_handler(raw: dict[str, Any]) -> dict[str, Any]:
    where = "link_handlers"
    handler_id = normalize_action_id(_string(raw, "id", where) or "")
    title = _string(raw, "title", where) or ""
    pattern = _string(raw, "pattern", where) or ""
    action = _string(raw, "action", where) or ""
    platforms = _platforms(raw, where)
    if handler_id is None:
        raise PluginError("invalid_plugin_link_handler_id", "invalid link handler id")
    item: dict[str, Any] = {
        "id": handler_id,
        "title": _non_empty(
            title, "invalid_plugin_link_handler_title", "link handler title is required"
        ),
        "pattern": _non_empty(
            pattern, "invalid_plugin_link_handler_pattern", "link handler pattern is required"
        ),
    }
    # Imported here: the `herdr` CLI runs without site-packages (herdr_cli/install.py), and
    # only a manifest with link handlers needs the regex engine (google-re2).
    from herdr_sim.regex import RustRegexError, compile_rust_regex

    try:  # Herdr compiles it with the Rust regex crate: no look-around, no back-references
        compile_rust_regex(item["pattern"])
    except RustRegexError as exc:
        raise PluginError("invalid_plugin_link_handler_pattern", str(exc)) from None
    action_id = normalize_action_id(action)
    if action_id is None:
        raise PluginError("invalid_plugin_link_handler_action", "invalid link handler action")
    item["action"] = action_id
    return _with_platforms(item, platforms)


def _sorted_by_id(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: str(item["id"]))


def parse_manifest(text: str, herdr_version: str) -> dict[str, Any]:
    """The manifest's fields normalised as Herdr does (ids trimmed, lists sorted, warnings).

    Raises :class:`PluginError` with Herdr's code for the first problem found.
    """
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _parse_error(str(exc)) from None
    where = "the manifest"
    raw_id, raw_name = _string(raw, "id", where) or "", _string(raw, "name", where) or ""
    raw_version = _string(raw, "version", where) or ""
    description = _description(raw, where)
    platforms = _platforms(raw, where)
    sections = {
        key: _tables(raw, key)
        for key in ("build", "startup", "actions", "events", "panes", "link_handlers")
    }
    plugin_id = normalize_plugin_id(raw_id)
    if plugin_id is None:
        raise PluginError("invalid_plugin_id", "invalid plugin id")
    info: dict[str, Any] = {
        "plugin_id": plugin_id,
        "name": _non_empty(raw_name, "invalid_plugin_name", "plugin name is required"),
        "version": _non_empty(raw_version, "invalid_plugin_version", "plugin version is required"),
        "min_herdr_version": _min_version(raw, herdr_version),
    }
    if description is not None:
        info["description"] = description
    steps = {
        key: [
            _with_platforms({}, _platforms(item, key)) | {"command": _command(item, key)}
            for item in sections[key]
        ]
        for key in ("build", "startup")
    }
    actions = [_action(item) for item in sections["actions"]]
    _unique(actions, "duplicate_plugin_action_id", "action")
    events = sorted(
        (_hook(item) for item in sections["events"]),
        key=lambda hook: (hook["on"], [arg.strip() for arg in hook["command"]]),
    )
    panes = [_pane(item) for item in sections["panes"]]
    _unique(panes, "duplicate_plugin_pane_id", "pane")
    handlers = [_link_handler(item) for item in sections["link_handlers"]]
    _unique(handlers, "duplicate_plugin_link_handler_id", "link handler")
    action_ids = {action["id"] for action in actions}
    for handler in handlers:
        if handler["action"] not in action_ids:
            raise PluginError(
                "invalid_plugin_link_handler_action",
                f"link handler '{handler['id']}' references unknown action '{handler['action']}'",
            )
    warnings = [
        f"unknown event '{hook['on']}'" for hook in events if hook["on"] not in HOOK_EVENT_NAMES
    ]
    if platforms is None:
        warnings.append("manifest does not declare platforms; platform support unknown")
    listed = {
        "build": steps["build"],
        "startup": steps["startup"],
        "actions": _sorted_by_id(actions),
        "events": events,
        "panes": _sorted_by_id(panes),
        "link_handlers": handlers,
    }
    return info | {"platforms": platforms, "warnings": warnings, **listed}


def load_manifest(path: str, enabled: bool, herdr_version: str) -> dict[str, Any]:
    """Herdr's ``load_plugin_manifest``: a plugin directory or manifest file → its
    ``InstalledPluginInfo`` (``source`` local, ``manifest_path`` and ``plugin_root``
    canonical). A symlinked or untrusted directory or manifest is refused."""
    given = Path(path)
    try:
        given_st = given.lstat()
    except OSError as exc:
        raise PluginError("plugin_manifest_not_found", exc.strerror or str(exc)) from None
    if stat.S_ISLNK(given_st.st_mode):
        raise PluginError(PLUGIN_UNTRUSTED, f"{path} is a symlink")
    manifest = given / MANIFEST_FILE if stat.S_ISDIR(given_st.st_mode) else given
    try:
        manifest_st = manifest.lstat()
        manifest = manifest.resolve(strict=True)
    except OSError as exc:
        raise PluginError("plugin_manifest_not_found", exc.strerror or str(exc)) from None
    if stat.S_ISLNK(manifest_st.st_mode):
        raise PluginError(PLUGIN_UNTRUSTED, f"{manifest} is a symlink")
    root = manifest.parent
    check_trusted(root.lstat(), f"plugin directory {root}")
    try:
        text = _read_trusted(manifest, f"plugin manifest {manifest}")
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginError("plugin_manifest_read_failed", str(exc)) from None
    parsed = parse_manifest(text, herdr_version)
    info: dict[str, Any] = {
        key: parsed[key]
        for key in ("plugin_id", "name", "version", "min_herdr_version", "description")
        if key in parsed
    }
    info |= {"manifest_path": str(manifest), "plugin_root": str(root), "enabled": enabled}
    if parsed["platforms"] is not None:
        info["platforms"] = parsed["platforms"]
    for key in ("build", "startup", "actions", "events", "panes", "link_handlers"):
        if parsed[key]:
            info[key] = parsed[key]
    info["source"] = {"kind": "local"}
    if parsed["warnings"]:
        info["warnings"] = parsed["warnings"]
    return info


def manifest_available(plugin: dict[str, Any]) -> bool:
    """False for a registry entry whose manifest could not be reloaded."""
    return not any(
        str(warning).startswith(MANIFEST_UNAVAILABLE_PREFIX)
        for warning in plugin.get("warnings", ())
    )


# -- platforms -------------------------------------------------------------------------------


def effective_platforms(item: dict[str, Any], plugin: dict[str, Any]) -> list[str] | None:
    """An item's own platforms if it declares them, else its plugin's (None: undeclared)."""
    found = item.get("platforms")
    if found is None:
        found = plugin.get("platforms")
    return None if found is None else list(found)


def ensure_platform_supported(platforms: list[str] | None, subject: str, host: str) -> None:
    """``platform_unsupported`` when declared platforms do not include the host's."""
    if platforms is not None and host not in platforms:
        raise PluginError(
            "platform_unsupported",
            f"{subject} does not support the current platform ({host})",
        )


# -- per-plugin directories ------------------------------------------------------------------

_WINDOWS_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL"}
    | {f"COM{n}" for n in range(1, 10)}
    | {f"LPT{n}" for n in range(1, 10)}
)


def _path_component(plugin_id: str) -> str:
    """Herdr's ``plugin_config_path_component``: percent-encoded, Windows-safe, ≤ 120 chars."""
    out = "".join(
        chr(byte)
        if chr(byte) in "._-" or chr(byte).isdigit() or 97 <= byte <= 122
        else f"%{byte:02X}"
        for byte in plugin_id.encode()
    )
    if out.endswith("."):
        out = out[:-1] + "%2E"
    if not out:
        return "%plugin"
    if out.split(".")[0].upper() in _WINDOWS_RESERVED:
        out = f"%{out}"
    if len(out) > _ID_MAX_CHARS:
        digest = hashlib.sha256(plugin_id.encode()).hexdigest()[:12]
        out = f"{out[: _ID_MAX_CHARS - len(digest) - 1]}-{digest}"
    return out


def simulator_state_dir(config_dir: Path) -> Path:
    """The simulator's stand-in for Herdr's state dir (``$XDG_STATE_HOME/herdr``): kept
    inside its config directory so all plugin state stays in one private place."""
    return config_dir / "state"


def plugin_config_dir(config_dir: Path, plugin_id: str) -> Path:
    """``<config dir>/plugins/config/<id>``: the plugin's settings (``HERDR_PLUGIN_CONFIG_DIR``)."""
    return config_dir / "plugins" / "config" / _path_component(plugin_id)


def plugin_state_dir(state_dir: Path, plugin_id: str) -> Path:
    """``<state dir>/plugins/<id>``: the plugin's own state (``HERDR_PLUGIN_STATE_DIR``)."""
    return state_dir / "plugins" / _path_component(plugin_id)


def ensure_plugin_user_dirs(config_dir: Path, plugin_id: str) -> None:
    """Create a plugin's config and state directories (private to the user)."""
    state_dir = simulator_state_dir(config_dir)
    for path in (plugin_config_dir(config_dir, plugin_id), plugin_state_dir(state_dir, plugin_id)):
        path.mkdir(parents=True, exist_ok=True, mode=0o700)


# -- the registry ----------------------------------------------------------------------------


class Registry:
    """``plugins.json`` in one config directory: the linked plugins, sorted by id.

    Every read reloads each entry's manifest (Herdr's ``reload_manifests``): a manifest
    that still parses replaces the cached fields but keeps ``enabled`` and ``source``; one
    that does not keeps the stored entry with a ``manifest unavailable: …`` warning.
    """

    def __init__(self, config_dir: Path, herdr_version: str) -> None:
        self.config_dir = config_dir
        self.path = config_dir / _REGISTRY_FILE
        self.herdr_version = herdr_version

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.config_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        # the directory the user named (it may be a link to their own directory)
        check_trusted(self.config_dir.stat(), f"config directory {self.config_dir}")
        with locks.held(self.config_dir / _LOCK_FILE):
            yield

    def _read(self) -> list[dict[str, Any]]:
        try:
            text = _read_trusted(self.path, f"plugin registry {self.path}")
        except FileNotFoundError:
            return []
        entries = json.loads(text)
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError("plugin registry is not a list of plugins")
        return entries

    def _write(self, entries: list[dict[str, Any]]) -> None:
        write_atomic(self.path, json.dumps(entries, indent=2), own_link_parent=True)

    def _reload(self, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        fresh_entries = []
        for entry in entries:
            try:
                fresh = load_manifest(
                    str(entry["manifest_path"]), bool(entry["enabled"]), self.herdr_version
                )
            except PluginError as exc:
                kept = {key: value for key, value in entry.items() if key != "warnings"}
                kept["warnings"] = [f"{MANIFEST_UNAVAILABLE_PREFIX}{exc.message}"]
                fresh_entries.append(kept)
                continue
            fresh["source"] = entry.get("source", {"kind": "local"})
            fresh_entries.append(fresh)
        return fresh_entries

    def load(self) -> list[dict[str, Any]]:
        """The registry's plugins, manifests reloaded (``OSError``/``ValueError``/
        :class:`PluginError` when the file cannot be trusted or read). No registry file
        is an empty registry, read without creating anything."""
        if not os.path.lexists(self.path):
            return []
        with self._locked():
            return self._reload(self._read())

    def update(
        self, mutation: Callable[[dict[str, dict[str, Any]]], T]
    ) -> tuple[T, list[dict[str, Any]]]:
        """Apply ``mutation`` to ``{plugin_id: entry}`` under the lock and save the result;
        returns the mutation's result and the saved entries, manifests reloaded."""
        with self._locked():
            by_id = {str(entry["plugin_id"]): entry for entry in self._read()}
            result = mutation(by_id)
            entries = [by_id[key] for key in sorted(by_id)]
            self._write(entries)
            return result, self._reload(entries)


def managed_checkout_path(config_dir: Path, plugin_id: str) -> Path:
    """Where ``herdr plugin install`` keeps a GitHub plugin: ``plugins/github/<slug>-<hash>``."""
    slug = re.sub(r"-{2,}", "-", re.sub(r"[^A-Za-z0-9_.-]", "-", plugin_id)).strip("-_.")
    slug = slug[:80] or "plugin"
    if slug.split(".")[0].upper() in _WINDOWS_RESERVED:
        slug = slug.replace(".", "-")
    digest = hashlib.sha256(plugin_id.encode()).hexdigest()[:12]
    return config_dir / "plugins" / "github" / f"{slug}-{digest}"
