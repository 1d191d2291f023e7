"""The tools' error paths and guards: preview, preview-required, bad arguments, unknown ids,
no server (reported once), timeouts and a connection dropped mid-call (never re-sent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orchestrator.client.transports import SocketTransport
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import run_tool
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import Kind, client, context, received
from tests.results import assert_refused, field

KINDS: list[Kind] = ["socket", "cli", "auto"]


def make_workspace(server: HerdrServer, cwd: Path) -> str:
    assert server.sim is not None
    created = server.sim.call("workspace.create", {"cwd": str(cwd)})["result"]
    pane: str = created["root_pane"]["pane_id"]
    return pane


R2_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("_dsh_herdr_pane_run", {"pane": "w1:p1", "command": "rm -rf /tmp/x"}, "rm -rf"),
    (
        "_dsh_herdr_agent_start",
        {"name": "a1", "kind": "pi", "pane": "w1:p1", "args": ["--api-key", "k3y"]},
        "k3y",
    ),
    ("_dsh_herdr_agent_prompt", {"agent": "a1", "prompt": "the secret plan"}, "secret"),
]


@pytest.mark.parametrize(("tool", "args", "secret"), R2_CALLS)
def test_preview_calls_nothing_and_redacts_the_target(
    herdr_server: HerdrServer, tool: str, args: dict[str, Any], secret: str
) -> None:
    rec = received(herdr_server)
    result = run_tool(tool, {**args, "preview": True}, context(herdr_server, "auto"))
    assert result["ok"] is True and result["exitCode"] is None
    data = field(result, "data")
    assert data["preview"] is True
    assert data["action"] == tool.removeprefix("_dsh_herdr_").replace("_", ".", 1)
    assert secret not in repr(data["target"]) and secret not in result["command"]
    assert "redacted" in repr(data["target"])
    assert rec.methods(pings=True) == []


@pytest.mark.parametrize(("tool", "args", "secret"), R2_CALLS)
def test_preview_required_refuses_r2_calls_without_preview(
    herdr_server: HerdrServer, tool: str, args: dict[str, Any], secret: str
) -> None:
    rec = received(herdr_server)
    ctx = context(herdr_server, "auto", {"DSH_HERDR_PREVIEW_REQUIRED": "1"})
    result = run_tool(tool, args, ctx)
    assert_refused(result, "preview_required")
    assert field(result, "data", "error", "code") == "preview_required"
    assert secret not in repr(result)
    assert rec.methods(pings=True) == []
    assert run_tool(tool, {**args, "preview": True}, ctx)["ok"] is True


def test_preview_required_leaves_r0_and_r1_tools_alone(herdr_server: HerdrServer) -> None:
    ctx = context(herdr_server, "socket", {"DSH_HERDR_PREVIEW_REQUIRED": "1"})
    assert run_tool("_dsh_herdr_workspace_list", {}, ctx)["ok"] is True


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"pane": "w1:p1"}, "'direction' is a required property"),
        ({"pane": "w1:p1", "direction": "left"}, "direction"),
        ({"pane": "w1:p1", "direction": "right", "focus": True}, "focus"),
    ],
)
def test_invalid_arguments_are_a_result_and_reach_nothing(
    herdr_server: HerdrServer, args: dict[str, Any], problem: str
) -> None:
    rec = received(herdr_server)
    result = run_tool("_dsh_herdr_pane_split", args, context(herdr_server, "socket"))
    assert_refused(result, "invalid_arguments")
    assert problem in field(result, "data", "error", "message")
    assert rec.methods(pings=True) == []


def test_an_unknown_tool_is_a_result() -> None:
    result = run_tool("_dsh_herdr_nope", {})
    assert_refused(result, "unknown_tool")


@pytest.mark.parametrize("kind", ["socket", "cli"])
@pytest.mark.parametrize(
    ("tool", "args", "code", "message"),
    [
        ("_dsh_herdr_workspace_get", {"workspace": "w99"}, "workspace_not_found",
         "workspace w99 not found"),
        ("_dsh_herdr_tab_get", {"tab": "w99:t1"}, "tab_not_found", "tab w99:t1 not found"),
        ("_dsh_herdr_pane_get", {"pane": "w99:p1"}, "pane_not_found", "pane w99:p1 not found"),
        ("_dsh_herdr_agent_get", {"agent": "ghost"}, "agent_not_found",
         "agent target ghost not found"),
    ],
)  # fmt: skip
def test_unknown_ids_report_herdrs_code_in_data_error(
    herdr_server: HerdrServer, kind: Kind, tool: str, args: dict[str, Any], code: str, message: str
) -> None:
    result = run_tool(tool, args, context(herdr_server, kind))
    assert (result["ok"], result["exitCode"], field(result, "errorCode")) == (False, 1, code)
    assert field(result, "data", "error") == {"code": code, "message": message}
    assert f'"code":"{code}"' in result["stderr"]


@pytest.mark.parametrize("kind", ["socket", "cli"])
def test_a_bad_regex_is_herdrs_invalid_regex(
    herdr_server: HerdrServer, tmp_path: Path, kind: Kind
) -> None:
    pane = make_workspace(herdr_server, tmp_path)
    args = {"pane": pane, "pattern": "(", "regex": True, "timeout": 1000}
    result = run_tool("_dsh_herdr_pane_wait_output", args, context(herdr_server, kind))
    assert field(result, "errorCode") == "invalid_regex"


# -- no server ---------------------------------------------------------------------------------


def counting_herdr(server: HerdrServer, directory: Path) -> tuple[Path, Path]:
    """A ``herdr`` that logs each run, then runs the server's own CLI."""
    log = directory / "runs.log"
    wrapper = directory / "herdr"
    wrapper.write_text(f'#!/bin/sh\necho run >> "{log}"\nexec "{server.cli_path}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, log


@pytest.mark.parametrize("kind", KINDS)
def test_server_not_running_is_reported_once_not_retried(
    herdr_server: HerdrServer,
    short_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: Kind,
) -> None:
    missing = short_dir / "gone.sock"
    wrapper, log = counting_herdr(herdr_server, short_dir)
    connects: list[str] = []
    real_request = SocketTransport.request

    def counted(self: SocketTransport, *args: Any, **kw: Any) -> dict[str, Any]:
        connects.append(args[0])
        return real_request(self, *args, **kw)

    monkeypatch.setattr(SocketTransport, "request", counted)
    env = {**herdr_server.env, "HERDR_SOCKET_PATH": str(missing)}
    from orchestrator.client.sync import HerdrClient

    ctx = ToolContext.with_client(
        HerdrClient.build(kind, socket_path=missing, herdr=wrapper, env=env), env
    )
    result = run_tool("_dsh_herdr_workspace_create", {"cwd": str(short_dir)}, ctx)
    assert_refused(result, "server_not_running")
    assert field(result, "data", "error", "message") == (
        f"no herdr server is running at {missing}; run `herdr` to start or attach it"
    )
    runs = log.read_text().count("run") if log.exists() else 0
    # one attempt: the socket's (socket), the CLI's (cli), or the socket's connect then ONE
    # degraded CLI run that reports it (auto)
    assert (len(connects), runs) == {"socket": (1, 0), "cli": (0, 1), "auto": (1, 1)}[kind]


# -- timeouts and dropped connections ----------------------------------------------------------


@pytest.mark.parametrize("kind", ["socket", "cli"])
def test_a_slow_server_hits_the_clients_deadline(
    herdr_server: HerdrServer, herdr_faults: Any, kind: Kind
) -> None:
    herdr_faults.add("workspace.list", delay=3.0, times=1)
    ctx = ToolContext.with_client(client(herdr_server, kind, timeout=0.5), herdr_server.env)
    result = run_tool("_dsh_herdr_workspace_list", {}, ctx)
    assert_refused(result, "transport_error")
    assert "no answer within" in field(result, "data", "error", "message")


@pytest.mark.parametrize("kind", KINDS)
def test_a_mutation_dropped_after_it_ran_is_reported_never_resent(
    herdr_server: HerdrServer, herdr_faults: Any, tmp_path: Path, kind: Kind
) -> None:
    pane = make_workspace(herdr_server, tmp_path)
    rec = received(herdr_server)
    herdr_faults.add("pane.split", drop="after", times=1)
    result = run_tool(
        "_dsh_herdr_pane_split", {"pane": pane, "direction": "right"}, context(herdr_server, kind)
    )
    assert result["ok"] is False
    assert len(rec.calls("pane.split")) == 1
    assert herdr_server.sim is not None
    panes = herdr_server.sim.call("pane.list", {})["result"]["panes"]
    assert len(panes) == 2  # it was applied: exactly once
    assert (
        field(result, "errorCode") == "transport_error"
    )  # the CLI: Rust's `Error: …EmptyResponse`
    assert field(result, "data", "maybeApplied") is True


def test_auto_repeats_a_dropped_read_through_the_cli(
    herdr_server: HerdrServer, herdr_faults: Any
) -> None:
    rec = received(herdr_server)
    herdr_faults.add("workspace.list", drop="after", times=1)
    result = run_tool("_dsh_herdr_workspace_list", {}, context(herdr_server, "auto"))
    assert (result["ok"], result["transport"]) == (True, "cli")
    assert rec.ids("workspace.list") == ["cli:workspace:list", "cli:workspace:list"]
