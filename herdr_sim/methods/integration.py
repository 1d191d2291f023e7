"""``integration.list/install/uninstall``: the simulator's own agent integrations.

Herdr answers these from the server process (``src/app/api/integrations.rs``): install and
uninstall return the messages of ``src/integration/actions.rs`` or fail with
``integration_install_failed`` / ``integration_uninstall_failed`` and the error's text. The
simulator writes into its panes' HOME (the fakes' sandbox while they are on,
herdr_sim/services/agent_home.py), never the user's; see herdr_sim/integrations/.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Enum, F, Obj

from ..integrations import TARGETS, install, integration_list, uninstall
from .specs import EMPTY

TARGET = Obj(fields={"target": F(Enum(values=tuple(t.name for t in TARGETS)), required=True)})


def _env(rt: Runtime) -> dict[str, str]:
    """The panes' environment: their HOME, and a PATH with the fake agents on it."""
    env = rt.pane_base_env()
    env["PATH"] = rt.with_fake_agents(env.get("PATH", ""))
    return env


@method("integration.list", EMPTY, result="integration_list", mutates=False)
async def list_integrations(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Every target with its label, command, availability and installed state."""
    listed = await asyncio.to_thread(integration_list, _env(rt))
    return {"type": "integration_list", "integrations": listed}


@method("integration.install", TARGET, result="integration_install", mutates=False)
async def install_integration(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Write the target's integration into the panes' HOME."""
    try:
        messages = await asyncio.to_thread(install, p["target"], _env(rt), _server_home())
    except OSError as exc:
        raise HerdrError(errors.INTEGRATION_INSTALL_FAILED, _text(exc)) from None
    return {"type": "integration_install", "target": p["target"], "details": {"messages": messages}}


@method("integration.uninstall", TARGET, result="integration_uninstall", mutates=False)
async def uninstall_integration(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Remove the target's integration and its config edits from the panes' HOME."""
    try:
        messages = await asyncio.to_thread(uninstall, p["target"], _env(rt), _server_home())
    except OSError as exc:
        raise HerdrError(errors.INTEGRATION_UNINSTALL_FAILED, _text(exc)) from None
    return {
        "type": "integration_uninstall",
        "target": p["target"],
        "details": {"messages": messages},
    }


def _server_home() -> tuple[str | None]:
    """The simulator process's own HOME: the user's, never written to (the panes' HOME is
    the fakes' sandbox, or the server's HOME when the fakes are off)."""
    return (os.environ.get("HOME"),)


def _text(exc: OSError) -> str:
    """An error's message as Rust's ``io::Error`` prints it (``strerror (os error N)``)."""
    if exc.errno is not None and exc.strerror:
        return f"{exc.strerror} (os error {exc.errno})"
    return str(exc)
