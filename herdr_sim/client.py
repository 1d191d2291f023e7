"""The simulator's name for the project's one wire client, :mod:`orchestrator.client.wire`.

One request per connection, one response line, exactly what Herdr's CLI does:
``request(path, method, params)`` returns the envelope, ``call(...)`` the result or
:class:`RequestFailed` (the error family of Herdr's code), ``send_line`` sends raw bytes,
:class:`Subscription` holds an ``events.subscribe`` stream. Used by the demo, the test suite
and the benchmarks.

Resolved lazily: ``import herdr_sim.client`` stays as cheap as ``import herdr_sim`` until a
name is used (the wire module brings ``socket`` and ``json`` with it).
"""

from __future__ import annotations

# `typing` costs every `herdr` CLI start; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from orchestrator.client.errors import HerdrError as RequestFailed
    from orchestrator.client.errors import ProtocolError
    from orchestrator.client.wire import Subscription, call, request, send_line

__all__ = ["ProtocolError", "RequestFailed", "Subscription", "call", "request", "send_line"]

_WIRE = {"Subscription", "call", "request", "send_line"}


def __getattr__(name: str) -> Any:
    if name in _WIRE:
        from orchestrator.client import wire

        value = getattr(wire, name)
    elif name == "RequestFailed":
        from orchestrator.client.errors import HerdrError as value
    elif name == "ProtocolError":
        from orchestrator.client.errors import ProtocolError as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
