"""``_dsh_herdr_doctor``: one call that says whether Herdr is usable, and if not, why.

Herdr has no ``doctor`` command; this composes three reads — the server's ping (version,
protocol), ``workspace list`` and ``agent list`` — and stops at the first blocking problem
(no server, an incompatible protocol) instead of piling errors on top of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from orchestrator.client.errors import TransportError
from orchestrator.client.sync import PROTOCOL, incompatible_message
from orchestrator.client.transports import not_running_message
from orchestrator.tools.result import failure, from_exchange, from_transport_error
from orchestrator.tools.tool import ToolContext

Runner = Callable[..., dict[str, Any]]
COMMAND = "herdr status server --json; herdr workspace list; herdr agent list"


def _ping(ctx: ToolContext) -> dict[str, Any]:
    try:
        exchange = ctx.client.execute("ping", {})
    except TransportError as exc:
        return from_transport_error(["herdr", "status", "server", "--json"], exc)
    return from_exchange(exchange)


def doctor(ctx: ToolContext, run: Runner) -> dict[str, Any]:
    """Run the checks; ``ok`` only when the server is up, compatible and answering."""
    ping = _ping(ctx)
    if not ping["ok"]:
        return {**ping, "command": COMMAND}
    pong: Mapping[str, Any] = ping.get("data") or {}
    if pong.get("running") is False:
        where = ctx.client.transport
        path = getattr(getattr(where, "socket", where), "socket_path", "the Herdr socket")
        return failure(COMMAND, "server_not_running", not_running_message(path), exit_code=1)
    protocol = pong.get("protocol")
    server = {
        "version": pong.get("version"),
        "protocol": protocol,
        "compatible": protocol == PROTOCOL,
        "transport": ping.get("transport"),
    }
    if protocol != PROTOCOL:
        message = incompatible_message(
            protocol if isinstance(protocol, int) else None, str(pong.get("version"))
        )
        return failure(COMMAND, "protocol_mismatch", message, exit_code=1, data={"server": server})
    workspaces = run(ctx, "workspace.list", {})
    agents = run(ctx, "agent.list", {})
    checks = [
        {"name": "server", "ok": True},
        {"name": "workspaces", "ok": workspaces["ok"], **_err(workspaces)},
        {"name": "agents", "ok": agents["ok"], **_err(agents)},
    ]
    ws_list: Sequence[Mapping[str, Any]] = (workspaces.get("data") or {}).get("workspaces", [])
    ag_list: Sequence[Mapping[str, Any]] = (agents.get("data") or {}).get("agents", [])
    data = {
        "server": server,
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
