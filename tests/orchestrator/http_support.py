"""Helpers for the Streamable HTTP tests: a CA and certificates made by ``trustme``, a token
file, a ``herdr-orchestrator mcp --http`` process on a simulator, and the MCP SDK's own client
(``streamable_http_client`` in an ``httpx2`` client that trusts the test CA and sends the token).
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import trustme
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from herdr_sim.config import SimulatorConfig
from pytest_herdr import backends
from pytest_herdr.backends import HerdrServer
from tests.waits import SCALE, wait_until

BIN = Path(sys.executable).parent
#: Bound of one whole client exchange (initialize, list, call).
EXCHANGE_TIMEOUT = 20.0
#: The read-only low-level tool the good calls make (one Herdr round trip).
READ_TOOL = "_dsh_herdr_workspace_list"
#: The headers a Streamable HTTP POST needs to get past the SDK's own checks.
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
#: A JSON-RPC initialize request (a valid first message of a session).
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        },
    }
)


@dataclass(frozen=True)
class Certs:
    """A test CA and a server certificate (and key) for ``names`` only."""

    ca: Path
    cert: Path
    key: Path

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))


def make_certs(directory: Path, *names: str) -> Certs:
    """A fresh CA and a certificate for ``names`` (default ``localhost``), as PEM files."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    issued = ca.issue_cert(*(names or ("localhost",)))
    certs = Certs(directory / "ca.pem", directory / "cert.pem", directory / "key.pem")
    ca.cert_pem.write_to_path(str(certs.ca))
    issued.cert_chain_pems[0].write_to_path(str(certs.cert))
    issued.private_key_pem.write_to_path(str(certs.key))
    return certs


def write_token(path: Path, token: str, mode: int = 0o600) -> Path:
    path.write_text(token + "\n")
    path.chmod(mode)
    return path


@contextmanager
def simulator() -> Iterator[HerdrServer]:
    """A simulator with the default settings (a module's, for its HTTP server); stopped on exit."""
    config = SimulatorConfig()
    config.coerce_paths()
    server = backends.start_sim(config)
    try:
        yield server
    finally:
        server.stop()


def tool_env(sim: HerdrServer, state: Path) -> dict[str, str]:
    """The environment that points a server process at ``sim`` (no pane of its own)."""
    return {
        **{k: v for k, v in sim.env.items() if k != "HERDR_PANE_ID"},
        "HERDR_BIN_PATH": str(sim.cli_path),
        "HERDR_ORCHESTRATOR_STATE_DIR": str(state),
    }


@dataclass
class HttpServer:
    """A running ``herdr-orchestrator mcp --http`` process."""

    process: subprocess.Popen[bytes]
    url: str
    stderr: Path
    token: str
    certs: Certs

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        assert port is not None
        return port

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10 * SCALE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_http_server(
    env: Mapping[str, str],
    root: Path,
    certs: Certs,
    token: str,
    extra: Sequence[str] = (),
) -> HttpServer:
    """``herdr-orchestrator mcp --http 127.0.0.1:0`` with TLS and a token file; its URL (with
    ``localhost``, the certificate's name) is read from the line it announces on stderr."""
    token_file = write_token(root / "token", token)
    argv = [
        str(BIN / "herdr-orchestrator"),
        "mcp",
        "--http",
        "127.0.0.1:0",
        "--tls-cert",
        str(certs.cert),
        "--tls-key",
        str(certs.key),
        "--token-file",
        str(token_file),
        *extra,
    ]
    return launch_http_server(argv, env, root, certs, token)


def launch_http_server(
    argv: Sequence[str],
    env: Mapping[str, str],
    root: Path,
    certs: Certs,
    token: str,
    cwd: Path | None = None,
) -> HttpServer:
    """Start the server command ``argv`` (one that binds port 0) and wait for the URL it
    announces on stderr (with ``localhost``, the certificate's name)."""
    stderr = root / "server.stderr"
    with stderr.open("wb") as err:
        process = subprocess.Popen(
            list(argv), env=dict(env), stdin=subprocess.DEVNULL, stderr=err, cwd=cwd
        )

    def announced() -> str | None:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {stderr.read_text()}")
        found = re.search(r"serving MCP at (\S+)", stderr.read_text())
        return found.group(1) if found else None

    try:
        url = wait_until(announced, timeout=20.0, what="the server's URL")
    except BaseException:
        process.kill()
        process.wait()
        raise
    return HttpServer(process, url.replace("127.0.0.1", "localhost"), stderr, token, certs)


@asynccontextmanager
async def sdk_session(
    url: str, *, token: str | None, verify: ssl.SSLContext | bool
) -> AsyncIterator[ClientSession]:
    """An initialised ``ClientSession`` over the SDK's Streamable HTTP client."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with (
        httpx2.AsyncClient(headers=headers, verify=verify, timeout=10.0 * SCALE) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def body_of(result: CallToolResult) -> dict[str, Any]:
    block = result.content[0]
    assert isinstance(block, TextContent)
    body: dict[str, Any] = json.loads(block.text)
    return body


def good_call(server: HttpServer) -> tuple[int, dict[str, Any]]:
    """Through the SDK's client over HTTPS: the number of tools listed and the read's result."""

    async def exchange() -> tuple[int, dict[str, Any]]:
        with anyio.fail_after(EXCHANGE_TIMEOUT * SCALE):
            async with sdk_session(
                server.url, token=server.token, verify=server.certs.client_context()
            ) as session:
                listed = await session.list_tools()
                result = await session.call_tool(READ_TOOL, {})
                assert result.is_error is False, body_of(result)
                return len(listed.tools), body_of(result)

    return anyio.run(exchange)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def open_tls(server: HttpServer) -> ssl.SSLSocket:
    """A TLS connection to ``server`` for requests written by hand (slow bodies, held slots)."""
    plain = socket.create_connection(("127.0.0.1", server.port), timeout=10.0 * SCALE)
    return server.certs.client_context().wrap_socket(plain, server_hostname="localhost")


def read_head(conn: ssl.SSLSocket) -> tuple[int, str]:
    """The status and the head (status line and headers) of the next response on ``conn``."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    head = data.partition(b"\r\n\r\n")[0].decode("latin-1")
    return int(head.split(" ", 2)[1]), head


def request_head(server: HttpServer, headers: Mapping[str, str], length: int) -> bytes:
    """A POST's head announcing ``length`` body bytes, with the token and ``headers``."""
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: localhost:{server.port}",
        f"Authorization: Bearer {server.token}",
        *(f"{k}: {v}" for k, v in {**MCP_HEADERS, **headers}.items()),
        f"Content-Length: {length}",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def raw_request(
    server: HttpServer,
    method: str,
    body: bytes | str | Iterable[bytes] | None = None,
    headers: Mapping[str, str] | None = None,
    path: str = "/mcp",
) -> Answer:
    """One plain HTTPS request (``http.client``), for what the SDK's client never sends; an
    iterable ``body`` is sent chunked (no Content-Length)."""
    connection = http.client.HTTPSConnection(
        "localhost", server.port, context=server.certs.client_context(), timeout=10.0 * SCALE
    )
    chunked = body is not None and not isinstance(body, bytes | str)
    try:
        try:
            connection.request(
                method, path, body=body, headers=dict(headers or {}), encode_chunked=chunked
            )
        except (ssl.SSLEOFError, BrokenPipeError, ConnectionResetError):
            # a body refused by its Content-Length is answered and the connection closed
            # while we may still be sending it (a race under load): read that answer anyway
            if connection.sock is None:
                raise
            response = http.client.HTTPResponse(connection.sock, method=method)
            response.begin()
        else:
            response = connection.getresponse()
        return Answer(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
    finally:
        connection.close()
