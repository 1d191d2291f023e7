"""`herdr status [server|client] [--json]`: what the client is and what the server says.

The status commands ping without the protocol guard (they exist to diagnose mismatches)
and report a missing or refused socket as ``not running`` with exit 0. The JSON forms are
Rust structs in real Herdr, so their keys keep declaration order rather than being sorted.
Herdr 0.9 added ``endpoint_compatible`` to the server object.
"""

from __future__ import annotations

import os
import sys

from ..client import Context, PingStatus, client_protocol
from ..errors import ServerNotRunningError
from ..output import dumps, write_err, write_out

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["ENDPOINT_PROTOCOL_GENERATION", "run"]

#: The client-endpoint generation this CLI speaks (Herdr 0.9 servers report theirs in
#: ``capabilities.endpoint_protocol_generation``).
ENDPOINT_PROTOCOL_GENERATION = 1
#: The update channel real Herdr reads from config.toml; the simulator has no config file.
_CHANNEL = "stable"


def _help() -> None:
    for line in (
        "herdr status commands:",
        "  herdr status [--json]         show local client and running server status",
        "  herdr status server [--json]  show running server status",
        "  herdr status client [--json]  show local client binary status",
    ):
        write_err(line)


def _client_version() -> str:
    from herdr_sim._version import HERDR_VERSION

    return HERDR_VERSION


def _binary() -> str:
    if not (sys.argv and sys.argv[0]):
        return "unknown"
    # What Path(...).resolve() returns, without importing pathlib.
    return os.path.realpath(sys.argv[0])


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr status``."""
    first = args[0] if args else None
    json_out = False
    if first is None:
        scope = "full"
    elif first == "--json" and len(args) == 1:
        scope, json_out = "full", True
    elif first in ("server", "client"):
        if len(args) == 1:
            scope = first
        elif len(args) == 2 and args[1] == "--json":
            scope, json_out = first, True
        else:
            write_err(f"usage: herdr status {first} [--json]")
            return 2
    elif first in ("help", "--help", "-h"):
        _help()
        return 0 if len(args) == 1 else 2
    else:
        _help()
        return 2
    if scope == "client":
        _print_client(ctx, json_out)
        return 0
    server = _read_server(ctx)
    if scope == "server":
        if json_out:
            write_out(dumps(_server_json(ctx, server), sort_keys=False) + "\n")
        else:
            write_out(_server_text(ctx, server, ""))
        return 0
    if json_out:
        body = {
            "client": _client_json(ctx),
            "server": _server_json(ctx, server),
            "update": {"restart_needed": _restart_needed(server)},
        }
        write_out(dumps(body, sort_keys=False) + "\n")
        return 0
    needed = _restart_needed(server)
    text = (
        "client:\n"
        f"  version: {_client_version()}\n"
        f"  channel: {_CHANNEL}\n"
        f"  protocol: {client_protocol()}\n"
        "\n"
        "server:\n"
        f"{_server_text(ctx, server, '  ')}"
        "\n"
        "update:\n"
        f"  restart_needed: {'unknown' if needed is None else ('yes' if needed else 'no')}\n"
    )
    write_out(text)
    return 0


def _read_server(ctx: Context) -> PingStatus | None:
    """Ping the server; ``None`` when nothing listens (other failures propagate)."""
    try:
        return ctx.ping()
    except ServerNotRunningError:
        return None


def _restart_needed(server: PingStatus | None) -> bool | None:
    if server is None:
        return False
    if server.version is None:
        return None
    return server.version != _client_version()


def _compatible(server: PingStatus) -> bool:
    return server.protocol == client_protocol()


def _endpoint_compatible(server: PingStatus) -> bool:
    capabilities = server.capabilities if isinstance(server.capabilities, dict) else {}
    return capabilities.get("endpoint_protocol_generation") == ENDPOINT_PROTOCOL_GENERATION


def _server_text(ctx: Context, server: PingStatus | None, indent: str) -> str:
    if server is None:
        return f"{indent}status: not running\n{indent}socket: {ctx.socket.socket_path}\n"
    return (
        f"{indent}status: running\n"
        f"{indent}version: {server.version if server.version is not None else 'unknown'}\n"
        f"{indent}protocol: {server.protocol}\n"
        f"{indent}compatible: {'yes' if _compatible(server) else 'no'}\n"
        f"{indent}socket: {ctx.socket.socket_path}\n"
    )


def _server_json(ctx: Context, server: PingStatus | None) -> dict[str, Any]:
    if server is None:
        return {
            "status": "not_running",
            "running": False,
            "version": None,
            "protocol": None,
            "capabilities": None,
            "compatible": None,
            "endpoint_compatible": None,
            "socket": ctx.socket.socket_path,
            "session": ctx.socket.session,
            "restart_needed": False,
        }
    capabilities = server.capabilities
    return {
        "status": "running",
        "running": True,
        "version": server.version,
        "protocol": server.protocol,
        "capabilities": (
            {
                "live_handoff": capabilities.get("live_handoff") is True,
                "detached_server_daemon": capabilities.get("detached_server_daemon") is True,
            }
            if isinstance(capabilities, dict)
            else None
        ),
        "compatible": _compatible(server),
        "endpoint_compatible": _endpoint_compatible(server),
        "socket": ctx.socket.socket_path,
        "session": ctx.socket.session,
        "restart_needed": _restart_needed(server),
    }


def _client_json(ctx: Context) -> dict[str, Any]:
    return {
        "version": _client_version(),
        "channel": _CHANNEL,
        "protocol": client_protocol(),
        "binary": _binary(),
        "session": ctx.socket.session,
    }


def _print_client(ctx: Context, json_out: bool) -> None:
    if json_out:
        write_out(dumps(_client_json(ctx), sort_keys=False) + "\n")
        return
    write_out(
        f"version: {_client_version()}\n"
        f"channel: {_CHANNEL}\n"
        f"protocol: {client_protocol()}\n"
        f"binary: {_binary()}\n"
    )
