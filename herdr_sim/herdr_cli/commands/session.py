"""`herdr session list|stop|delete`: named sessions under the simulator's config directory.

These commands work on the filesystem and on the sockets directly, without the protocol
guard, as in Herdr. Their errors are ``{"error": {...}}`` objects *without* an ``id``.
``session attach`` starts the TUI, which the simulator does not have; the application
intercepts it before this module runs (Herdr does the same, it rewrites the command line).
"""

from __future__ import annotations

import os
import shutil

from orchestrator.client.socket_paths import (
    DEFAULT_SESSION_NAME,
    SessionNameError,
    child_path,
    client_socket_str_for,
    config_dir_str,
    normalize_session_name,
    session_dir_str,
    session_socket_str,
    validate_session_name,
)

from ..client import Context
from ..errors import UsageError
from ..output import dumps, write_err, write_out
from ._common import HELP_WORDS, subcommand, unknown_subcommand
from .server import StopFailed, is_running_at, stop_sockets

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["run", "session_info"]


_HELP = (
    "herdr session commands:",
    "  herdr session list [--json]",
    "  herdr session attach <name>",
    "  herdr session stop <name> [--json]",
    "  herdr session delete <name> [--json]",
    "  use 'default' as <name> to target the default session for stop",
)


def session_info(ctx: Context, name: str | None) -> dict[str, Any]:
    """Herdr's ``SessionInfo`` for session ``name`` (``None``: the default session)."""
    socket = session_socket_str(name, ctx.env)
    return {
        "name": name if name is not None else DEFAULT_SESSION_NAME,
        "default": name is None,
        "running": is_running_at(socket),
        "socket_path": socket,
        "session_dir": session_dir_str(name, ctx.env),
    }


def _error(code: str, message: str) -> int:
    write_err(dumps({"error": {"code": code, "message": message}}))
    return 1


def _name_and_json(args: list[str], usage: str) -> tuple[str, bool]:
    name: str | None = None
    as_json = False
    for arg in args:
        if arg == "--json":
            as_json = True
        elif name is None:
            name = arg
        else:
            raise UsageError(usage)
    if name is None:
        raise UsageError(usage)
    return name, as_json


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr session <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    if sub == "list":
        if rest not in ([], ["--json"]):
            raise UsageError("usage: herdr session list [--json]")
        return _list(ctx, bool(rest))
    if sub == "attach":
        write_err("usage: herdr session attach <name>")
        return 0 if rest[:1] and rest[0] in HELP_WORDS else 2
    if sub == "stop":
        name, as_json = _name_and_json(rest, "usage: herdr session stop <name> [--json]")
        return _stop(ctx, name, as_json)
    if sub == "delete":
        name, as_json = _name_and_json(rest, "usage: herdr session delete <name> [--json]")
        return _delete(ctx, name, as_json)
    return unknown_subcommand(sub, _HELP)


def _list(ctx: Context, as_json: bool) -> int:
    names: list[str] = []
    try:
        with os.scandir(child_path(config_dir_str(ctx.env), "sessions")) as scan:
            entries = list(scan)
    except FileNotFoundError:
        entries = []
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False) or entry.name == DEFAULT_SESSION_NAME:
            continue
        try:
            validate_session_name(entry.name)
        except SessionNameError:
            continue
        names.append(entry.name)
    sessions = [session_info(ctx, None)] + [session_info(ctx, name) for name in sorted(names)]
    if as_json:
        write_out(dumps({"sessions": sessions}) + "\n")
        return 0
    lines = [f"{'name':<20} {'status':<8} {'directory':<48} socket"]
    for info in sessions:
        status = "running" if info["running"] else "stopped"
        lines.append(
            f"{info['name']:<20} {status:<8} {info['session_dir']:<48} {info['socket_path']}"
        )
    write_out("".join(line + "\n" for line in lines))
    return 0


def _stop(ctx: Context, raw_name: str, as_json: bool) -> int:
    try:
        name = normalize_session_name(raw_name)
    except SessionNameError as err:
        return _error("invalid_session_name", str(err))
    socket = session_socket_str(name, ctx.env)
    watched = [socket, client_socket_str_for(name, ctx.env)]
    label = f"session {name if name is not None else DEFAULT_SESSION_NAME}"
    try:
        stop_sockets(socket, watched, label)
    except StopFailed as err:
        return _error("session_stop_failed", str(err))
    info = session_info(ctx, name)
    if as_json:
        write_out(dumps({"stopped": True, "session": info}) + "\n")
    else:
        write_out(f"stopped session {info['name']}\n")
    return 0


def _delete(ctx: Context, name: str, as_json: bool) -> int:
    if name == DEFAULT_SESSION_NAME:
        return _error("session_delete_failed", "deleting the default session is not supported")
    try:
        validate_session_name(name)
    except SessionNameError as err:
        return _error("session_delete_failed", str(err))
    if is_running_at(session_socket_str(name, ctx.env)):
        return _error(
            "session_delete_failed", f"session {name} is running; stop it before deleting"
        )
    info = session_info(ctx, name)
    try:
        shutil.rmtree(session_dir_str(name, ctx.env))
    except FileNotFoundError:
        pass
    except OSError as err:
        return _error("session_delete_failed", str(err))
    if as_json:
        write_out(dumps({"deleted": True, "session": info}) + "\n")
    else:
        write_out(f"deleted session {info['name']}\n")
    return 0
