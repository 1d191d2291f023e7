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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from herdr_sim.wire.params import Obj
from orchestrator.client.protocol import METHODS as _PROTOCOL_METHODS

if TYPE_CHECKING:
    from herdr_sim.services.runtime import Runtime

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


#: Every method name of protocol 22, in the schema's order (from
#: :mod:`orchestrator.client.protocol`).
PROTOCOL_22_METHODS: tuple[str, ...] = _PROTOCOL_METHODS

#: Protocol methods the simulator knowingly does not implement, with the reason.
UNSUPPORTED: dict[str, str] = {
    "server.live_handoff": "live binary hand-off between server versions has no meaning for "
    "a simulator",
}
