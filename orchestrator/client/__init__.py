"""A Herdr client: socket, CLI and auto transports, typed results, an error hierarchy.

The public face (docs/orchestrator/client.md): :class:`HerdrClient` (sync, the tool layer's
client: operations, CLI-shaped exchanges, the protocol check), :class:`AsyncHerdrClient`,
the method-level :class:`WireClient` / :class:`AsyncWireClient` (envelopes, httpx-style
event hooks, an in-memory transport), and the error families (:class:`ClientError` →
:class:`HerdrError` for Herdr's refusals, :class:`TransportError` for the exchange itself).

Names resolve on first use: this package module stays import-light, so importing
``orchestrator.client.wire`` (as ``herdr_sim.client`` and the pytest plugin do) does not
pull in the transports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:
    from .aio import AsyncHerdrClient
    from .errors import (
        AgentNotReady,
        ClientError,
        ConnectFailed,
        HerdrError,
        IncompatibleServer,
        InvalidRequest,
        NotFound,
        ProtocolError,
        ServerNotRunning,
        ServerUnavailable,
        Timeout,
        TransportError,
    )
    from .sync import HerdrClient
    from .wire import AsyncWireClient, WireClient

_LAZY = {
    "HerdrClient": "sync",
    "AsyncHerdrClient": "aio",
    "WireClient": "wire",
    "AsyncWireClient": "wire",
    **dict.fromkeys(
        (
            "AgentNotReady",
            "ClientError",
            "ConnectFailed",
            "HerdrError",
            "IncompatibleServer",
            "InvalidRequest",
            "NotFound",
            "ProtocolError",
            "ServerNotRunning",
            "ServerUnavailable",
            "Timeout",
            "TransportError",
        ),
        "errors",
    ),
}

__all__ = [
    "AgentNotReady",
    "AsyncHerdrClient",
    "AsyncWireClient",
    "ClientError",
    "ConnectFailed",
    "HerdrClient",
    "HerdrError",
    "IncompatibleServer",
    "InvalidRequest",
    "NotFound",
    "ProtocolError",
    "ServerNotRunning",
    "ServerUnavailable",
    "Timeout",
    "TransportError",
    "WireClient",
]

__getattr__ = lazy_getattr(__name__, _LAZY)
