"""The wire: Herdr's JSON-line protocol, one request per connection, the envelope back.

Every request this project sends to a Herdr server, simulated or real, goes through this
module (the simulator's own ``herdr`` CLI excepted: it keeps a minimal transport of its own,
:mod:`herdr_sim.herdr_cli.transport`, because it starts once per command in every pane and
cannot afford ``socket``'s or ``json``'s import cost). Three layers, each on the one below:

* functions: :func:`connect`, :func:`send_line`, :func:`request`, :func:`call` and
  :class:`Subscription` — one exchange on one connection, exactly as Herdr's CLI does it.
  Failures are the operating system's (``FileNotFoundError``, ``ConnectionRefusedError``,
  ``TimeoutError``) or :class:`ProtocolError` (the connection closed before a response line);
  a server's error envelope is a value, and :func:`call` raises it as the
  :class:`~orchestrator.client.errors.HerdrError` family of its code.
* wire transports: :class:`SocketWire` (the Unix socket) and :class:`InMemoryWire` (a
  :class:`~herdr_sim.Simulator` driven through ``Simulator.call``, no socket at all). Both
  take a request line and return the response envelope.
* :class:`WireClient` (sync) and :class:`AsyncWireClient` (asyncio, socket only): method
  and params in, envelope or result out, with httpx-style ``event_hooks`` —
  ``{"request": [...], "response": [...], "event": [...]}``, each hook called with the line —
  so observers (the pytest plugin's contract checker, its protocol tail) see every request
  sent and every line received. A hook that raises never breaks the client.

The typed :class:`~orchestrator.client.sync.HerdrClient` stands on the same functions (its
socket transport maps their failures to ``ConnectFailed``/``TransportError``);
:mod:`herdr_sim.client` and :mod:`pytest_herdr.client` re-export this module's names.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from itertools import count
from pathlib import Path
from typing import Any, Protocol, Self

from orchestrator.client.errors import ProtocolError, error_for

__all__ = [
    "HOOK_KINDS",
    "AsyncWireClient",
    "EventHooks",
    "Hook",
    "InMemoryServer",
    "InMemoryWire",
    "Observer",
    "ProtocolError",
    "SocketWire",
    "Subscription",
    "WireClient",
    "WireTransport",
    "call",
    "connect",
    "encode_request",
    "hook_table",
    "read_line",
    "request",
    "result_of",
    "send_line",
    "tell",
]

#: ``hook(line)``: one request line, response envelope or event line.
Hook = Callable[[dict[str, Any]], None]
#: ``observer(kind, line)`` with kind ``"request"``, ``"response"`` or ``"event"``: the
#: shape the pytest plugin's observers have; :class:`WireClient` turns each into three hooks.
Observer = Callable[[str, dict[str, Any]], None]
EventHooks = Mapping[str, Sequence[Hook]]
HOOK_KINDS = ("request", "response", "event")

#: A response line longer than this is refused (a broken server must not exhaust memory).
MAX_LINE = 64 * 1024 * 1024
_CHUNK = 65536
_ids = count(1)


# -- one exchange ----------------------------------------------------------------------------


def connect(path: Path | str, timeout: float | None) -> socket.socket:
    """A connection to the Unix socket at ``path`` (``timeout`` bounds the connect and is
    the socket's default afterwards); the ``OSError`` of a failed connect propagates."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(str(path))
    except BaseException:
        sock.close()
        raise
    return sock


def read_line(sock: socket.socket, deadline: float | None = None) -> bytes:
    """The next line (without its newline); ``deadline`` is a ``time.monotonic()`` bound.

    Raises :class:`ProtocolError` when the peer closes first, ``TimeoutError`` past the
    deadline (or the socket's own timeout) and ``OSError`` for a line over :data:`MAX_LINE`.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no response line in time")
            sock.settimeout(remaining)
        chunk = sock.recv(_CHUNK)
        if not chunk:
            raise ProtocolError("connection closed before a response line")
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[:newline])
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_LINE:
            raise OSError("response line too long")


def send_line(
    path: Path | str,
    line: bytes,
    timeout: float | None = 30.0,
    *,
    connect_timeout: float | None = None,
) -> dict[str, Any]:
    """Send raw bytes as the request line on a new connection; the decoded response.

    ``timeout`` bounds the whole exchange after the connect (``None``: wait as long as the
    server does, as Herdr's CLI does); ``connect_timeout`` the connect (default: ``timeout``).
    """
    with connect(path, timeout if connect_timeout is None else connect_timeout) as sock:
        sock.settimeout(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        sock.sendall(line)
        response: dict[str, Any] = json.loads(read_line(sock, deadline))
        return response


def _request_line(
    method: str, params: Mapping[str, Any] | None, request_id: str | None, prefix: str
) -> dict[str, Any]:
    rid = request_id if request_id is not None else f"{prefix}:{next(_ids)}"
    return {"id": rid, "method": method, "params": dict(params or {})}


def _encode(line: Mapping[str, Any]) -> bytes:
    return (json.dumps(line) + "\n").encode()


def encode_request(request_id: str, method: str, params: Mapping[str, Any]) -> bytes:
    """The wire form of one request: a JSON object with ``id``, ``method`` and ``params``
    and a newline."""
    return _encode({"id": request_id, "method": method, "params": dict(params)})


def request(
    path: Path | str,
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    request_id: str | None = None,
    timeout: float | None = 30.0,
) -> dict[str, Any]:
    """Send one request; the whole response envelope (result or error)."""
    return send_line(path, _encode(_request_line(method, params, request_id, "herdr-sim")), timeout)


def result_of(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """An envelope's ``result``; an error envelope raises its
    :class:`~orchestrator.client.errors.HerdrError` family."""
    error = envelope.get("error")
    if error is not None:
        error = error if isinstance(error, dict) else {}
        rid = envelope.get("id")
        raise error_for(
            str(error.get("code")),
            str(error.get("message")),
            rid if isinstance(rid, str) else None,
        )
    result: dict[str, Any] = envelope["result"]
    return result


def call(
    path: Path | str, method: str, params: Mapping[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    """Send one request; its ``result``, or the error family of Herdr's error code."""
    return result_of(request(path, method, params, **kw))


class Subscription:
    """An open ``events.subscribe`` stream; iterate to receive event envelopes.

    ``ack`` is the server's first line (its acknowledgement, or an error envelope).
    """

    def __init__(
        self,
        path: Path | str,
        subscriptions: list[dict[str, Any]],
        timeout: float = 30.0,
        *,
        request_id: str = "herdr-sim:sub",
        on_event: Hook | None = None,
    ) -> None:
        self._sock = connect(path, timeout)
        line = {
            "id": request_id,
            "method": "events.subscribe",
            "params": {"subscriptions": subscriptions},
        }
        self._sock.sendall(_encode(line))
        self._buffer = b""
        self.ack = self._next_line(None)
        self._on_event = on_event

    def _next_line(self, timeout: float | None) -> dict[str, Any]:
        if timeout is not None:
            self._sock.settimeout(timeout)
        while b"\n" not in self._buffer:
            chunk = self._sock.recv(_CHUNK)
            if not chunk:
                raise ProtocolError("subscription closed")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        value: dict[str, Any] = json.loads(line)
        return value

    def next(self, timeout: float | None = None) -> dict[str, Any]:
        """The next line (``TimeoutError`` after ``timeout`` seconds, else the socket's
        default)."""
        line = self._next_line(timeout)
        if self._on_event is not None:
            self._on_event(line)
        return line

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while True:
            yield self.next()

    def close(self) -> None:
        """Hang up (the server ends the subscription)."""
        self._sock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- wire transports -------------------------------------------------------------------------


class WireTransport(Protocol):
    """Carries one request line to a server and returns its response envelope."""

    name: str

    def send(
        self, line: dict[str, Any], timeout: float | None, connect_timeout: float | None
    ) -> dict[str, Any]:
        """One exchange (failures as :func:`send_line` raises them)."""
        ...


class SocketWire:
    """The Unix socket at ``path``: a new connection per request."""

    name = "socket"

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def send(
        self, line: dict[str, Any], timeout: float | None, connect_timeout: float | None
    ) -> dict[str, Any]:
        """:func:`send_line` of the encoded line."""
        return send_line(self.path, _encode(line), timeout, connect_timeout=connect_timeout)


class InMemoryServer(Protocol):
    """What :class:`InMemoryWire` drives: a :class:`~herdr_sim.Simulator` (structurally, so
    the client does not import the simulator)."""

    socket_path: Path

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        request_id: str = ...,
        timeout: float = ...,
    ) -> dict[str, Any]: ...


class InMemoryWire:
    """A :class:`~herdr_sim.Simulator` (anything with its ``call``) driven without a socket.

    The request goes through the simulator's own parsing and dispatch, so the envelope is
    the one the socket would carry; only the bytes on a socket are skipped. Subscriptions
    need the socket.
    """

    name = "memory"

    def __init__(self, server: InMemoryServer) -> None:
        self.server = server

    def send(
        self, line: dict[str, Any], timeout: float | None, connect_timeout: float | None
    ) -> dict[str, Any]:
        """``server.call`` of the line's method and params under its id."""
        return self.server.call(
            line["method"],
            line["params"],
            request_id=line["id"],
            timeout=30.0 if timeout is None else timeout,
        )


# -- clients ---------------------------------------------------------------------------------


class _Hooked:
    """What both clients share: the socket, the default timeout and the event hooks."""

    def __init__(
        self,
        socket_path: Path | str | None = None,
        *,
        transport: WireTransport | None = None,
        timeout: float = 30.0,
        connect_timeout: float | None = None,
        event_hooks: EventHooks | None = None,
        observers: Sequence[Observer] = (),
        id_prefix: str = "herdr-client",
    ) -> None:
        if transport is None:
            if socket_path is None:
                raise ValueError("a socket path or a transport is required")
            transport = SocketWire(socket_path)
        self.transport: WireTransport = transport
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.id_prefix = id_prefix
        self.event_hooks = hook_table(event_hooks, observers)

    @property
    def socket_path(self) -> Path:
        """The server's socket (``ValueError`` for an in-memory client)."""
        transport = self.transport
        if isinstance(transport, SocketWire):
            return transport.path
        raise ValueError(f"a {transport.name} client has no socket path")

    def observe(self, observer: Observer) -> None:
        """Register ``observer(kind, line)`` for every kind of line."""
        for kind in HOOK_KINDS:
            self.event_hooks[kind].append(_ObserverHook(observer, kind))

    def _tell(self, kind: str, line: dict[str, Any]) -> None:
        tell(self.event_hooks, kind, line)

    def _line(
        self, method: str, params: Mapping[str, Any] | None, request_id: str | None
    ) -> dict[str, Any]:
        return _request_line(method, params, request_id, self.id_prefix)


def hook_table(
    event_hooks: EventHooks | None = None, observers: Sequence[Observer] = ()
) -> dict[str, list[Hook]]:
    """``{"request": [...], "response": [...], "event": [...]}`` from httpx-style hooks and
    ``(kind, line)`` observers; an unknown kind is a ``ValueError``."""
    table: dict[str, list[Hook]] = {kind: [] for kind in HOOK_KINDS}
    for kind, hooks in (event_hooks or {}).items():
        if kind not in table:
            raise ValueError(f"unknown event hook {kind!r} (expected one of {HOOK_KINDS})")
        table[kind].extend(hooks)
    for observer in observers:
        for kind in HOOK_KINDS:
            table[kind].append(_ObserverHook(observer, kind))
    return table


def tell(table: Mapping[str, Sequence[Hook]], kind: str, line: dict[str, Any]) -> None:
    """Call every hook of ``kind`` with ``line``; a hook that raises is ignored (an observer
    never breaks the client)."""
    for hook in table.get(kind, ()):
        with contextlib.suppress(Exception):
            hook(line)


class _ObserverHook:
    """An observer bound to one kind of line (a named class so hooks compare and print)."""

    def __init__(self, observer: Observer, kind: str) -> None:
        self.observer = observer
        self.kind = kind

    def __call__(self, line: dict[str, Any]) -> None:
        self.observer(self.kind, line)

    def __repr__(self) -> str:
        return f"<observer {self.observer!r} of {self.kind} lines>"


def _subscriptions(subscriptions: Sequence[str | dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": sub} if isinstance(sub, str) else sub for sub in subscriptions]


class WireClient(_Hooked):
    """A synchronous client of one Herdr server: raw requests, envelopes, event hooks.

    >>> client.call("workspace.create", cwd="/tmp")["workspace"]["workspace_id"]  # doctest: +SKIP
    'w1'
    """

    @classmethod
    def in_memory(cls, server: InMemoryServer, **kw: Any) -> WireClient:
        """A client of a running :class:`~herdr_sim.Simulator`, without its socket."""
        return cls(transport=InMemoryWire(server), **kw)

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        request_id: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send one request; the whole response envelope (result or error)."""
        line = self._line(method, params, request_id)
        self._tell("request", line)
        response = self.transport.send(
            line, self.timeout if timeout is None else timeout, self.connect_timeout
        )
        self._tell("response", response)
        return response

    def call(self, method: str, /, **params: Any) -> dict[str, Any]:
        """Send one request; its ``result``, or the
        :class:`~orchestrator.client.errors.HerdrError` family of an error envelope."""
        return result_of(self.request(method, params))

    def ping(self) -> dict[str, Any]:
        """``ping``'s result (``version`` and ``protocol``)."""
        return self.call("ping")

    def subscribe(self, *subscriptions: str | dict[str, Any]) -> Subscription:
        """Open an ``events.subscribe`` stream; a string is a lifecycle event name. Its
        events reach the ``event`` hooks; an error acknowledgement raises."""
        wanted = _subscriptions(subscriptions)
        line = self._line("events.subscribe", {"subscriptions": wanted}, None)
        self._tell("request", line)
        stream = Subscription(
            self.socket_path,
            wanted,
            self.timeout,
            request_id=line["id"],
            on_event=lambda event: self._tell("event", event),
        )
        self._tell("response", stream.ack)
        if "error" in stream.ack:
            stream.close()
            result_of(stream.ack)
        return stream


class AsyncWireClient(_Hooked):
    """The asyncio twin of :class:`WireClient` over the socket (asyncio streams)."""

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        request_id: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send one request; the whole response envelope."""
        import asyncio  # on first use: the plugin imports this module for every run

        line = self._line(method, params, request_id)
        self._tell("request", line)
        async with asyncio.timeout(self.timeout if timeout is None else timeout):
            reader, writer = await asyncio.open_unix_connection(str(self.socket_path))
            try:
                writer.write(_encode(line))
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
        """Send one request; its ``result``, or the error family of an error envelope."""
        return result_of(await self.request(method, params))

    async def ping(self) -> dict[str, Any]:
        """``ping``'s result."""
        return await self.call("ping")

    async def subscribe(
        self, *subscriptions: str | dict[str, Any], timeout: float | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """Yield the events of one ``events.subscribe`` stream until the caller stops
        iterating (the connection is closed then)."""
        import asyncio

        wanted = _subscriptions(subscriptions)
        line = self._line("events.subscribe", {"subscriptions": wanted}, None)
        self._tell("request", line)
        async with asyncio.timeout(self.timeout if timeout is None else timeout):
            reader, writer = await asyncio.open_unix_connection(str(self.socket_path))
        try:
            writer.write(_encode(line))
            await writer.drain()
            ack = json.loads(await reader.readline() or b"null")
            if not isinstance(ack, dict):
                raise ProtocolError("subscription closed before its acknowledgement")
            self._tell("response", ack)
            result_of(ack)
            while raw := await reader.readline():
                event: dict[str, Any] = json.loads(raw)
                self._tell("event", event)
                yield event
        finally:
            writer.close()
