"""``ping`` and ``session.snapshot`` (``server.stop`` is handled by the socket server)."""

from __future__ import annotations

from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.params import Obj

CAPABILITIES = {
    "live_handoff": False,
    "endpoint_protocol_generation": 1,
    "detached_server_daemon": True,
    "health_check": False,
    "surface_interest": False,
}


@method("ping", Obj(fields={}), result="pong", mutates=False)
async def ping(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Version, protocol number and capabilities (both configurable for mismatch tests)."""
    return {
        "type": "pong",
        "version": rt.config.version,
        "protocol": rt.config.protocol,
        "capabilities": dict(CAPABILITIES),
    }


@method("server.stop", Obj(fields={}), result="ok", mutates=False)
async def stop(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Answer ``ok``; the server then stops (see ``Server.dispatch``)."""
    rt.stopping = True
    return {"type": "ok"}


@method("session.snapshot", Obj(fields={}), result="session_snapshot", mutates=False)
async def snapshot(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Everything at once: workspaces, tabs, panes, one layout per tab, agents."""
    session = rt.session
    focused = session.focused_pane()
    snap: dict[str, Any] = {"version": rt.config.version, "protocol": rt.config.protocol}
    if focused is not None:
        snap["focused_workspace_id"] = focused.workspace.public_id
        snap["focused_tab_id"] = focused.tab_id
        snap["focused_pane_id"] = focused.pane_id
    snap["workspaces"] = [rt.workspace_view(ws) for ws in session.workspaces]
    snap["tabs"] = [rt.tab_view(ws, tab) for ws in session.workspaces for tab in ws.tabs]
    snap["panes"] = [rt.pane_view(ref) for ref in session.all_panes()]
    snap["layouts"] = [rt.layout_view(ws, tab) for ws in session.workspaces for tab in ws.tabs]
    snap["agents"] = [rt.agents.view(ref) for ref in rt.agent_panes()]
    return {"type": "session_snapshot", "snapshot": snap}
