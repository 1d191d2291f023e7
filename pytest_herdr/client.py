"""The clients the fixtures hand to tests: one request per connection, like Herdr's CLI.

``HerdrClient`` (sync) and ``AsyncHerdrClient`` speak the socket protocol to any Herdr, the
simulator or a real one, and tell their observers every request, response and event they
see. That is how the plugin checks contracts and keeps a protocol tail for failure reports
against a real Herdr, whose wire it cannot tap. Errors raise
:class:`herdr_sim.client.RequestFailed` with Herdr's own ``code`` and ``message``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterator
from itertools import count
from pathlib import Path
from typing import Any

from herdr_sim.client import ProtocolError, RequestFailed, Subscription, request

__all__ = ["AsyncHerdrClient", "HerdrClient", "Observer", "RequestFailed"]

#: ``observer(kind, line)`` with kind "request", "response" or "event"
Observer = Callable[[str, dict[str, Any]], None]

_ids = count(1)


def _request_line(method: str, params: dict[str, Any], request_id: str | None) -> dict[str, Any]:
    rid = request_id if request_id is not None else f"pytest-herdr:{next(_ids)}"
    return {"id": rid, "method": method, "params": params}


def _result(response: dict[str, Any]) -> dict[str, Any]:
    if "error" in response:
        error = response["error"]
        raise RequestFailed(str(error.get("code")), str(error.get("message")))
    result: dict[str, Any] = response["result"]
    return result


class _Observed:
    """What both clients share: the socket, the default timeout and the observers."""

    def __init__(
        self,
        socket_path: Path | str,
        *,
        timeout: float = 30.0,
        observers: list[Observer] | None = None,
    ) -> None:
        self.socket_path = Path(socket_path)
        self.timeout = timeout
        self.observers: list[Observer] = list(observers or [])

    def _tell(self, kind: str, line: dict[str, Any]) -> None:
        for observer in self.observers:
            with contextlib.suppress(Exception):  # an observer never breaks the client
                observer(kind, line)


class HerdrClient(_Observed):
    """A synchronous client for one Herdr socket.

    >>> client.call("workspace.create", cwd="/tmp")["workspace"]["workspace_id"]  # doctest: +SKIP
    'w1'
    """

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        request_id: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send one request; the whole response envelope (result or error)."""
        line = _request_line(method, params or {}, request_id)
        self._tell("request", line)
        response = request(
            self.socket_path,
            method,
            line["params"],
            request_id=line["id"],
            timeout=self.timeout if timeout is None else timeout,
        )
        self._tell("response", response)
        return response

    def call(self, method: str, /, **params: Any) -> dict[str, Any]:
        """Send one request; its ``result``, or :class:`RequestFailed` on an error envelope."""
        return _result(self.request(method, params))

    def ping(self) -> dict[str, Any]:
        """``ping``'s result (``version`` and ``protocol``)."""
        return self.call("ping")

    def subscribe(self, *subscriptions: str | dict[str, Any]) -> ObservedSubscription:
        """Open an ``events.subscribe`` stream; a string is a lifecycle event name."""
        wanted = [{"type": sub} if isinstance(sub, str) else sub for sub in subscriptions]
        self._tell(
            "request",
            _request_line("events.subscribe", {"subscriptions": wanted}, "herdr-sim:sub"),
        )
        stream = ObservedSubscription(self.socket_path, wanted, self.timeout, self._tell)
        self._tell("response", stream.ack)
        if "error" in stream.ack:
            stream.close()
            _result(stream.ack)
        return stream


class ObservedSubscription(Subscription):
    """A subscription whose events reach the client's observers."""

    def __init__(
        self,
        path: Path | str,
        subscriptions: list[dict[str, Any]],
        timeout: float,
        tell: Callable[[str, dict[str, Any]], None],
    ) -> None:
        self._telling: Callable[[str, dict[str, Any]], None] | None = None
        super().__init__(path, subscriptions, timeout)
        self._telling = tell

    def next(self, timeout: float | None = None) -> dict[str, Any]:
        """The next event envelope (``TimeoutError`` after ``timeout`` seconds)."""
        line = super().next(timeout)
        if self._telling is not None:
            self._telling("event", line)
        return line

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while True:
            yield self.next()


class AsyncHerdrClient(_Observed):
    """The asyncio twin of :class:`HerdrClient`, for tests of asyncio orchestrators."""

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        request_id: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send one request; the whole response envelope."""
        import asyncio  # imported on first use: the plugin loads this module for every run

        line = _request_line(method, params or {}, request_id)
        self._tell("request", line)
        async with asyncio.timeout(self.timeout if timeout is None else timeout):
            reader, writer = await asyncio.open_unix_connection(str(self.socket_path))
            try:
                writer.write(json.dumps(line).encode() + b"\n")
                await writer.drain()
                raw = await reader.readline()
            finally:
                writer.close()
                await writer.wait_closed()
        if not raw.endswith(b"\n"):
            raise ProtocolError("connection closed before a response line")
        response: dict[str, Any] = json.loads(raw)
        self._tell("response", response)
        return response

    async def call(self, method: str, /, **params: Any) -> dict[str, Any]:
        """Send one request; its ``result``, or :class:`RequestFailed`."""
        return _result(await self.request(method, params))

    async def subscribe(
        self, *subscriptions: str | dict[str, Any], timeout: float | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """Yield the events of one ``events.subscribe`` stream until the caller stops
        iterating (the connection is closed then)."""
        import asyncio

        wanted = [{"type": sub} if isinstance(sub, str) else sub for sub in subscriptions]
        line = _request_line("events.subscribe", {"subscriptions": wanted}, None)
        self._tell("request", line)
        async with asyncio.timeout(self.timeout if timeout is None else timeout):
            reader, writer = await asyncio.open_unix_connection(str(self.socket_path))
        try:
            writer.write(json.dumps(line).encode() + b"\n")
            await writer.drain()
            ack = json.loads(await reader.readline() or b"null")
            if not isinstance(ack, dict):
                raise ProtocolError("subscription closed before its acknowledgement")
            self._tell("response", ack)
            _result(ack)
            while raw := await reader.readline():
                event: dict[str, Any] = json.loads(raw)
                self._tell("event", event)
                yield event
        finally:
            writer.close()
