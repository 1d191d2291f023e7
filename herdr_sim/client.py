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

#: each name → its module under ``orchestrator.client`` (``module:name`` for a rename)
_LAZY = {
    **dict.fromkeys(("Subscription", "call", "request", "send_line"), "wire"),
    "RequestFailed": "errors:HerdrError",
    "ProtocolError": "errors",
}


def __getattr__(name: str) -> Any:
    # the shared loader is imported on first use, not here (see herdr_sim/__init__.py)
    from orchestrator.client._lazy import resolve

    return resolve(__name__, _LAZY, name, base="orchestrator.client")
