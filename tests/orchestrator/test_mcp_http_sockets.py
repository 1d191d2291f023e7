"""The HTTP server bounds its client sockets before anything is authenticated: a connection
that sends nothing or half a request head is closed after ``--head-timeout``, at most
``--max-sockets`` are held at once (a newcomer evicts the oldest one that has sent no head),
so idle sockets, no token needed, can neither exhaust descriptors nor starve a client that
sends its request.

Two servers on one simulator: ``quick`` (a 1 s head timeout) and ``patient`` (a head
timeout far longer than any test, so only the socket cap can free a slot). Every test opens a
bounded number of local connections.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.pipeline.registry import ALL_TOOLS
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.http_support import (
    HttpServer,
    good_call,
    make_certs,
    open_tls,
    simulator,
    start_http_server,
    tool_env,
)
from tests.waits import SCALE, wait_until

TOKEN = "tok-7d2e9a4c1b8f6e3a0d5c"
HEAD_TIMEOUT = 1.0
MAX_SOCKETS = 8


@pytest.fixture(scope="module")
def sim() -> Iterator[HerdrServer]:
    with simulator() as server:
        yield server


def _server(sim: HerdrServer, root: Path, head_timeout: float) -> HttpServer:
    certs = make_certs(root / "tls", "localhost")
    extra = ["--head-timeout", str(head_timeout), "--max-sockets", str(MAX_SOCKETS)]
    return start_http_server(tool_env(sim, root / "state"), root, certs, TOKEN, extra)


@pytest.fixture(scope="module")
def quick(sim: HerdrServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    server = _server(sim, tmp_path_factory.mktemp("quick"), HEAD_TIMEOUT)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def patient(sim: HerdrServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    server = _server(sim, tmp_path_factory.mktemp("patient"), 600.0)
    try:
        yield server
    finally:
        server.stop()


def still_serves(server: HttpServer) -> None:
    assert server.alive(), server.log()
    count, body = good_call(server)
    assert count == len(ALL_TOOLS)
    assert body["ok"] is True


def _closed_by_server(conn: socket.socket, timeout: float) -> float:
    """Seconds until the server closed ``conn`` (end of stream or a reset); fails past
    ``timeout``."""
    started = time.monotonic()
    conn.settimeout(timeout)
    try:
        while conn.recv(4096):
            pass
    except (ConnectionResetError, ssl.SSLError):
        pass
    except TimeoutError:
        raise AssertionError(f"the server kept the connection open past {timeout:.1f}s") from None
    return time.monotonic() - started


def _plain(server: HttpServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10.0 * SCALE)


def _closed_now(conn: socket.socket) -> bool:
    """The server has closed ``conn`` (checked without waiting)."""
    conn.setblocking(False)
    try:
        return conn.recv(1) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


def _fds(server: HttpServer) -> int:
    return sum(1 for _ in Path(f"/proc/{server.process.pid}/fd").iterdir())


def test_a_connection_that_never_handshakes_is_closed_after_the_head_timeout(
    quick: HttpServer,
) -> None:
    conn = _plain(quick)
    try:
        waited = _closed_by_server(conn, HEAD_TIMEOUT + 10.0 * SCALE)
    finally:
        conn.close()
    assert waited >= HEAD_TIMEOUT * 0.9
    still_serves(quick)


def test_half_a_request_head_is_closed_after_the_head_timeout(quick: HttpServer) -> None:
    conn = open_tls(quick)
    try:
        conn.sendall(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n")  # no blank line: never done
        waited = _closed_by_server(conn, HEAD_TIMEOUT + 10.0 * SCALE)
    finally:
        conn.close()
    assert waited >= HEAD_TIMEOUT * 0.9
    wait_until(lambda: "no complete request head within" in quick.log(), what="the log line")
    still_serves(quick)


def test_idle_sockets_past_the_cap_are_closed_and_cannot_starve_a_client(
    patient: HttpServer,
) -> None:
    """Three times the cap of sockets that send nothing (no token, no TLS hello): the server
    holds at most the cap of them (its descriptors stay bounded), the rest are closed at once,
    and an authenticated client is served while they are all still connected."""
    baseline = _fds(patient)
    idle = [_plain(patient) for _ in range(3 * MAX_SOCKETS)]
    closed: set[int] = set()

    def evicted() -> bool:
        for index, conn in enumerate(idle):
            if index not in closed and _closed_now(conn):
                closed.add(index)
        return len(closed) >= 2 * MAX_SOCKETS

    try:
        wait_until(evicted, what="the sockets past the cap to be closed")
        assert _fds(patient) <= baseline + MAX_SOCKETS
        still_serves(patient)  # its sockets evict the oldest idle ones
        assert _fds(patient) <= baseline + MAX_SOCKETS + 2
    finally:
        for conn in idle:
            conn.close()
    assert "sent no request head" in patient.log()
