"""The MCP SDK's own Streamable HTTP app behind :class:`~orchestrator.mcp_http.guard.Guard`,
served by uvicorn on a socket we bind ourselves.

Why these choices:

* The protocol is the SDK's (``Server.streamable_http_app``: sessions, the era routing, its
  own body cap, set to ours as a backstop); nothing here speaks HTTP by hand. The SDK's
  DNS-rebinding middleware is switched off because :class:`Guard` checks Host and Origin
  itself, once, with the allow-list the options give, and logs each refusal.
* A call is answered with one JSON body, not an SSE stream (``json_response``): our tools
  send nothing to the client while they run (no progress, no requests), and the stream cost
  the server and the client about twice the CPU per call (bench/mcp_http.py: 8 ms against
  3 ms a call, half the p99 under 10 concurrent clients). Server-initiated messages still
  have the session's GET stream.
* uvicorn's access log is off: it prints request lines, and a client that puts a token in a
  URL would have it written there. :class:`Guard` logs refusals without the query string.
* We bind the socket before uvicorn starts, so ``--http 127.0.0.1:0`` can report the port
  it got, and the address is taken (or the start fails) before anything is announced.
* We accept on that socket ourselves (:class:`~orchestrator.mcp_http.sockets.SocketGate`)
  and hand each accepted socket to uvicorn's h11 protocol, so every socket is counted and
  timed from its accept, before TLS and before any header: a connection that sends nothing
  or half a head cannot hold a descriptor for ever (uvicorn alone times none of those out).
* The TLS context is the one :meth:`HttpSettings.ssl_context` built and checked at start
  (TLS 1.2 and later); the gate wraps each accepted socket in it.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from typing import Any, TextIO

import anyio
import uvicorn
from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings

from orchestrator.mcp_http.guard import App, Guard
from orchestrator.mcp_http.settings import MCP_PATH, HttpSettings
from orchestrator.mcp_http.sockets import HeadTimedProtocol, Slot, SocketGate

__all__ = ["bind", "build_app", "run_http", "serve_http"]

#: Seconds an idle keep-alive connection is kept open.
KEEP_ALIVE = 5
#: The largest request head (line and headers) uvicorn buffers.
MAX_HEAD_BYTES = 16 * 1024


def build_app(server: Server[Any], settings: HttpSettings) -> Guard:
    """``server``'s Streamable HTTP app at :data:`MCP_PATH`, behind the guard."""
    app: App = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=settings.max_body_bytes,
        json_response=True,  # see the module docstring
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=settings.host,
    )
    return Guard(app, settings)


def bind(settings: HttpSettings) -> socket.socket:
    """A listening TCP socket on the settings' address (IPv6 when the host is one).

    Created with ``IPPROTO_TCP`` named, not 0 as ``socket.create_server`` does: asyncio turns
    Nagle's algorithm off (``TCP_NODELAY``) only on accepted sockets whose ``proto`` says TCP,
    and with it on, each small TLS record of a response waited for the client's delayed ACK
    (about 45 ms a call; bench/mcp_http.py).
    """
    host = "127.0.0.1" if settings.host == "localhost" else settings.host
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, settings.port))
        listener.listen(socket.SOMAXCONN)
    except BaseException:
        listener.close()
        raise
    return listener


class _GatedServer(uvicorn.Server):
    """uvicorn's server with no listener of its own: the gate accepts on ours."""

    def __init__(self, config: uvicorn.Config, listener: socket.socket, gate: SocketGate):
        super().__init__(config)
        self._listener = listener
        self._gate = gate
        self._accepting: asyncio.Task[None] | None = None

    def _protocol(self, slot: Slot) -> HeadTimedProtocol:
        return HeadTimedProtocol(
            config=self.config,
            server_state=self.server_state,
            app_state=self.lifespan.state,
            slot=slot,
            head_timeout=self._gate.head_timeout,
        )

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # the lifespan; no listener of uvicorn's
        if self.started:
            self._accepting = asyncio.get_running_loop().create_task(
                self._gate.serve(self._listener, self._protocol)
            )

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
        self._listener.close()
        self._gate.close()
        await super().shutdown(sockets=[])


async def serve_http(
    server: Server[Any],
    settings: HttpSettings,
    *,
    sock: socket.socket | None = None,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve ``server`` over HTTP until cancelled or signalled (SIGINT/SIGTERM in the main
    thread); ``announce`` gets the endpoint's URL once the socket listens."""
    listener = sock if sock is not None else bind(settings)
    context = settings.ssl_context()
    config = uvicorn.Config(
        build_app(server, settings),
        http="h11",
        lifespan="on",
        access_log=False,
        log_config=None,
        server_header=False,
        timeout_keep_alive=KEEP_ALIVE,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
    )
    gate = SocketGate(
        max_sockets=settings.max_sockets, head_timeout=settings.head_timeout, context=context
    )
    if announce is not None:
        announce(settings.url(listener.getsockname()[1]))
    await _GatedServer(config, listener, gate).serve()


def run_http(
    server: Server[Any],
    settings: HttpSettings,
    stderr: TextIO | None = None,
    *,
    sock: socket.socket | None = None,
) -> None:
    """Block serving ``server`` over HTTP (on ``sock`` when given, already bound); the URL is
    announced on ``stderr``."""
    out = stderr if stderr is not None else sys.stderr

    def announce(url: str) -> None:
        out.write(f"herdr-orchestrator: serving MCP at {url}\n")
        if settings.token is None:
            out.write(
                "herdr-orchestrator: no token: any process of any user on this machine can "
                "call the tools (give --token-file)\n"
            )
        out.flush()

    anyio.run(lambda: serve_http(server, settings, sock=sock, announce=announce))
