"""The client sockets the HTTP server holds, bounded before anything is authenticated.

Why this exists: :class:`~orchestrator.mcp_http.guard.Guard` sees a request only once its
head is complete, so its checks (the token, ``--max-connections``) cannot see a connection
that sends nothing, half a head, or never finishes its TLS handshake. uvicorn times none of
those out (its keep-alive timer runs only between requests), so a thousand such sockets,
no token needed, exhausted the server's file descriptors and an authenticated client got no
answer. Two bounds, both before authentication:

* **Time to a complete head.** A new connection has :attr:`HttpSettings.head_timeout`
  seconds to finish its TLS handshake (asyncio's handshake timeout) and then as long again
  to send a complete request head; a kept-alive connection that starts its next request has
  the same time from its first byte. A late one is closed unanswered and logged.
* **Sockets held.** We accept ourselves (the listening socket is ours; uvicorn gets the
  accepted ones through ``connect_accepted_socket``) and count every socket from its
  accept, TLS handshake pending or not. At :attr:`HttpSettings.max_sockets` a newcomer
  evicts the oldest socket that is not serving a request (still handshaking, or waiting
  for a head), so an attacker's idle sockets cannot starve a client that sends its request
  at once; when every socket serves a request, the newcomer is closed at once.

uvicorn's HTTP protocol (h11) still parses every byte; this module only decides how long a
socket may live without a request and how many may live at once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import socket
import ssl
from collections.abc import Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from orchestrator.logs import printable

__all__ = ["HeadTimedProtocol", "Slot", "SocketGate"]

log = logging.getLogger(__name__)

#: Seconds the accept loop pauses when accept itself fails (e.g. no descriptor left).
_ACCEPT_BACKOFF = 0.1


class Slot:
    """One accepted socket: its task (the handshake, then the connection's life), and the
    protocol once the connection is made."""

    def __init__(self, peer: str, task_factory: Callable[[Slot], asyncio.Task[None]]) -> None:
        self.peer = peer
        self.protocol: HeadTimedProtocol | None = None
        self.closed = asyncio.Event()
        self.task = task_factory(self)

    def idle(self) -> bool:
        """Not serving a request: still handshaking, or waiting for a request head."""
        return self.protocol is None or self.protocol.waiting_for_head()

    def evict(self) -> None:
        """Close the socket now (ending its task closes one still handshaking)."""
        if self.protocol is not None and self.protocol.transport is not None:
            self.protocol.transport.abort()
        else:
            self.task.cancel()


class HeadTimedProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head (module docstring)."""

    def __init__(self, *args: Any, slot: Slot, head_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slot = slot
        self._head_timeout = head_timeout
        self._head_deadline: asyncio.TimerHandle | None = None

    def waiting_for_head(self) -> bool:
        """No request head complete on this connection since its last response."""
        return self.conn.their_state is h11.IDLE and (
            self.cycle is None or self.cycle.response_complete
        )

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._slot.protocol = self
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.waiting_for_head():
            if self._head_deadline is None:
                self._arm()
        else:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
        self._slot.closed.set()

    def _arm(self) -> None:
        self._head_deadline = self.loop.call_later(self._head_timeout, self._late)

    def _disarm(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _late(self) -> None:
        self._head_deadline = None
        if self.waiting_for_head() and not self.transport.is_closing():
            log.warning(
                "closed a connection from %s: no complete request head within %g s",
                printable(self._slot.peer),
                self._head_timeout,
            )
            self.transport.close()


ProtocolFactory = Callable[[Slot], HeadTimedProtocol]


class SocketGate:
    """The accept loop over our listening socket, with the bounds of the module docstring."""

    def __init__(
        self, *, max_sockets: int, head_timeout: float, context: ssl.SSLContext | None
    ) -> None:
        self.max_sockets = max_sockets
        self.head_timeout = head_timeout
        self.context = context
        #: every accepted socket not yet closed, oldest first (dicts keep insertion order)
        self.slots: dict[Slot, None] = {}

    async def serve(self, listener: socket.socket, factory: ProtocolFactory) -> None:
        """Accept on ``listener`` until cancelled."""
        loop = asyncio.get_running_loop()
        listener.setblocking(False)
        while True:
            try:
                conn, address = await loop.sock_accept(listener)
            except OSError as exc:  # EMFILE and the like: the server goes on
                log.warning("accept failed: %s", exc)
                await asyncio.sleep(_ACCEPT_BACKOFF)
                continue
            if len(self.slots) >= self.max_sockets and not self._evict_one():
                log.warning(
                    "closed a connection from %s: %d sockets already serve requests",
                    printable(_address(address)),
                    self.max_sockets,
                )
                conn.close()
                continue
            slot = Slot(_address(address), functools.partial(self._start, conn, factory))
            self.slots[slot] = None

    def _start(
        self, conn: socket.socket, factory: ProtocolFactory, slot: Slot
    ) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(self._connection(slot, conn, factory))

        def ended(_task: asyncio.Task[None]) -> None:
            # a task cancelled before it ran never reached its own cleanup; one cancelled
            # in its handshake had asyncio close the transport (closing again is a no-op)
            if slot.protocol is None:
                conn.close()
            self.slots.pop(slot, None)

        task.add_done_callback(ended)
        return task

    def _evict_one(self) -> bool:
        for slot in self.slots:
            if slot.idle():
                log.warning(
                    "closed a connection from %s that had sent no request head: %d sockets "
                    "held (--max-sockets)",
                    printable(slot.peer),
                    self.max_sockets,
                )
                del self.slots[slot]
                slot.evict()
                return True
        return False

    async def _connection(self, slot: Slot, conn: socket.socket, factory: ProtocolFactory) -> None:
        loop = asyncio.get_running_loop()
        try:
            if self.context is not None:
                await loop.connect_accepted_socket(
                    lambda: factory(slot),
                    conn,
                    ssl=self.context,
                    ssl_handshake_timeout=self.head_timeout,
                )
            else:
                await loop.connect_accepted_socket(lambda: factory(slot), conn)
        except (OSError, ssl.SSLError, TimeoutError):
            return  # a failed or late handshake: the socket is closed when the task ends
        await slot.closed.wait()

    def close(self) -> None:
        """Close every socket still handshaking (uvicorn shuts the connected ones down)."""
        for slot in list(self.slots):
            if slot.protocol is None:
                slot.task.cancel()


def _address(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)
