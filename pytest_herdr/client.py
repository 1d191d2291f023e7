"""The clients the fixtures hand to tests: the project's one wire client.

``herdr_client`` is a :class:`WireClient` and ``herdr_async_client`` an
:class:`AsyncWireClient` (:mod:`orchestrator.client.wire`'s, under their own names; the
typed ``HerdrClient`` is :class:`orchestrator.HerdrClient`): one request per
connection, like Herdr's CLI, to any Herdr, the simulator or a real one. They tell their
observers (``observers=[...]``, or httpx-style ``event_hooks``) every request, response and
event they see: that is how the plugin checks contracts and keeps a protocol tail for
failure reports against a real Herdr, whose wire it cannot tap. An error envelope raises
:class:`RequestFailed` (:class:`orchestrator.client.errors.HerdrError`, one subclass per
family of codes) with Herdr's own ``code`` and ``message``.
"""

from __future__ import annotations

from orchestrator.client.errors import HerdrError as RequestFailed
from orchestrator.client.wire import AsyncWireClient, Observer, Subscription, WireClient

__all__ = ["AsyncWireClient", "Observer", "RequestFailed", "Subscription", "WireClient"]

# The suite's older spelling, kept in this implementation module only (the package root's
# ``pytest_herdr.HerdrClient`` warns): the same classes as above.
HerdrClient = WireClient
AsyncHerdrClient = AsyncWireClient
