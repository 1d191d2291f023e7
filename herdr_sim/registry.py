"""The method registry: every wire method name, its parameter spec and its handler.

Handlers register with :func:`method` (a streaming one adds its stream with :func:`streams`);
:func:`herdr_sim.methods.load_all` imports them all, and whoever builds the server hands it
that table. The server validates params centrally against the spec and hands handlers a
checked ``dict``. Protocol-22 methods the simulator does not
implement are listed in :data:`UNSUPPORTED` with the reason, and answer a clear
``not_supported_by_simulator`` error instead of a fake success. The list of all protocol-22
method names lives here too, so a test can compare it with the published schema.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .params import Obj
from .protocol import METHODS as _PROTOCOL_METHODS

if TYPE_CHECKING:
    from .runtime import Runtime

Handler = Callable[["Runtime", dict[str, Any]], Awaitable[dict[str, Any]]]
#: ``send(line, kind)``: write one line to a streaming connection (kind "response" for its
#: answer or "event")
Send = Callable[[dict[str, Any], str], Awaitable[None]]
#: A streaming method (``events.subscribe``): ``stream(rt, request_id, params, reader, send)``
#: answers, then writes lines until the client or the server goes away.
StreamHandler = Callable[
    ["Runtime", str, dict[str, Any], asyncio.StreamReader, Send], Awaitable[None]
]


@dataclass(frozen=True)
class MethodEntry:
    """One registered method."""

    name: str
    params: Obj
    handler: Handler
    result_type: str
    summary: str
    #: Methods that may change focus are followed by the focus-event check (§6.4).
    mutates: bool
    #: a streaming method's server side (the connection stays open); None for the others
    stream: StreamHandler | None = None


METHODS: dict[str, MethodEntry] = {}

#: The id of the request a handler is answering (set by the server around each handler;
#: Herdr uses it as e.g. a plugin action's ``correlation_id``).
current_request_id: contextvars.ContextVar[str] = contextvars.ContextVar(
    "current_request_id", default=""
)


def method(
    name: str, params: Obj, *, result: str, mutates: bool = True
) -> Callable[[Handler], Handler]:
    """Register ``handler`` as the implementation of wire method ``name``."""

    def register(handler: Handler) -> Handler:
        found = METHODS.get(name)
        where = (handler.__module__, handler.__qualname__)
        if found is not None and (found.handler.__module__, found.handler.__qualname__) != where:
            raise RuntimeError(f"method {name} registered twice")
        # the same handler again is its module re-imported (pytester's inline runs drop
        # modules from sys.modules between runs): the new function replaces the old one
        doc = (handler.__doc__ or "").strip().splitlines()
        stream = found.stream if found is not None else None
        METHODS[name] = MethodEntry(
            name, params, handler, result, doc[0] if doc else "", mutates, stream
        )
        return handler

    return register


def streams(name: str) -> Callable[[StreamHandler], StreamHandler]:
    """Register ``stream`` as the streaming side of method ``name`` (registered already)."""

    def register(stream: StreamHandler) -> StreamHandler:
        METHODS[name] = replace(METHODS[name], stream=stream)
        return stream

    return register


#: Every method name of protocol 22, in the schema's order (from :mod:`herdr_sim.protocol`).
PROTOCOL_22_METHODS: tuple[str, ...] = _PROTOCOL_METHODS

_UI = "needs an attached TUI client, which the simulator does not have"

#: Protocol methods the simulator knowingly does not implement, with the reason.
UNSUPPORTED: dict[str, str] = {
    "server.live_handoff": "live binary hand-off between server versions has no meaning for "
    "a simulator",
    "server.reload_config": "the simulator has no Herdr config file",
    "product_announcement.dismiss": _UI,
    "release_notes.dismiss": _UI,
    "command.invoke": _UI,
    "client.window_title.set": _UI,
    "client.window_title.clear": _UI,
    "client_shell.surface.set": _UI,
    "workspace.move_block": "sidebar block moves are a TUI feature; workspace.move is supported",
    "agent.view.set": _UI,
    "agent.view.clear": _UI,
    "pane.scroll": _UI,
    "pane.edit_scrollback": _UI,
    "pane.selection.read": _UI,
    "pane.copy_motion": _UI,
    "pane.copy_search": _UI,
    "pane.input.set": "right-click routing is a TUI input setting",
    "pane.link.activate": _UI,
    "pane.graphics.set": "terminal graphics are out of scope",
    "pane.graphics.clear": "terminal graphics are out of scope",
    "pane.graphics.info": "terminal graphics are out of scope",
    "popup.close": _UI,
    "integration.list": "installing agent integrations touches the user's agent configs",
    "integration.install": "installing agent integrations touches the user's agent configs",
    "integration.uninstall": "installing agent integrations touches the user's agent configs",
}
