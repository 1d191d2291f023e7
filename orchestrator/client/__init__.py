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

from orchestrator.client._lazy import lazy_getattr

# `typing` costs the simulator's `herdr` CLI its start-up (it imports this base layer's
# protocol facts and socket paths); mypy treats this name specially.
TYPE_CHECKING = False

# The names are written twice on purpose, and a test holds the two together
# (tests/test_public_api.py): mypy reads the imports below (the ``X as X`` form
# marks a re-export), the interpreter reads ``_LAZY``; ``__all__`` is ``_LAZY``'s keys.
if TYPE_CHECKING:
    from .aio import AsyncHerdrClient as AsyncHerdrClient
    from .errors import AgentNotReady as AgentNotReady
    from .errors import ClientError as ClientError
    from .errors import ConnectFailed as ConnectFailed
    from .errors import HerdrError as HerdrError
    from .errors import IncompatibleServer as IncompatibleServer
    from .errors import InvalidRequest as InvalidRequest
    from .errors import NotFound as NotFound
    from .errors import ProtocolError as ProtocolError
    from .errors import ServerNotRunning as ServerNotRunning
    from .errors import ServerUnavailable as ServerUnavailable
    from .errors import Timeout as Timeout
    from .errors import TransportError as TransportError
    from .sync import HerdrClient as HerdrClient
    from .wire import AsyncWireClient as AsyncWireClient
    from .wire import WireClient as WireClient

#: each public name → the submodule that defines it
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

__all__ = [*_LAZY]  # noqa: PLE0604 - one list of the names: _LAZY's keys

__getattr__ = lazy_getattr(__name__, _LAZY)
