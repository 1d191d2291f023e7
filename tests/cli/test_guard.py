"""The protocol guard and the dead-server error, as Herdr's own CLI tests pin them."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.cli.fake_herdr import CLOSE, FakeHerdr

if TYPE_CHECKING:
    from tests.cli.conftest import Run

RESTART = "Stop the old server to use the new version.\nStopping exits pane processes.\n"


def test_older_server_protocol_is_refused_before_the_operation(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.protocol = 14
    fake.version = "0.7.1"
    run = cli("agent", "wait", "1-1", "--until", "idle", "--timeout", "5000")
    assert run.code == 1
    assert run.out == ""
    assert run.err.count("\n") == 1
    assert run.err.startswith('{"id":"cli:agent:wait","error":{')
    error = json.loads(run.err)
    assert error["error"]["code"] == "protocol_mismatch"
    assert error["error"]["message"] == (
        "client protocol 22 is newer than server protocol 14; restart the Herdr server before "
        f"using this command. {RESTART}Run `HERDR_SOCKET_PATH={fake.path} herdr server stop`, "
        "then restart Herdr with the same socket override."
    )
    assert fake.methods() == ["ping"]
    assert fake.requests[0]["id"] == "api-client:status"


def test_newer_server_protocol_asks_to_upgrade_the_client(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.protocol = 23
    run = cli("pane", "list")
    assert run.code == 1
    assert json.loads(run.err) == {
        "id": "cli:pane:list",
        "error": {
            "code": "protocol_mismatch",
            "message": "client protocol 22 is older than server protocol 23; "
            "upgrade the Herdr client before using this command",
        },
    }
    assert fake.operations() == []


def test_mismatch_guidance_names_the_session_commands(
    fake: FakeHerdr, cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch, sock_dir: Path
) -> None:
    fake.protocol = 20
    monkeypatch.delenv("HERDR_SOCKET_PATH")
    session_sock = sock_dir / "cfg" / "sessions" / "work" / "herdr.sock"
    session_sock.parent.mkdir(parents=True)
    fake.path.rename(session_sock)
    run = cli("--session", "work", "pane", "list")
    message = json.loads(run.err)["error"]["message"]
    assert message.endswith(
        f"{RESTART}Run `herdr session stop work`, then run `herdr session attach work` again."
    )


def test_same_protocol_different_version_passes_server_errors_through(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.version = "0.7.1-compatible-build"
    fake.reply(
        "agent.wait",
        '{"id":"cli:agent:wait","error":{"message":"compatible server error",'
        '"code":"not_implemented"}}',
    )
    run = cli("agent", "wait", "1-1", "--until", "idle", "--timeout", "5000")
    assert run.code == 1
    assert run.out == ""
    # The error is re-serialized with sorted keys, exactly like Herdr's serde_json::Value.
    assert run.err == (
        '{"error":{"code":"not_implemented","message":"compatible server error"},'
        '"id":"cli:agent:wait"}\n'
    )
    assert fake.methods() == ["ping", "agent.wait"]


def test_missing_socket_reports_one_server_not_running_line(
    clean_env: Path, cli: Callable[..., Run], sock_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = sock_dir / "missing.sock"
    monkeypatch.setenv("HERDR_SOCKET_PATH", str(missing))
    monkeypatch.setenv("HERDR_SESSION", "unrelated")
    run = cli("workspace", "create")
    assert run.code == 1
    assert run.out == ""
    assert len(run.err_lines) == 1
    assert run.err == (
        '{"id":"cli:workspace:create","error":{"code":"server_not_running","message":'
        f'"no herdr server is running at {missing}; run `herdr` to start or attach it"}}}}\n'
    )


def test_stale_socket_is_not_running_and_named_session_says_attach(
    clean_env: Path, cli: Callable[..., Run], sock_dir: Path
) -> None:
    stale = sock_dir / "cfg" / "sessions" / "foo" / "herdr.sock"
    stale.parent.mkdir(parents=True)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(stale))
    listener.close()  # the file stays, nothing listens: connect is refused
    run = cli("--session", "foo", "workspace", "create")
    assert run.code == 1
    error = json.loads(run.err)
    assert error["error"]["message"] == (
        f"no herdr server is running at {stale}; "
        "run `herdr session attach foo` to start or attach it"
    )


def test_ping_without_protocol_is_a_rust_error(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    fake.result("ping", {"type": "pong", "version": "x"})
    run = cli("pane", "list")
    assert run.code == 1
    assert run.err == (
        'Error: Custom { kind: Other, error: "server ping did not include a protocol version" }\n'
    )
    assert fake.operations() == []


def test_server_hanging_up_is_an_empty_response_error(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.reply("pane.list", CLOSE)
    run = cli("pane", "list")
    assert run.code == 1
    assert run.err == "Error: Custom { kind: Other, error: EmptyResponse }\n"


def test_ping_error_envelope_is_reported_like_herdr(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.error("ping", "server_unavailable", "server is shutting down")
    run = cli("pane", "list")
    assert run.code == 1
    assert run.err == (
        "Error: Custom { kind: Other, error: ErrorResponse(ErrorResponse { "
        'id: "api-client:status", error: ErrorBody { code: "server_unavailable", '
        'message: "server is shutting down" } }) }\n'
    )
