"""The methods a Herdr 0.9 client shell sends, answered as Herdr answers a plain socket client.

Herdr 0.9 draws its UI in client shells that talk to the server over a client-shell endpoint;
``product_announcement.dismiss``, ``release_notes.dismiss``, ``command.invoke`` and
``client_shell.surface.set`` are what a shell sends when its user closes the announcement or
the "what's new" notes, runs a command from its palette or key bindings, or takes over pane
presentation. The socket answers them too, and the simulator, like a Herdr nobody attached
to, answers them as Herdr answers a socket client (sources and evidence:
``docs/simulator/fidelity.md``):

* ``product_announcement.dismiss {version, id}``: the current announcement is the one Herdr
  0.8.2 would show (``src/product_announcements.rs`` ``load_unseen_for_current_version``):
  ``latest`` of ``product-announcements.json`` in the state directory, for this server's
  version, whose ``"<version>/<id>"`` is not in ``seen``. Naming it marks it seen there
  (``mark_seen``) and answers ``ok``; anything else is ``stale_announcement``.
* ``release_notes.dismiss {version}``: the current notes are ``release-notes.json`` next to
  ``config.toml`` with a non-blank body (``src/release_notes.rs`` ``load_latest``). Naming
  their version answers ``ok`` and, for this server's own version, clears
  ``show_on_startup`` (``mark_current_version_seen``; notes of a newer version are a preview
  and stay unseen); anything else is ``stale_release_notes``.
* ``command.invoke``: ``command_id`` comes from a client shell's projection of the
  configured custom commands; no shell holds one here, so every id is
  ``command_not_found``.
* ``client_shell.surface.set``: only a client-shell endpoint may hold the surface lease; a
  socket connection is ``connection_local_only`` (Herdr checks it in ``src/api/server.rs``
  before the app sees the request).

The files live under the simulator's config directory (``herdr_cli.paths.config_dir`` of its
environment, its state directory inside it as for plugins), never the user's
``~/.config/herdr`` or ``~/.local/state/herdr``; a file another user owns or can write is
treated as absent and never rewritten.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from herdr_sim.herdr_plugins.registry import simulator_state_dir
from herdr_sim.persist.session import write_json
from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Bool, F, Int, Nullable, Obj
from orchestrator.client import socket_paths as paths
from orchestrator.client.file_trust.ownership import (
    UntrustedPathError,
    check_directory,
    read_own_file,
)
from orchestrator.client.protocol import RUST_WHITESPACE

from .specs import OPT_STR, OPT_U64, REQ_STR

__all__ = ["announcements_path", "release_notes_path"]

#: Herdr 0.9.1's messages for these refusals (see docs/simulator/fidelity.md)
_STALE_ANNOUNCEMENT = "the product announcement is no longer current"
_STALE_RELEASE_NOTES = "the release notes are no longer current"
_MANIFEST_STALE = "custom command manifest is stale; reload configuration"

#: ``PRODUCT_ANNOUNCEMENTS_PATH``, in the state directory
ANNOUNCEMENTS_FILE = "product-announcements.json"
#: ``PENDING_RELEASE_NOTES_PATH``, next to ``config.toml``
RELEASE_NOTES_FILE = "release-notes.json"

#: ``PaneTextPoint``
_TEXT_POINT = Obj(fields={"row": F(Int(32), required=True), "col": F(Int(16), required=True)})
#: ``PaneSelectionReadParams``: client-owned selection coordinates
_SELECTION = Obj(
    fields={
        "pane_id": REQ_STR,
        "anchor": F(_TEXT_POINT, required=True),
        "cursor": F(_TEXT_POINT, required=True),
        "content_revision": OPT_U64,
    }
)


def announcements_path(config_dir: Path) -> Path:
    """Herdr's ``product_announcements::store_path``: ``product-announcements.json`` in the
    state directory."""
    return simulator_state_dir(config_dir) / ANNOUNCEMENTS_FILE


def release_notes_path(config_dir: Path) -> Path:
    """Herdr's ``release_notes::pending_path`` (``release-notes.json`` beside ``config.toml``)."""
    return config_dir / RELEASE_NOTES_FILE


def _load(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; None when missing, unreadable, untrusted or not an object
    (Herdr's ``load_store_from_path``/``load_stored_from_path`` read all of these as none).
    A file in a directory others could write to is untrusted too: it is rewritten there."""
    try:
        raw = read_own_file(path, "state file")
        if raw is not None:
            check_directory(path.parent, "state directory")
    except (UntrustedPathError, OSError):
        return None
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _strings(value: Any, *keys: str) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(key), str) for key in keys)


@method(
    "product_announcement.dismiss",
    Obj(fields={"version": REQ_STR, "id": REQ_STR}),
    result="ok",
    mutates=False,
)
async def dismiss_announcement(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Mark the current product announcement seen; any other is stale."""
    path = announcements_path(paths.config_dir(rt.config.base_env))
    store = _load(path)
    latest = store.get("latest") if store is not None else None
    seen = store.get("seen", []) if store is not None else []
    if (
        store is None
        or not _strings(latest, "version", "id", "title", "body")
        or not isinstance(seen, list)
        or not all(isinstance(key, str) for key in seen)
    ):
        raise HerdrError(errors.STALE_ANNOUNCEMENT, _STALE_ANNOUNCEMENT)
    assert isinstance(latest, dict)
    key = f"{latest['version']}/{latest['id']}"
    current = latest["version"] == rt.config.version and key not in seen
    if not current or (p["version"], p["id"]) != (latest["version"], latest["id"]):
        raise HerdrError(errors.STALE_ANNOUNCEMENT, _STALE_ANNOUNCEMENT)
    write_json(path, {**store, "seen": sorted({*seen, key})})
    return {"type": "ok"}


@method(
    "release_notes.dismiss",
    Obj(fields={"version": REQ_STR}),
    result="ok",
    mutates=False,
)
async def dismiss_release_notes(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Dismiss the current release notes (seen if they are this version's); others are stale."""
    path = release_notes_path(paths.config_dir(rt.config.base_env))
    stored = _load(path)
    if (
        stored is None
        or not _strings(stored, "version", "body")
        or not isinstance(stored.get("show_on_startup", True), bool)
        or not stored["body"].strip(RUST_WHITESPACE)
        or stored["version"] != p["version"]
    ):
        raise HerdrError(errors.STALE_RELEASE_NOTES, _STALE_RELEASE_NOTES)
    if stored["version"] == rt.config.version and stored.get("show_on_startup", True):
        write_json(path, {**stored, "show_on_startup": False})
    return {"type": "ok"}


@method(
    "command.invoke",
    Obj(
        fields={
            "command_id": REQ_STR,
            "pane_id": OPT_STR,
            "selection": F(Nullable(_SELECTION)),
            "tab_id": OPT_STR,
            "workspace_id": OPT_STR,
        }
    ),
    result="ok",
    mutates=False,
)
async def invoke_command(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Run a command of a client shell's projection; none exists, so no id is known."""
    raise HerdrError(errors.COMMAND_NOT_FOUND, _MANIFEST_STALE)


@method(
    "client_shell.surface.set",
    Obj(fields={"active": F(Bool(), required=True)}),
    result="client_shell_surface_set",
    mutates=False,
)
async def surface_set(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Take or release the surface lease: only a client-shell endpoint may."""
    raise HerdrError(
        errors.CONNECTION_LOCAL_ONLY,
        "client_shell.surface.set is only available through a client shell endpoint",
    )
