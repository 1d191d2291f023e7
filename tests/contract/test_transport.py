"""Herdr's transport: one request per connection, limits, bad input, the socket file."""

from __future__ import annotations

import gc
import json
import socket
import stat
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator, SimulatorError
from herdr_sim import server as herdr_server
from herdr_sim.client import request, send_line
from herdr_sim.wire import request_json
from pytest_herdr.backends import HerdrServer
from tests.contract.helpers import hang_up, invalid_request, raw_exchange
from tests.waits import SCALE


def test_ping_answers_version_protocol_and_capabilities(herdr_server: HerdrServer) -> None:
    response = request(herdr_server.socket_path, "ping", request_id="x")
    assert response["id"] == "x"
    result = response["result"]
    assert result["type"] == "pong"
    assert result["protocol"] == 22
    assert result["version"] == "0.9.2"
    assert isinstance(result["capabilities"]["live_handoff"], bool)


@pytest.mark.herdr_sim_only
def test_protocol_and_version_are_configurable(short_dir: Path) -> None:
    with Simulator(socket_path=short_dir / "s.sock", protocol=14, version="0.1.0") as other:
        pong = request(other.socket_path, "ping")["result"]
    assert (pong["protocol"], pong["version"]) == (14, "0.1.0")


@pytest.mark.herdr_sim_only
def test_path_settings_accept_strings(short_dir: Path) -> None:
    paths: dict[str, Any] = {
        "socket_path": str(short_dir / "s.sock"),
        "runtime_dir": str(short_dir / "r"),
    }
    with Simulator(**paths) as other:
        assert other.socket_path == short_dir / "s.sock"
        assert request(str(other.socket_path), "ping")["result"]["type"] == "pong"
        assert other.cli_path == short_dir / "r" / "bin" / "herdr"


def test_one_response_line_then_close(herdr_server: HerdrServer) -> None:
    reply = raw_exchange(herdr_server.socket_path, b'{"id":"a","method":"ping","params":{}}\n')
    assert reply.count(b"\n") == 1 and reply.endswith(b"\n")
    assert json.loads(reply)["id"] == "a"


def test_second_request_on_same_connection_is_ignored(herdr_server: HerdrServer) -> None:
    reply = raw_exchange(
        herdr_server.socket_path,
        b'{"id":"a","method":"ping","params":{}}\n{"id":"b","method":"ping","params":{}}\n',
    )
    assert [json.loads(line)["id"] for line in reply.splitlines()] == ["a"]


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        (b"not json\n", "invalid request"),
        (b'["ping"]\n', "invalid request"),
        (b'{"id":"q","method":"no.such","params":{}}\n', "unknown variant `no.such`"),
        (b'{"id":"q","method":"pane.send_text","params":{"pane_id":"w1:p1"}}\n', "`text`"),
        (b'{"id":"q","method":"pane.get","params":{"pane_id":5}}\n', "invalid type"),
        (
            b'{"id":"q","method":"pane.read","params":{"pane_id":"x","source":"bogus"}}\n',
            "unknown variant `bogus`",
        ),
        (b'{"id":5,"method":"ping","params":{}}\n', "invalid request"),
        (
            b'{"id":"q","method":"pane.split","params":{"direction":"right","ratio":NaN}}\n',
            "invalid request",
        ),
    ],
)
def test_unparseable_requests_get_invalid_request_with_empty_id(
    herdr_server: HerdrServer, payload: bytes, needle: str
) -> None:
    assert needle in invalid_request(json.loads(raw_exchange(herdr_server.socket_path, payload)))


def test_unknown_extra_params_are_ignored_like_serde(herdr_server: HerdrServer) -> None:
    reply = request(herdr_server.socket_path, "workspace.list", {"surprise": 1})
    assert reply["result"]["type"] == "workspace_list"


def test_empty_line_and_invalid_utf8_close_without_answer(herdr_server: HerdrServer) -> None:
    assert raw_exchange(herdr_server.socket_path, b"   \n") == b""
    assert raw_exchange(herdr_server.socket_path, b'{"id":"\xff\xfe","method":"ping"}\n') == b""


def test_oversized_first_line_is_dropped_and_server_lives(herdr_server: HerdrServer) -> None:
    big = b'{"id":"' + b"a" * (1024 * 1024 + 10) + b'","method":"ping","params":{}}\n'
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(herdr_server.socket_path))
        try:
            sock.sendall(big)
            reply = sock.recv(100)
        except (BrokenPipeError, ConnectionResetError):
            reply = b""
    assert reply == b""
    assert request(herdr_server.socket_path, "ping")["result"]["type"] == "pong"


#: Herdr's limit on the first request line (``MAX_INITIAL_REQUEST_BYTES``)
LINE_LIMIT = 1024 * 1024


def _ping_line(size: int) -> bytes:
    """A ping request of exactly ``size`` bytes before its newline (padded with spaces,
    which the server trims)."""
    ping = b'{"id":"edge","method":"ping","params":{}}'
    return ping + b" " * (size - len(ping)) + b"\n"


def test_a_request_line_of_exactly_the_limit_is_answered(herdr_server: HerdrServer) -> None:
    """The 1 MiB limit is inclusive: Herdr reads up to the newline and refuses only once
    more than ``MAX_INITIAL_REQUEST_BYTES`` bytes came without one, so a line of exactly
    1 MiB (newline aside) is answered and one byte more is dropped. Planted-bug check:
    ``>`` turned into ``>=`` in the server's first-line read silently drops the 1 MiB
    request, and fails here."""
    at_limit = raw_exchange(herdr_server.socket_path, _ping_line(LINE_LIMIT))
    assert at_limit, "a request line of exactly 1 MiB must be answered, not dropped"
    assert json.loads(at_limit)["result"]["type"] == "pong"
    over = raw_exchange(herdr_server.socket_path, _ping_line(LINE_LIMIT + 1))
    assert over == b"", f"a request line of 1 MiB + 1 byte must be dropped: {over[:200]!r}"


@pytest.mark.herdr_sim_only
def test_silent_client_is_dropped_after_first_line_timeout(short_dir: Path) -> None:
    with Simulator(socket_path=short_dir / "t.sock", first_line_timeout=0.3) as other:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(other.socket_path))
            started = time.monotonic()
            assert sock.recv(10) == b""
            assert time.monotonic() - started < 4 * SCALE
        assert request(other.socket_path, "ping")["result"]["type"] == "pong"


@pytest.mark.herdr_sim_only
def test_default_first_line_timeout_is_five_seconds(sim: Simulator) -> None:
    assert sim.config.first_line_timeout == 5.0
    assert sim.config.max_request_bytes == 1024 * 1024


def test_control_characters_and_non_utf8_text_are_safe(
    herdr_server: HerdrServer, root: str
) -> None:
    weird = "a\x00b\x07c\x1b[31mdé\U0001f600e"
    line = json.dumps(
        {"id": "w", "method": "pane.send_text", "params": {"pane_id": root, "text": weird}}
    )
    reply = send_line(herdr_server.socket_path, (line + "\n").encode())
    assert reply["result"]["type"] == "ok"
    label = json.dumps(
        {
            "id": "r",
            "method": "workspace.rename",
            "params": {"workspace_id": "w1", "label": "x\x1by\u0000"},
        }
    )
    assert "result" in send_line(herdr_server.socket_path, (label + "\n").encode())
    assert request(herdr_server.socket_path, "pane.get", {"pane_id": root})["result"]["pane"]
    surrogate = (
        b'{"id":"s","method":"pane.send_text","params":{"pane_id":"w1:p1","text":"\\ud800"}}\n'
    )
    # serde_json: a leading surrogate must be followed by `\u` (src/read.rs)
    assert "unexpected end of hex escape" in invalid_request(
        json.loads(raw_exchange(herdr_server.socket_path, surrogate))
    )


def test_thousand_concurrent_connections(herdr_server: HerdrServer) -> None:
    def one(index: int) -> str:
        reply = request(herdr_server.socket_path, "ping", request_id=f"c{index}", timeout=60)
        return str(reply["id"])

    with ThreadPoolExecutor(max_workers=64) as pool:
        ids = list(pool.map(one, range(1000)))
    assert ids == [f"c{i}" for i in range(1000)]


def test_thousand_simultaneously_open_connections(herdr_server: HerdrServer) -> None:
    socks = []
    try:
        for _ in range(1000):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(30)
            sock.connect(str(herdr_server.socket_path))
            socks.append(sock)
        for index, sock in enumerate(socks):
            sock.sendall(
                json.dumps({"id": str(index), "method": "ping", "params": {}}).encode() + b"\n"
            )
        for index, sock in enumerate(socks):
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(4096)
                assert chunk, "connection closed without an answer"
                data += chunk
            assert json.loads(data)["id"] == str(index)
    finally:
        for sock in socks:
            sock.close()


def test_socket_is_private(herdr_server: HerdrServer) -> None:
    mode = stat.S_IMODE(herdr_server.socket_path.stat().st_mode)
    assert mode == 0o600


@pytest.mark.herdr_sim_only
def test_created_socket_directory_is_private(short_dir: Path) -> None:
    with Simulator(socket_path=short_dir / "new" / "deeper" / "h.sock") as other:
        mode = stat.S_IMODE(other.socket_path.parent.stat().st_mode)
    assert mode == 0o700


@pytest.mark.herdr_sim_only
def test_stale_socket_is_replaced(short_dir: Path) -> None:
    path = short_dir / "stale.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens
    with Simulator(socket_path=path) as other:
        assert request(other.socket_path, "ping")["result"]["type"] == "pong"


@pytest.mark.herdr_sim_only
def test_live_socket_is_refused(sim: Simulator) -> None:
    second = Simulator(socket_path=sim.socket_path)
    with pytest.raises(SimulatorError, match="already running"):
        second.start()
    assert request(sim.socket_path, "ping")["result"]["type"] == "pong"


@pytest.mark.herdr_sim_only
def test_server_stop_answers_ok_then_unavailable_then_socket_gone(sim: Simulator, ws: str) -> None:
    assert request(sim.socket_path, "server.stop", request_id="s") == {
        "id": "s", "result": {"type": "ok"},
    }  # fmt: skip
    assert sim.wait_stopped(15)
    assert not sim.socket_path.exists()


@pytest.mark.herdr_sim_only
def test_requests_during_shutdown_get_server_unavailable(sim: Simulator) -> None:
    sim.runtime.stopping = True
    try:
        reply = request(sim.socket_path, "workspace.list", request_id="late")
    finally:
        sim.runtime.stopping = False
    assert reply == {
        "id": "late",
        "error": {"code": "server_unavailable", "message": "server is shutting down"},
    }


def test_unsupported_methods_answer_a_clear_error(herdr_server: HerdrServer) -> None:
    reply = request(herdr_server.socket_path, "server.live_handoff", request_id="p")
    assert reply["id"] == "p"
    assert reply["error"]["code"] == "not_supported_by_simulator"
    assert "server.live_handoff" in reply["error"]["message"]


@pytest.mark.herdr_sim_only
def test_client_hanging_up_abandons_a_wait(sim: Simulator, root: str) -> None:
    line = json.dumps(
        {
            "id": "w",
            "method": "pane.wait_for_output",
            "params": {
                "pane_id": root,
                "source": "recent",
                "match": {"type": "substring", "value": "never"},
            },
        }
    )
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(sim.socket_path))
    sock.sendall(line.encode() + b"\n")
    hang_up(sim, sock)


@pytest.mark.herdr_sim_only
def test_a_simulators_own_wire_taps_see_only_its_lines(sim: Simulator, short_dir: Path) -> None:
    mine: list[tuple[str, str]] = []
    sim.wire_taps.append(lambda kind, line: mine.append((kind, str(line.get("id")))))
    with Simulator(socket_path=short_dir / "other.sock") as other:
        request(other.socket_path, "ping", request_id="elsewhere")
    request(sim.socket_path, "ping", request_id="here")
    assert mine == [("request", "here"), ("response", "here")]


@pytest.mark.herdr_sim_only
def test_a_request_line_is_parsed_once_and_its_tap_sees_the_object_as_received(
    sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []

    class CountingJson:
        """The server's view of ``json``: decoding counted, everything else as is."""

        def __getattr__(self, name: str) -> Any:
            return getattr(json, name)

        def loads(self, text: str, **kwargs: Any) -> Any:
            parsed.append(text)
            return json.loads(text, **kwargs)

    monkeypatch.setattr(request_json, "json", CountingJson())
    tapped: list[dict[str, Any]] = []
    sim.wire_taps.append(lambda kind, line: tapped.append(line) if kind == "request" else None)
    line = '{"id":"once","method":"pane.list","params":{},"extra":[1]}'
    assert json.loads(raw_exchange(sim.socket_path, line.encode() + b"\n"))["id"] == "once"
    assert parsed == [line]  # trimmed, as Herdr trims before decoding
    assert tapped == [json.loads(line)]


@pytest.mark.herdr_sim_only
def test_exchange_taps_see_each_first_line_as_read_with_its_answer(sim: Simulator) -> None:
    seen: list[tuple[bytes, dict[str, object] | None]] = []
    sim.exchange_taps.append(lambda first, answer: seen.append((first, answer)))
    refused = json.loads(raw_exchange(sim.socket_path, b"{not json\n"))
    ping = b'{"id":"p","method":"ping","params":{}}\n'
    answered = json.loads(raw_exchange(sim.socket_path, ping))
    invalid_request(refused)
    assert answered["result"]["type"] == "pong"
    # each tap ran before its client could read the answer, so both are there already
    assert seen == [(b"{not json\n", refused), (ping, answered)]


@pytest.mark.herdr_sim_only
def test_exchange_taps_see_no_answer_for_a_dropped_reply(sim: Simulator) -> None:
    seen: list[tuple[bytes, dict[str, object] | None]] = []
    sim.exchange_taps.append(lambda first, answer: seen.append((first, answer)))
    sim.faults.add("ping", drop="after")
    line = b'{"id":"d","method":"ping","params":{}}\n'
    assert raw_exchange(sim.socket_path, line) == b""
    assert seen == [(line, None)]  # shown before the connection closes


@pytest.mark.herdr_sim_only
def test_stopping_with_a_client_that_stopped_reading_leaks_no_transport(
    short_dir: Path,
) -> None:
    # A subscriber that never reads: the server's writes back up in its transport's
    # buffer, which close() alone would keep open (and leak) once the loop is gone.
    leaked: list[str] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: leaked.append(repr(unraisable.exc_value))
    try:
        with Simulator(socket_path=short_dir / "s.sock", persist=False) as other:
            created = request(other.socket_path, "workspace.create", {})["result"]
            workspace_id = created["workspace"]["workspace_id"]
            stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            stuck.connect(str(other.socket_path))
            line = {"id": "s", "method": "events.subscribe",
                    "params": {"subscriptions": [{"type": "workspace.renamed"}]}}  # fmt: skip
            stuck.sendall(json.dumps(line).encode() + b"\n")
            label = "x" * 4000
            for n in range(300):  # ~1.2 MB of events the client never reads
                other.call("workspace.rename", {"workspace_id": workspace_id,
                                                "label": f"{n}{label}"})  # fmt: skip
        stuck.close()
        gc.collect()  # an unclosed transport is reported when it is collected
    finally:
        sys.unraisablehook = hook
    assert leaked == []


@pytest.mark.herdr_sim_only
def test_a_connection_accepted_as_the_server_closes_is_closed_not_leaked(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # asyncio accepts in one loop turn and builds the connection's transport on a later
    # one; a server closed in between made the build fail and asyncio dropped the accepted
    # socket unclosed (reported by the collector in some later, unrelated test). Stop the
    # server exactly there: while the transport is being built.
    leaked: list[str] = []
    stopped: list[bool] = []
    running: herdr_server.Server | None = None
    real_protocol = herdr_server._TrackedProtocol

    def stop_while_building(*args: Any, **kwargs: Any) -> herdr_server._TrackedProtocol:
        if not stopped:
            stopped.append(True)
            assert running is not None
            running.stop_listening()
        return real_protocol(*args, **kwargs)

    monkeypatch.setattr(herdr_server, "_TrackedProtocol", stop_while_building)
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: leaked.append(repr(unraisable.exc_value))
    try:
        with Simulator(socket_path=short_dir / "s.sock", persist=False) as other:
            running = other._server
            assert running is not None
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect(str(other.socket_path))
            client.settimeout(10)
            assert client.recv(1) == b""  # closed by the server, not left hanging
            assert stopped
        client.close()
        gc.collect()  # an unclosed socket or transport is reported when collected
    finally:
        sys.unraisablehook = hook
    assert leaked == []
