"""The clients the fixtures hand to tests: the project's one wire client.

``herdr_client`` is a :class:`~orchestrator.client.wire.WireClient` and
``herdr_async_client`` an :class:`~orchestrator.client.wire.AsyncWireClient`: one request per
connection, like Herdr's CLI, to any Herdr, the simulator or a real one. They tell their
observers (``observers=[...]``, or httpx-style ``event_hooks``) every request, response and
event they see: that is how the plugin checks contracts and keeps a protocol tail for
failure reports against a real Herdr, whose wire it cannot tap. An error envelope raises
:class:`RequestFailed` (:class:`orchestrator.client.errors.HerdrError`, one subclass per
family of codes) with Herdr's own ``code`` and ``message``.
"""

from __future__ import annotations

from orchestrator.client.errors import HerdrError as RequestFailed
from orchestrator.client.wire import AsyncWireClient as AsyncHerdrClient
from orchestrator.client.wire import Observer, Subscription
from orchestrator.client.wire import WireClient as HerdrClient

__all__ = ["AsyncHerdrClient", "HerdrClient", "Observer", "RequestFailed", "Subscription"]
