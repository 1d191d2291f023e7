"""``_dsh_herdr_doctor``: one call that says whether Herdr is usable, and if not, why.

Herdr has no ``doctor`` command; this composes the checks the contract lists — version (the
server's ping: version, protocol), session (which Herdr session the socket belongs to: the
default one, a named one under ``sessions/NAME/``, or an override path, as Herdr resolves
it), workspaces (``workspace list``) and agents (``agent list``) — and stops at the first
blocking problem
(no server, an incompatible protocol) instead of piling errors on top of it. The ping is read
by :func:`~orchestrator.client.sync.pong_refusal`, as the client reads it: over the CLI that
includes ``running: false`` and a ``herdr`` executable that is not ``compatible`` with the
server (every later CLI command would fail ``protocol_mismatch``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.client.errors import TransportError
from orchestrator.client.sync import pong_refusal
from orchestrator.client.transports import default_socket_path
from orchestrator.client.types import Pong
from orchestrator.core.result import failure, from_exchange, from_transport_error
from orchestrator.core.tool import ToolContext

Runner = Callable[..., dict[str, Any]]
COMMAND = "herdr status server --json; herdr workspace list; herdr agent list"


def _ping(ctx: ToolContext) -> dict[str, Any]:
    try:
        exchange = ctx.client.execute("ping", {})
    except TransportError as exc:
        return from_transport_error(["herdr", "status", "server", "--json"], exc)
    return from_exchange(exchange)


def session_of(env: Mapping[str, str], socket_path: object) -> dict[str, Any]:
    """Which Herdr session the server that answered is: ``name`` (``default``, the named
    session, or None for a socket path given outright), ``override`` and the ``socket``."""
    path = Path(str(socket_path)) if socket_path is not None else default_socket_path(env)
    override = bool(env.get("HERDR_SOCKET_PATH")) or path != default_socket_path(
        {k: v for k, v in env.items() if k != "HERDR_SOCKET_PATH"}
    )
    name: str | None = None
    if path.name == "herdr.sock" and path.parent.parent.name == "sessions":
        name = path.parent.name
    elif not override:
        name = "default"
    return {"name": name, "override": override, "socket": str(path)}


def doctor(ctx: ToolContext, run: Runner) -> dict[str, Any]:
    """Run the checks; ``ok`` only when the server is up, compatible and answering."""
    ping = _ping(ctx)
    if not ping["ok"]:
        return {**ping, "command": COMMAND}
    pong = Pong.from_wire(dict(ping.get("data") or {}))
    where = ctx.client.transport
    path = getattr(getattr(where, "socket", where), "socket_path", None)
    refusal = pong_refusal(pong, path)
    server: dict[str, Any] = {
        "version": pong.raw.get("version"),
        "protocol": pong.protocol,
        "compatible": refusal is None,
        "transport": ping.get("transport"),
    }
    if refusal is not None:
        code, message = refusal
        extra = {"server": server} if code == "protocol_mismatch" else None
        return failure(COMMAND, code, message, exit_code=1, data=extra)
    workspaces = run(ctx, "workspace.list", {})
    agents = run(ctx, "agent.list", {})
    session = session_of(ctx.env, path)
    checks = [
        {"name": "server", "ok": True},
        {"name": "session", "ok": True, "session": session["name"]},
        {"name": "workspaces", "ok": workspaces["ok"], **_err(workspaces)},
        {"name": "agents", "ok": agents["ok"], **_err(agents)},
    ]
    ws_list: Sequence[Mapping[str, Any]] = (workspaces.get("data") or {}).get("workspaces", [])
    ag_list: Sequence[Mapping[str, Any]] = (agents.get("data") or {}).get("agents", [])
    data: dict[str, Any] = {
        "server": server,
        "session": session,
        "workspaces": [
            {k: w.get(k) for k in ("workspace_id", "label", "agent_status")} for w in ws_list
        ],
        "agents": [
            {k: a.get(k) for k in ("name", "agent", "pane_id", "agent_status")} for a in ag_list
        ],
        "checks": checks,
    }
    ok = all(check["ok"] for check in checks)
    result: dict[str, Any] = {"ok": ok, "command": COMMAND, "exitCode": 0 if ok else 1}
    if not ok:
        failed = next(c for c in (workspaces, agents) if not c["ok"])
        result["errorCode"] = failed.get("errorCode")
    result["data"] = data
    return result


def _err(result: Mapping[str, Any]) -> dict[str, Any]:
    return {} if result["ok"] else {"errorCode": result.get("errorCode")}
