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
* The TLS context is the one :meth:`HttpSettings.ssl_context` built and checked at start
  (TLS 1.2 and later).
"""

from __future__ import annotations

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
        ssl_context_factory=(lambda _config, _default: context) if context is not None else None,
    )
    if announce is not None:
        announce(settings.url(listener.getsockname()[1]))
    await uvicorn.Server(config).serve(sockets=[listener])


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
