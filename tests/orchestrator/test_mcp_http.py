"""``herdr-orchestrator mcp --http`` over TLS: the MCP SDK's own client lists the tools and makes
a read-only call against a simulator, and every bad request of issue 18 is refused with its
status, logged without the token, and never takes the server down (a good call follows each).

One server process per module (TLS with a ``trustme`` CA and a certificate for ``localhost``
only, a token file, a 1 s body timeout, four requests in flight at most, a 64 KiB body cap),
on one simulator; each test is self-contained, so any xdist split works.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from orchestrator.pipeline.registry import ALL_TOOLS
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.http_support import (
    EXCHANGE_TIMEOUT,
    INITIALIZE,
    MCP_HEADERS,
    HttpServer,
    good_call,
    make_certs,
    open_tls,
    raw_request,
    read_head,
    request_head,
    sdk_session,
    simulator,
    start_http_server,
    tool_env,
)
from tests.orchestrator.support import received
from tests.waits import SCALE, wait_until

TOKEN = "tok-3f9a1c7e5b2d4a6f8e0c"
BODY_TIMEOUT = 1.0
MAX_CONNECTIONS = 4
MAX_BODY = 65536
ALLOWED_ORIGIN = "https://app.example:8443"


@pytest.fixture(scope="module")
def sim() -> Iterator[HerdrServer]:
    with simulator() as server:
        yield server


@pytest.fixture(scope="module")
def server(sim: HerdrServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("mcp-http")
    certs = make_certs(root / "tls", "localhost")
    extra = [
        "--body-timeout",
        str(BODY_TIMEOUT),
        "--max-connections",
        str(MAX_CONNECTIONS),
        "--max-body-bytes",
        str(MAX_BODY),
        "--allow-origin",
        ALLOWED_ORIGIN,
    ]
    process = start_http_server(tool_env(sim, root / "state"), root, certs, TOKEN, extra)
    try:
        yield process
    finally:
        process.stop()


def auth(token: str = TOKEN) -> dict[str, str]:
    return {**MCP_HEADERS, "Authorization": f"Bearer {token}"}


def still_serves(server: HttpServer) -> None:
    """The server is up and a whole good exchange works (the proof it did not crash)."""
    assert server.alive(), server.log()
    count, body = good_call(server)
    assert count == len(ALL_TOOLS)
    assert body["ok"] is True


def test_the_sdk_client_lists_and_calls_over_https(server: HttpServer, sim: HerdrServer) -> None:
    """The SDK's Streamable HTTP client, TLS checked against the test CA: every tool is
    listed and a read-only low-level call reaches the simulator and succeeds."""
    wire = received(sim)
    count, body = good_call(server)
    assert count == len(ALL_TOOLS)
    assert body["ok"] is True and body["command"].startswith("herdr workspace list")
    assert any(method.startswith("workspace.list") for method in wire.methods())


def _chunks(total: int) -> Iterator[bytes]:
    step = 8192
    for start in range(0, total, step):
        yield b"x" * min(step, total - start)


def _with(**headers: str) -> dict[str, str]:
    """The good headers (token included) with ``headers`` replacing some."""
    return {**auth(), **{k.replace("_", "-"): v for k, v in headers.items()}}


_NO_TOKEN = MCP_HEADERS
_JSON = INITIALIZE
#: case → (headers, body, path, status, what the refusal says)
BAD_REQUESTS: dict[str, tuple[dict[str, str], object, str, int, str]] = {
    "missing token": (_NO_TOKEN, _JSON, "/mcp", 401, "missing bearer token"),
    "wrong token": (auth("not-the-token"), _JSON, "/mcp", 401, "wrong bearer token"),
    "empty token": (_with(Authorization="Bearer "), _JSON, "/mcp", 401, "empty"),
    "not bearer": (_with(Authorization=f"Basic {TOKEN}"), _JSON, "/mcp", 401, "Bearer scheme"),
    "token in the URL": (auth(), _JSON, f"/mcp?access_token={TOKEN}", 400, "query string"),
    "token in the URL only": (_NO_TOKEN, _JSON, f"/mcp?token={TOKEN}", 400, "query string"),
    "cross-origin": (_with(Origin="https://evil.example"), _JSON, "/mcp", 403, "Origin"),
    "null origin": (_with(Origin="null"), _JSON, "/mcp", 403, "Origin"),
    "rebound Host": (_with(Host="evil.example:443"), _JSON, "/mcp", 421, "Host"),
    "text content type": (_with(Content_Type="text/plain"), _JSON, "/mcp", 415, "Content-Type"),
    "form content type": (
        _with(Content_Type="application/x-www-form-urlencoded"),
        "a=1",
        "/mcp",
        415,
        "Content-Type",
    ),
    "oversize body": (auth(), b"x" * (MAX_BODY + 1), "/mcp", 413, "larger than"),
    "oversize chunked body": (auth(), "chunked", "/mcp", 413, "larger than"),
    "non-JSON body": (auth(), "this is not json", "/mcp", 400, "Parse error"),
}


@pytest.mark.parametrize("case", BAD_REQUESTS)
def test_a_bad_request_is_refused_and_logged_and_the_server_lives_on(
    server: HttpServer, sim: HerdrServer, case: str
) -> None:
    headers, body, path, status, says = BAD_REQUESTS[case]
    wire = received(sim)
    sent = _chunks(MAX_BODY + 10) if body == "chunked" else body
    assert sent is None or isinstance(sent, bytes | str | Iterator)
    answer = raw_request(server, "POST", sent, headers, path=path)
    assert answer.status == status, answer
    error = answer.json()["error"]
    assert says in error["message"]
    if status == 401:
        assert answer.headers["www-authenticate"].startswith("Bearer")
    assert wire.methods() == []  # nothing reached Herdr
    # the guard logs its reason; a refusal of the SDK's own is logged with its status
    line = "answered 400" if case == "non-JSON body" else f"{status} {error['message']}"

    def logged() -> str | None:
        text = server.log()
        return text if line in text else None

    log = wait_until(logged, what=f"the log line {line!r}")
    assert TOKEN not in log  # neither the query string nor a header is ever logged
    still_serves(server)


def test_a_slow_body_is_refused_after_the_body_timeout(server: HttpServer) -> None:
    """A client that announces a body and sends part of it gets 408 once the body timeout
    passes, not never; the slot it held is free again."""
    with open_tls(server) as conn:
        conn.sendall(request_head(server, {}, 100) + b'{"jsonrpc"')
        started = time.monotonic()
        status, head = read_head(conn)
        waited = time.monotonic() - started
    assert status == 408, head
    assert BODY_TIMEOUT * 0.9 <= waited <= BODY_TIMEOUT + 5.0 * SCALE
    assert "408 request body not received" in server.log()
    still_serves(server)


def test_past_the_connection_cap_a_request_is_refused_with_503(server: HttpServer) -> None:
    """Requests that hold their slot (a body promised, ``Expect: 100-continue`` answered when
    the guard starts reading it) fill the cap; the next one is refused at once with 503 and
    Retry-After, and once they go away a good call works."""
    held = []
    refused = ""
    try:
        for _ in range(MAX_CONNECTIONS + 1):
            conn = open_tls(server)
            held.append(conn)
            conn.sendall(request_head(server, {"Expect": "100-continue"}, 100))
            status, head = read_head(conn)
            if status == 503:
                refused = head
                break
            assert status == 100, head
        assert refused, "no request was refused past the cap"
        assert len(held) <= MAX_CONNECTIONS + 1
        assert "retry-after: 1" in refused.lower()
    finally:
        for conn in held:
            conn.close()

    def free() -> bool:
        return raw_request(server, "GET", headers=auth()).status != 503

    wait_until(free, what="the held slots to free")
    still_serves(server)


def _failure(exc: BaseException) -> str:
    """Every message in ``exc``'s groups and causes, for asserting on the root reason."""
    parts = [f"{type(exc).__name__}: {exc}"]
    if isinstance(exc, BaseExceptionGroup):
        parts += [_failure(inner) for inner in exc.exceptions]
    if exc.__cause__ is not None:
        parts.append(_failure(exc.__cause__))
    return " | ".join(parts)


def _connect(url: str, token: str | None, verify: object) -> str:
    """Try a session; the failure's text (the test fails if it connects)."""

    async def attempt() -> None:
        with anyio.fail_after(EXCHANGE_TIMEOUT * SCALE):
            async with sdk_session(url, token=token, verify=verify):  # type: ignore[arg-type]
                pass

    try:
        anyio.run(attempt)
    except BaseException as exc:  # a group of whatever the transport raised
        return _failure(exc)
    raise AssertionError(f"connected to {url}")


def test_a_certificate_that_does_not_match_the_host_is_refused(server: HttpServer) -> None:
    """The certificate names ``localhost`` only: the SDK client reaching the same server as
    127.0.0.1 refuses it, and so does a client that does not trust the test CA."""
    by_ip = server.url.replace("localhost", "127.0.0.1")
    assert "CERTIFICATE_VERIFY_FAILED" in _connect(by_ip, TOKEN, server.certs.client_context())
    assert "CERTIFICATE_VERIFY_FAILED" in _connect(server.url, TOKEN, True)
    still_serves(server)


def test_the_sdk_client_with_a_wrong_token_is_told_why(server: HttpServer) -> None:
    assert "wrong bearer token" in _connect(server.url, "nope", server.certs.client_context())
    assert "missing bearer token" in _connect(server.url, None, server.certs.client_context())
    still_serves(server)


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://localhost:5173", 200),  # a loopback origin on a loopback bind
        ("https://127.0.0.1:9000", 200),
        (ALLOWED_ORIGIN, 200),  # --allow-origin
        ("https://app.example:8444", 403),  # same host, another port: another origin
        ("https://localhost.evil.example", 403),
    ],
)
def test_the_origin_allow_list(server: HttpServer, origin: str, status: int) -> None:
    answer = raw_request(server, "POST", INITIALIZE, {**auth(), "Origin": origin})
    assert answer.status == status, answer


def test_a_loopback_bind_accepts_only_loopback_hosts(server: HttpServer) -> None:
    for host, status in ((f"localhost:{server.port}", 200), (f"127.0.0.1:{server.port}", 200)):
        answer = raw_request(server, "POST", INITIALIZE, {**auth(), "Host": host})
        assert answer.status == status, (host, answer)


def test_the_token_file_is_the_secret(tmp_path: Path) -> None:
    """Guard in-process: the configured token and nothing else (whitespace around it is the
    header's, not the token's) passes; a prefix or an extension of it does not."""
    from orchestrator.mcp_http.guard import Guard, Refused
    from orchestrator.mcp_http.settings import HttpSettings

    async def app(*_: object) -> None:
        raise AssertionError("not reached")

    guard = Guard(app, HttpSettings(host="127.0.0.1", port=0, token=TOKEN))

    def check(value: str) -> int:
        scope = {
            "type": "http",
            "method": "GET",
            "path": "/mcp",
            "query_string": b"",
            "headers": [(b"host", b"localhost"), (b"authorization", value.encode())],
        }
        try:
            guard._check_headers(scope)
        except Refused as refused:
            return refused.status
        return 200

    assert check(f"Bearer {TOKEN}") == 200
    assert check(f"bearer   {TOKEN}  ") == 200
    assert check(f"Bearer {TOKEN[:-1]}") == 401
    assert check(f"Bearer {TOKEN}x") == 401
    assert check(f"Bearer {TOKEN} {TOKEN}") == 401


def test_a_call_is_answered_with_one_json_body(server: HttpServer) -> None:
    """The setup guide's curl request, as written: one JSON body back (not an SSE stream,
    which cost twice the CPU per call), with the server's name and a session id."""
    answer = raw_request(server, "POST", INITIALIZE, auth())
    assert answer.status == 200, answer
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["result"]["serverInfo"]["name"] == "herdr-orchestrator"
    assert answer.headers["mcp-session-id"]


def test_control_characters_from_a_request_are_escaped_in_the_log(server: HttpServer) -> None:
    """A decoded ``%0a`` in the path (no token: refused 401 and logged) stays in its line."""
    forged = "2026-12-06%2004:00:00,000%20WARNING%20orchestrator%20FORGED"
    answer = raw_request(server, "POST", "{}", MCP_HEADERS, path="/mcp%0a" + forged)
    assert answer.status == 401

    def logged() -> str | None:
        text = server.log()
        return text if "FORGED" in text else None

    log = wait_until(logged, what="the refusal's log line")
    line = forged.replace("%20", " ")
    assert not any(text.startswith(line) for text in log.splitlines())
    assert "/mcp\\x0a" + line in log
