"""The checks every HTTP request passes before the MCP SDK's Streamable HTTP transport sees it.

An ASGI middleware in front of the SDK's app: it answers a refusal itself (a JSON-RPC error
body with no id, as the SDK answers its own refusals, and the HTTP status that names the
problem) and logs it with the method, path and peer, never a header value or the query string
(the token could be in either), each with its control characters escaped
(:func:`~orchestrator.logs.printable`: a ``%0a`` in a path cannot forge a line). In order, and
why each check exists:

1. **Connection cap → 503.** Every request in flight (an open event stream included) holds a
   task and a socket; past :attr:`HttpSettings.max_connections` a flood is refused at once
   instead of exhausting memory or file descriptors for everyone.
2. **No query string → 400.** The endpoint takes none, and a token put in a URL ends up in
   proxy logs, shell history and browser history; refusing every query refuses that too.
3. **Host on a loopback bind → 421.** DNS rebinding: a web page whose name resolves to
   127.0.0.1 makes the browser send ``Host: evil.example`` to our loopback port.
4. **Origin allow-list → 403.** The MCP specification's rule for the same attack, and for any
   web page the user opens: a browser always says where a cross-origin request comes from.
   Requests without an Origin (every non-browser client) pass; the default list is the loopback
   origins on a loopback bind and nothing otherwise.
5. **Bearer token → 401** (with ``WWW-Authenticate: Bearer``) when one is configured: missing,
   empty, another scheme, or wrong. Compared in constant time (both sides hashed first, so not
   even the length leaks through timing).
6. **Content-Type on POST → 415.** JSON-RPC messages are ``application/json``; a form or text
   body is a confused client or a browser's "simple request" that skips CORS preflight.
7. **Body size → 413** (at once from ``Content-Length``, else while reading) and **body time
   → 408**: a client has :attr:`HttpSettings.body_timeout` seconds to send the whole body, so a
   slow sender cannot hold a slot (and a task) for ever. The body read here is handed on
   unchanged.

What the SDK refuses itself after that (a body that is not JSON, a bad ``Accept``, an unknown
session) keeps its status and is logged here too. See docs/orchestrator/setup.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

from orchestrator.logs import printable
from orchestrator.mcp_http.settings import HttpSettings, is_loopback

__all__ = ["Guard", "refusal_body"]

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: JSON-RPC's "invalid request": the code of every refusal body (the HTTP status says which).
INVALID_REQUEST = -32600


def refusal_body(message: str) -> bytes:
    """A JSON-RPC error with no id: what the SDK's client reads from a refused request."""
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    return json.dumps(error).encode()


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode()).digest()


def _header(scope: Scope, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == name]


def _peer(scope: Scope) -> str:
    client = scope.get("client")
    return printable(f"{client[0]}:{client[1]}") if client else "?"


def _origin_host(origin: str) -> str:
    """The host of ``scheme://host[:port]`` (brackets kept off an IPv6 literal)."""
    rest = origin.partition("://")[2]
    if rest.startswith("["):
        return rest[1:].partition("]")[0]
    return rest.rpartition(":")[0] if rest.count(":") == 1 else rest


def _host_name(host: str) -> str:
    """The name in a Host header (``[::1]:8080`` → ``::1``, ``localhost:80`` → ``localhost``)."""
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if ":" in host else host


class Refused(Exception):
    """A request refused with ``status`` and a ``reason`` the client is told and we log."""

    def __init__(self, status: int, reason: str, headers: tuple[tuple[bytes, bytes], ...] = ()):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = headers


class Guard:
    """ASGI middleware: the checks of the module docstring, then ``app`` (the SDK's)."""

    def __init__(self, app: App, settings: HttpSettings) -> None:
        self.app = app
        self.settings = settings
        self.in_flight = 0
        self._token = _digest(settings.token) if settings.token is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: the SDK's session manager starts there
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.settings.max_connections:
            await self._refuse(
                scope,
                send,
                Refused(
                    503,
                    f"too many requests in flight (limit {self.settings.max_connections}): "
                    "retry shortly",
                    ((b"retry-after", b"1"),),
                ),
            )
            return
        self.in_flight += 1
        try:
            await self._guarded(scope, receive, send)
        finally:
            self.in_flight -= 1

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self._check_headers(scope)
            if scope["method"] == "POST":
                receive = await self._read_body(scope, receive)
        except Refused as refused:
            await self._refuse(scope, send, refused)
            return
        except _Disconnected:
            return
        await self.app(scope, receive, self._watch(scope, send))

    def _check_headers(self, scope: Scope) -> None:
        if scope.get("query_string"):
            raise Refused(
                400,
                "this endpoint takes no query string; never put a token in a URL "
                "(send it as Authorization: Bearer)",
            )
        if self.settings.loopback:
            hosts = _header(scope, b"host")
            if len(hosts) != 1 or not is_loopback(_host_name(hosts[0])):
                raise Refused(421, "the Host header must name this loopback server")
        for origin in _header(scope, b"origin"):
            if not self._origin_allowed(origin):
                raise Refused(403, "cross-origin request refused: this Origin is not allowed")
        if self._token is not None:
            self._check_token(scope)
        if scope["method"] == "POST":
            types = _header(scope, b"content-type")
            media = types[0].partition(";")[0].strip().lower() if len(types) == 1 else ""
            if media != "application/json":
                raise Refused(415, "Content-Type must be application/json")

    def _origin_allowed(self, origin: str) -> bool:
        origin = origin.lower()
        if origin in self.settings.allowed_origins:
            return True
        scheme = origin.partition("://")[0]
        return (
            self.settings.loopback
            and scheme in ("http", "https")
            and is_loopback(_origin_host(origin))
        )

    def _check_token(self, scope: Scope) -> None:
        challenge = ((b"www-authenticate", b'Bearer realm="herdr-orchestrator"'),)
        values = _header(scope, b"authorization")
        if not values:
            raise Refused(401, "missing bearer token (send Authorization: Bearer)", challenge)
        if len(values) > 1:
            raise Refused(401, "more than one Authorization header", challenge)
        scheme, _, presented = values[0].strip().partition(" ")
        if scheme.lower() != "bearer":
            raise Refused(401, "the Authorization header must use the Bearer scheme", challenge)
        presented = presented.strip()
        if not presented:
            raise Refused(401, "empty bearer token", challenge)
        assert self._token is not None
        if not hmac.compare_digest(_digest(presented), self._token):
            raise Refused(401, "wrong bearer token", challenge)

    async def _read_body(self, scope: Scope, receive: Receive) -> Receive:
        """The whole body within the size and time bounds; a ``receive`` that replays it."""
        limit = self.settings.max_body_bytes
        lengths = _header(scope, b"content-length")
        if lengths:
            if len(lengths) > 1 or not lengths[0].strip().isdigit():
                raise Refused(400, "a bad Content-Length header")
            if int(lengths[0]) > limit:
                raise Refused(413, f"request body larger than {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.settings.body_timeout) as timer:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Disconnected
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise Refused(413, f"request body larger than {limit} bytes")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        if timer.cancelled_caught:
            raise Refused(408, f"request body not received within {self.settings.body_timeout:g} s")
        pending: list[Message] = [{"type": "http.request", "body": b"".join(chunks)}]

        async def replay() -> Message:
            return pending.pop() if pending else await receive()

        return replay

    def _watch(self, scope: Scope, send: Send) -> Send:
        """``send``, logging a refusal the SDK answers itself (a status of 400 and above)."""

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                log.warning(
                    "MCP transport answered %s to %s %s from %s",
                    message["status"],
                    printable(scope["method"]),
                    printable(scope["path"]),
                    _peer(scope),
                )
            await send(message)

        return watched

    async def _refuse(self, scope: Scope, send: Send, refused: Refused) -> None:
        log.warning(
            "refused %s %s from %s: %s %s",
            printable(scope["method"]),
            printable(scope["path"]),
            _peer(scope),
            refused.status,
            refused.reason,
        )
        body = refusal_body(refused.reason)
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *refused.headers,
        ]
        if refused.status in (408, 413):  # the rest of the body is not read: end the connection
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": refused.status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class _Disconnected(Exception):
    """The client went away while sending its body: nothing to answer."""
