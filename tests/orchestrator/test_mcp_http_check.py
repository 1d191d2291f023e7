"""``herdr-orchestrator check``: over HTTPS against a ``mcp --http`` process and over stdio
(a spawned ``mcp``), each step reported, exit 0 only when all pass, and a clear reason (never
the token) when one fails: a wrong token, an untrusted certificate, no server, no Herdr."""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.check import run_check
from orchestrator.cli import _parsers, main
from orchestrator.mcp_http.settings import ENV_TOKEN
from orchestrator.pipeline.registry import ALL_TOOLS
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.http_support import (
    HttpServer,
    make_certs,
    simulator,
    start_http_server,
    tool_env,
    write_token,
)

TOKEN = "check-token-6d1e0b9a"


@pytest.fixture(scope="module")
def sim() -> Iterator[HerdrServer]:
    with simulator() as server:
        yield server


@pytest.fixture(scope="module")
def server(sim: HerdrServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("check")
    certs = make_certs(root / "tls", "localhost")
    process = start_http_server(tool_env(sim, root / "state"), root, certs, TOKEN)
    try:
        yield process
    finally:
        process.stop()


def check(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    status = run_check(_parsers()[0].parse_args(["check", *argv]), out=out)
    return status, out.getvalue()


def http(server: HttpServer, token_file: Path, *more: str) -> tuple[int, str]:
    return check("--http", server.url, "--token-file", str(token_file), *more)


def test_check_over_https_reports_every_step(server: HttpServer, tmp_path: Path) -> None:
    status, out = http(server, write_token(tmp_path / "t", TOKEN), "--ca", str(server.certs.ca))
    lines = out.splitlines()
    assert status == 0, out
    assert lines[0].startswith("ok    reachable: herdr-orchestrator ")
    assert lines[1].startswith("ok    protocol: 20")
    assert lines[2] == f"ok    tools: {len(ALL_TOOLS)} listed (24 low-level)"
    assert lines[3] == "ok    read-only call: _dsh_herdr_workspace_list: ok"


def test_check_takes_the_token_from_the_environment(
    server: HttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    status, out = check("--http", server.url, "--ca", str(server.certs.ca))
    assert status == 0, out


def test_check_with_a_wrong_token_says_so(server: HttpServer, tmp_path: Path) -> None:
    wrong = "not-the-check-token"
    status, out = http(server, write_token(tmp_path / "t", wrong), "--ca", str(server.certs.ca))
    assert status == 1
    assert out.startswith("FAIL  reachable: ") and "wrong bearer token" in out
    assert wrong not in out and TOKEN not in out


def test_check_without_the_servers_ca_fails_on_the_certificate(
    server: HttpServer, tmp_path: Path
) -> None:
    status, out = http(server, write_token(tmp_path / "t", TOKEN))
    assert status == 1
    assert out.startswith("FAIL  reachable: ") and "CERTIFICATE_VERIFY_FAILED" in out


def test_check_refuses_a_token_file_others_can_read(server: HttpServer, tmp_path: Path) -> None:
    status, out = http(server, write_token(tmp_path / "t", TOKEN, 0o644))
    assert status == 1
    assert out.startswith("FAIL  setup: ") and "chmod 600" in out and TOKEN not in out


def test_check_with_no_server_listening(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    status, out = check("--http", f"http://127.0.0.1:{port}/mcp", "--timeout", "10")
    assert status == 1
    assert out.startswith("FAIL  reachable: ") and "ConnectError" in out


def test_check_over_stdio_spawns_the_server(
    sim: HerdrServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``--http`` the check spawns ``herdr-orchestrator mcp`` with this environment,
    as a host would (through ``main``, the command's own entry)."""
    for key, value in tool_env(sim, tmp_path / "state").items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("HERDR_PANE_ID", raising=False)
    assert main(["check"]) == 0


def test_check_over_stdio_without_herdr_names_the_failing_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HERDR_SOCKET_PATH", str(tmp_path / "no-herdr.sock"))
    monkeypatch.setenv("HERDR_BIN_PATH", str(tmp_path / "no-herdr"))
    monkeypatch.setenv("HERDR_ORCHESTRATOR_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("HERDR_PANE_ID", raising=False)
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert "ok    tools: " in out
    assert "FAIL  read-only call: _dsh_herdr_workspace_list: " in out


def test_check_of_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    """A port that accepts and then says nothing: the check ends at ``--timeout`` with that
    reason, not never."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        status, out = check("--http", f"http://127.0.0.1:{port}/mcp", "--timeout", "1")
    assert status == 1
    assert out == "FAIL  reachable: no answer within 1 s (--timeout)\n"


def test_check_reports_the_policy_the_doctor_reports() -> None:
    """A server whose ``herdr_doctor`` has a ``policy`` check gets a ``policy`` line after the
    read-only call (a failed policy check fails the check); one without gets none. In process,
    over the SDK's memory streams, with stand-in tools."""
    from collections.abc import AsyncIterator, Mapping
    from contextlib import asynccontextmanager
    from typing import Any

    import anyio
    from mcp.shared.memory import create_client_server_memory_streams

    from orchestrator.check import Report, check
    from orchestrator.core.tool import Tool, ToolContext
    from orchestrator.mcp_server import build_server

    schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def listing(_args: Mapping[str, Any], _ctx: ToolContext) -> dict[str, Any]:
        return {"ok": True, "command": "herdr workspace list", "exitCode": 0, "data": {}}

    def run(policy: dict[str, str] | None) -> list[str]:
        def doctor(_args: Mapping[str, Any], _ctx: ToolContext) -> dict[str, Any]:
            checks = [{"id": "config", "status": "ok", "detail": "", "fix": ""}]
            return {"ok": True, "checks": checks + ([policy] if policy else []), "next": []}

        tools = [
            Tool("_dsh_herdr_workspace_list", "R0", "list", schema, listing),
            Tool("herdr_doctor", "R0", "doctor", schema, doctor),
        ]
        server = build_server(tools, context=ToolContext.from_env({}))

        @asynccontextmanager
        async def connect() -> AsyncIterator[Any]:
            async with (
                create_client_server_memory_streams() as (client, (read, write)),
                anyio.create_task_group() as group,
            ):
                group.start_soon(server.run, read, write, server.create_initialization_options())
                yield client
                group.cancel_scope.cancel()

        out = io.StringIO()
        anyio.run(check, connect, Report(out), 10.0)
        return out.getvalue().splitlines()

    assert len(run(None)) == 4
    # the real doctor's policy check, whose detail starts with its subject: said once
    from orchestrator.agent_tools.doctor_tool import _policy
    from orchestrator.core.config import Config
    from orchestrator.core.policy import effective_policy

    real = _policy(effective_policy(Config()))
    assert real["detail"].startswith("policy: every risk level")
    ok = run(real)
    assert ok[3:] == [
        "ok    read-only call: _dsh_herdr_workspace_list: ok",
        "ok    policy: " + real["detail"].removeprefix("policy: "),
    ]
    assert "policy: policy:" not in ok[-1]
    bad = run({"id": "policy", "status": "fail", "detail": "no policy can be applied", "fix": ""})
    assert bad[-1] == "FAIL  policy: no policy can be applied"
