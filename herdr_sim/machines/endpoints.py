"""The saved SSH machines catalog, ``<state>/client/endpoints.json``, with Herdr's rules.

Real Herdr keeps its saved machines in ``<state_dir>/client/endpoints.json`` (version 1,
unknown fields refused, at most 64 KiB and 64 profiles, labels of at most 128 bytes and
targets of at most 1024 bytes without control characters or a password) and the TUI's
chosen machine in ``endpoint-selection.json`` beside it. The simulator's state directory
is ``<config dir>/state`` (:func:`herdr_sim.herdr_plugins.registry.simulator_state_dir`), so a
test's catalog lives in its own private config directory and never in the user's.

Every message a check produces is Herdr's own (``src/client/endpoint/catalog.rs``), except
for JSON decoding errors: Herdr reports serde's wording with a line and column, the
simulator reports what is wrong without them (docs/simulator/fidelity.md). Reading refuses
a symlink and a file owned by another user (stricter than Herdr, which follows both):
``--machine`` runs ``ssh`` with the target the file names, so the file must be the user's.
Writes are atomic and private: a ``0600`` temp file in the same directory, fsync, rename,
fsync of the directory; a symlink or non-file at the catalog path is never replaced.

This module imports :mod:`json` and friends, so the CLI loads it only for ``herdr
machine`` and ``--machine`` commands.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.client.file_trust.ownership import open_own_file
from orchestrator.client.file_trust.private_files import write_atomic
from orchestrator.client.socket_paths import SessionNameError, config_dir_str, validate_session_name

__all__ = [
    "CATALOG_VERSION",
    "MAX_CATALOG_BYTES",
    "MAX_LABEL_BYTES",
    "MAX_PROFILES",
    "MAX_TARGET_BYTES",
    "CatalogError",
    "EndpointCatalog",
    "SavedMachine",
    "catalog_path",
    "generate_profile_id",
    "parse_profile_id",
    "selection_path",
    "validate_label",
]

CATALOG_VERSION = 1
SELECTION_VERSION = 1
MAX_CATALOG_BYTES = 64 * 1024
MAX_PROFILES = 64
MAX_LABEL_BYTES = 128
MAX_TARGET_BYTES = 1024
_PROFILE_FIELDS = ("id", "label", "target", "session", "enabled", "windows_desktop")
_CATALOG_FIELDS = ("version", "selected_profile", "ssh")
_SELECTION_FIELDS = ("version", "selected_profile")


class CatalogError(Exception):
    """A catalog that cannot be read, validated or stored; ``str()`` is Herdr's message."""


def _is_control(ch: str) -> bool:
    """Rust's ``char::is_control``: the Unicode ``Cc`` category."""
    code = ord(ch)
    return code < 0x20 or 0x7F <= code <= 0x9F


def generate_profile_id() -> str:
    """A new profile id: 32 lowercase hexadecimal digits."""
    return secrets.token_hex(16)


def parse_profile_id(raw: str) -> str:
    """``raw`` if it is a profile id (32 lowercase hex digits), else :class:`CatalogError`."""
    if len(raw) == 32 and all(ch in "0123456789abcdef" for ch in raw):
        return raw
    raise CatalogError("invalid SSH endpoint profile id")


def validate_label(label: str) -> None:
    """Herdr's label rules (checked on the trimmed label; the label is stored as given)."""
    trimmed = label.strip()
    if not trimmed:
        raise CatalogError("SSH endpoint label cannot be empty")
    if len(trimmed.encode("utf-8", "surrogateescape")) > MAX_LABEL_BYTES or any(
        _is_control(ch) for ch in trimmed
    ):
        raise CatalogError(
            f"SSH endpoint label must be at most {MAX_LABEL_BYTES} bytes "
            "and contain no control characters"
        )


def validate_target(target: str) -> None:
    """Herdr's SSH target rules: length, control characters, leading ``-``, no password."""
    if len(target.encode("utf-8", "surrogateescape")) > MAX_TARGET_BYTES or any(
        _is_control(ch) for ch in target
    ):
        raise CatalogError(
            f"SSH target must be at most {MAX_TARGET_BYTES} bytes and contain no control characters"
        )
    if not target:
        raise CatalogError("missing value for --remote")
    if target.startswith("-"):
        raise CatalogError("--remote target must not start with '-'")
    authority = target.removeprefix("ssh://")
    userinfo, at, _host = authority.rpartition("@")
    if at and ":" in userinfo:
        raise CatalogError("SSH target must not contain a password")


@dataclass
class SavedMachine:
    """One saved SSH machine (a profile of the catalog)."""

    id: str
    label: str
    target: str
    session: str
    enabled: bool = True
    windows_desktop: bool = False

    def validate(self) -> None:
        """Herdr's per-profile checks, in its order."""
        parse_profile_id(self.id)
        validate_label(self.label)
        validate_target(self.target)
        try:
            validate_session_name(self.session)
        except SessionNameError as err:
            raise CatalogError(str(err)) from None

    def to_json(self) -> dict[str, Any]:
        """The stored form, fields in Herdr's order."""
        return {name: getattr(self, name) for name in _PROFILE_FIELDS}


@dataclass
class EndpointCatalog:
    """The catalog: profiles plus the selection merged from ``endpoint-selection.json``."""

    ssh: list[SavedMachine] = field(default_factory=list)
    selected_profile: str | None = None
    version: int = CATALOG_VERSION

    # -- queries --------------------------------------------------------------------------

    def find(self, profile_id: str) -> SavedMachine | None:
        """The profile with this exact id."""
        return next((profile for profile in self.ssh if profile.id == profile_id), None)

    # -- changes (each validates as Herdr does; the caller stores) --------------------------

    def add(
        self, label: str, target: str, session: str, windows_desktop: bool = False
    ) -> SavedMachine:
        """Add a new enabled profile with a fresh id."""
        if len(self.ssh) >= MAX_PROFILES:
            raise CatalogError(f"at most {MAX_PROFILES} SSH endpoints can be saved")
        profile = SavedMachine(generate_profile_id(), label, target, session, True, windows_desktop)
        profile.validate()
        self.ssh.append(profile)
        return profile

    def rename(self, profile_id: str, label: str) -> bool:
        """Relabel a profile; ``False`` when there is none with this id."""
        profile = self.find(profile_id)
        if profile is None:
            return False
        renamed = SavedMachine(**profile.to_json())
        renamed.label = label
        renamed.validate()
        profile.label = label
        return True

    def remove(self, profile_id: str) -> bool:
        """Remove a profile (and the selection if it pointed there)."""
        before = len(self.ssh)
        self.ssh = [profile for profile in self.ssh if profile.id != profile_id]
        if self.selected_profile == profile_id:
            self.selected_profile = None
        return len(self.ssh) != before

    def set_enabled(self, profile_id: str, enabled: bool) -> bool:
        """Enable or disable a profile (disabling clears a selection pointing there)."""
        profile = self.find(profile_id)
        if profile is None:
            return False
        profile.enabled = enabled
        if not enabled and self.selected_profile == profile_id:
            self.selected_profile = None
        return True

    def validate(self) -> None:
        """Herdr's whole-catalog checks."""
        if self.version != CATALOG_VERSION:
            raise CatalogError(
                f"unsupported endpoint catalog version {self.version}; expected {CATALOG_VERSION}"
            )
        if len(self.ssh) > MAX_PROFILES:
            raise CatalogError(f"endpoint catalog contains more than {MAX_PROFILES} SSH profiles")
        seen: set[str] = set()
        for profile in self.ssh:
            profile.validate()
            if profile.id in seen:
                raise CatalogError(f"duplicate endpoint profile id {profile.id}")
            seen.add(profile.id)
        if self.selected_profile is not None and not any(
            p.id == self.selected_profile and p.enabled for p in self.ssh
        ):
            raise CatalogError("selected SSH endpoint is absent or disabled in the catalog")

    def to_json(self) -> dict[str, Any]:
        """The stored form: ``version``, ``selected_profile`` when set, ``ssh``."""
        out: dict[str, Any] = {"version": self.version}
        if self.selected_profile is not None:
            out["selected_profile"] = self.selected_profile
        out["ssh"] = [profile.to_json() for profile in self.ssh]
        return out

    # -- files ------------------------------------------------------------------------------

    @classmethod
    def load(cls, env: Mapping[str, str]) -> EndpointCatalog:
        """The catalog with the selection merged in (``herdr machine`` commands)."""
        catalog = cls.load_profiles(env)
        selected = _load_selection(selection_path(env))
        if selected is not None and any(p.id == selected and p.enabled for p in catalog.ssh):
            catalog.selected_profile = selected
        return catalog

    @classmethod
    def load_profiles(cls, env: Mapping[str, str]) -> EndpointCatalog:
        """The catalog file alone (``--machine`` ignores the TUI's selection)."""
        path = catalog_path(env)
        text = _read_private(path, "endpoint catalog")
        if text is None:
            return cls()
        data = _decode(text, "stored endpoint catalog is invalid")
        catalog = _catalog_from_json(data)
        catalog.validate()
        return catalog

    def store(self, env: Mapping[str, str]) -> None:
        """Validate and write the catalog atomically and privately."""
        self.validate()
        content = json.dumps(self.to_json(), indent=2, ensure_ascii=False).encode()
        _store_private(catalog_path(env), content, "endpoint catalog")

    def store_selection(self, env: Mapping[str, str]) -> None:
        """Write ``endpoint-selection.json`` with the current selection."""
        self.validate()
        body = {"version": SELECTION_VERSION, "selected_profile": self.selected_profile}
        content = json.dumps(body, indent=2).encode()
        _store_private(selection_path(env), content, "endpoint selection")


def catalog_path(env: Mapping[str, str]) -> Path:
    """``<config dir>/state/client/endpoints.json`` for ``env``."""
    return Path(config_dir_str(env)) / "state" / "client" / "endpoints.json"


def selection_path(env: Mapping[str, str]) -> Path:
    """``<config dir>/state/client/endpoint-selection.json`` for ``env``."""
    return catalog_path(env).with_name("endpoint-selection.json")


# -- decoding ---------------------------------------------------------------------------------


def _decode(text: str, prefix: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as err:
        raise CatalogError(f"{prefix}: {getattr(err, 'msg', err)}") from None


def _invalid(detail: str) -> CatalogError:
    return CatalogError(f"stored endpoint catalog is invalid: {detail}")


def _check_fields(
    data: Any, allowed: tuple[str, ...], required: tuple[str, ...], what: str
) -> None:
    if not isinstance(data, dict):
        raise _invalid(f"invalid type: expected {what}")
    for name in data:
        if name not in allowed:
            expected = ", ".join(f"`{n}`" for n in allowed)
            raise _invalid(f"unknown field `{name}`, expected one of {expected}")
    for name in required:
        if name not in data:
            raise _invalid(f"missing field `{name}`")


def _typed(data: dict[str, Any], name: str, kind: type, what: str) -> Any:
    value = data[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _invalid(f"invalid type for `{name}`: expected {what}")
    return value


def _catalog_from_json(data: Any) -> EndpointCatalog:
    _check_fields(data, _CATALOG_FIELDS, ("version",), "struct EndpointCatalog")
    version = _typed(data, "version", int, "u32")
    if version < 0 or version > 0xFFFFFFFF:
        raise _invalid("invalid value for `version`: expected u32")
    selected = data.get("selected_profile")
    if selected is not None:
        if not isinstance(selected, str):
            raise _invalid("invalid type for `selected_profile`: expected a profile id")
        try:
            parse_profile_id(selected)
        except CatalogError as err:
            raise _invalid(str(err)) from None
    raw_profiles = data.get("ssh", [])
    if not isinstance(raw_profiles, list):
        raise _invalid("invalid type for `ssh`: expected a sequence")
    profiles = []
    for raw in raw_profiles:
        _check_fields(raw, _PROFILE_FIELDS, _PROFILE_FIELDS[:5], "struct SavedSshEndpoint")
        for name in ("id", "label", "target", "session"):
            _typed(raw, name, str, "a string")
        _typed(raw, "enabled", bool, "a boolean")
        if "windows_desktop" in raw:
            _typed(raw, "windows_desktop", bool, "a boolean")
        try:
            parse_profile_id(raw["id"])
        except CatalogError as err:
            raise _invalid(str(err)) from None
        profiles.append(
            SavedMachine(
                raw["id"],
                raw["label"],
                raw["target"],
                raw["session"],
                raw["enabled"],
                raw.get("windows_desktop", False),
            )
        )
    catalog = EndpointCatalog(profiles, selected, version)
    # Herdr's catalog check before the count check: version first, as in `validate`.
    return catalog


def _load_selection(path: Path) -> str | None:
    """The selected profile id, or ``None`` for Local (any problem also means Local)."""
    try:
        text = _read_private(path, "endpoint selection")
        if text is None:
            return None
        data = _decode(text, "stored endpoint selection is invalid")
        _check_fields(data, _SELECTION_FIELDS, _SELECTION_FIELDS, "struct EndpointSelection")
        if data["version"] != SELECTION_VERSION:
            return None
        selected = data["selected_profile"]
        return selected if isinstance(selected, str) else None
    except CatalogError:
        return None  # Herdr logs a warning and uses Local


# -- private files ------------------------------------------------------------------------------


def _read_private(path: Path, description: str) -> str | None:
    """The file's text, ``None`` when absent; refuses symlinks, foreign files and big files."""
    try:
        fd = open_own_file(
            path,
            lambda problem, _info: CatalogError(f"failed to open {description} {path}: {problem}"),
            forbidden=0,  # the kind and the owner: no mode rule here
        )
    except FileNotFoundError:
        return None
    except OSError as err:
        raise CatalogError(f"failed to open {description} {path}: {_os_message(err)}") from None
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(fd).st_size > MAX_CATALOG_BYTES:
            raise CatalogError(f"{description} exceeds the storage limit")
        content = handle.read(MAX_CATALOG_BYTES + 1)
    if len(content) > MAX_CATALOG_BYTES:
        raise CatalogError(f"{description} exceeds the storage limit")
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        raise CatalogError(f"stored {description} is invalid: invalid UTF-8") from None


def _os_message(err: OSError) -> str:
    return f"{os.strerror(err.errno)} (os error {err.errno})" if err.errno else str(err)


def _store_private(path: Path, content: bytes, description: str) -> None:
    """Herdr's ``store_private_json``: private temp file, fsync, rename, fsync the directory."""
    if len(content) > MAX_CATALOG_BYTES:
        raise CatalogError(f"{description} exceeds the storage limit")
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as err:
        raise CatalogError(f"failed to create {description} directory: {err}") from None
    try:
        info = path.lstat()
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            raise CatalogError(f"refusing to replace {description} through a non-file path")
    try:
        write_atomic(path, content, create_parent=False, sync_dir=True, own_link_parent=True)
    except OSError as err:
        raise CatalogError(f"failed to write {description}: {err}") from None
