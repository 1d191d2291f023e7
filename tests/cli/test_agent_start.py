"""`herdr agent start`'s polling loop: every way a managed start can end."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tests.cli.fake_herdr import FakeHerdr

if TYPE_CHECKING:
    from tests.cli.conftest import Run


def _agent(**fields: Any) -> dict[str, Any]:
    base = {"terminal_id": "term_1", "name": "reviewer", "pane_id": "w1:p1"}
    return {"result": {"type": "agent_info", "agent": {**base, **fields}}}


def _script_start(fake: FakeHerdr, *polls: dict[str, Any]) -> None:
    fake.result("pane.get", {"type": "pane_info", "pane": {"terminal_id": "term_1"}})
    fake.result(
        "agent.start",
        {
            "type": "agent_started",
            "agent": {"terminal_id": "term_1", "name": "reviewer", "launch_pending": True},
            "argv": ["opencode", "--model", "x"],
        },
    )
    fake.reply("agent.get", *polls)


START = ["agent", "start", "reviewer", "--kind", "opencode", "--pane", "w1:p1"]


def test_success_prints_the_started_response_with_the_final_agent(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    _script_start(
        fake,
        _agent(agent_status="unknown", launch_pending=True),
        _agent(agent="opencode", agent_status="working", launch_pending=True),
        _agent(agent="opencode", agent_status="idle", interactive_ready=True),
    )
    run = cli(*START, "--", "--model", "x")
    assert run.code == 0, run.err
    body = json.loads(run.out)
    assert body["id"] == "cli:agent:start"
    assert body["result"]["type"] == "agent_started"
    assert body["result"]["argv"] == ["opencode", "--model", "x"]
    assert body["result"]["agent"]["interactive_ready"] is True
    assert fake.methods() == [
        "ping", "pane.get",
        "ping", "agent.start",
        "ping", "agent.get",  # only the first poll is guarded
        "agent.get",
        "agent.get",
    ]  # fmt: skip
    start = next(r for r in fake.requests if r["method"] == "agent.start")
    assert start["params"] == {
        "name": "reviewer", "kind": "opencode", "pane_id": "w1:p1", "args": ["--model", "x"],
    }  # fmt: skip
    assert [r["id"] for r in fake.requests if r["method"] == "pane.get"] == ["cli:agent:start:pane"]
    assert {r["params"]["target"] for r in fake.requests if r["method"] == "agent.get"} == {
        "reviewer"
    }


def test_kind_mismatch(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    _script_start(fake, _agent(agent="claude", agent_status="idle", interactive_ready=True))
    run = cli(*START)
    assert run.code == 1
    assert run.out == ""
    assert run.err == (
        '{"error":{"code":"agent_kind_mismatch","message":"expected opencode, detected claude"},'
        '"id":"cli:agent:start"}\n'
    )


def test_blocked_during_startup_is_agent_not_ready(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    _script_start(
        fake,
        _agent(agent=None, agent_status="unknown", interactive_ready=True),
        _agent(agent="opencode", agent_status="blocked", interactive_ready=True),
    )
    run = cli(*START)
    assert run.code == 1
    assert json.loads(run.err)["error"] == {
        "code": "agent_not_ready",
        "message": "agent reviewer is blocked during startup and is not ready for prompts",
    }


def test_exit_before_interactive_is_agent_start_failed(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    _script_start(fake, _agent(agent_status="idle"))
    run = cli(*START)
    assert json.loads(run.err)["error"] == {
        "code": "agent_start_failed",
        "message": "agent process exited before becoming interactive",
    }


def test_lost_name_falls_back_to_the_pane_then_reports_it(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    def by_target(request: dict[str, Any]) -> dict[str, Any]:
        if request["params"]["target"] == "reviewer":
            return {"error": {"code": "agent_not_found", "message": "gone"}}
        return _agent(name=None, agent_status="idle")

    _script_start(fake)
    fake.handle("agent.get", by_target)
    run = cli(*START)
    assert json.loads(run.err)["error"] == {
        "code": "agent_name_not_found",
        "message": "named agent reviewer no longer owns the target terminal",
    }
    targets = [r["params"]["target"] for r in fake.requests if r["method"] == "agent.get"]
    assert targets == ["reviewer", "w1:p1"]


def test_timeout_reports_cli_timeout_after_a_final_reconcile_poll(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    _script_start(fake, _agent(agent_status="unknown", launch_pending=True))
    run = cli(*START, "--timeout", "250")
    assert run.code == 1
    assert run.err == (
        '{"error":{"code":"timeout","message":"timed out waiting for agent startup"},'
        '"id":"cli:agent:start"}\n'
    )
    start = next(r for r in fake.requests if r["method"] == "agent.start")
    assert start["params"]["timeout_ms"] == 250
    assert fake.requests[-1]["id"] == "cli:agent:start:timeout"


def test_server_errors_from_start_are_printed_unchanged(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    _script_start(fake)
    fake.error("agent.start", "agent_name_taken", "agent name reviewer is already used")
    run = cli(*START)
    assert run.code == 1
    assert json.loads(run.err) == {
        "id": "cli:agent:start",
        "error": {"code": "agent_name_taken", "message": "agent name reviewer is already used"},
    }
    assert "agent.get" not in fake.methods()


def test_busy_initializing_shell_is_retried_then_succeeds(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    _script_start(fake, _agent(agent="opencode", agent_status="idle", interactive_ready=True))
    busy = {"error": {"code": "agent_pane_busy", "message": "not an available shell"}}
    started = {"result": {"type": "agent_started", "agent": {"terminal_id": "term_1"}}}
    fake.reply("agent.start", busy, started)
    fake.result(
        "pane.process_info",
        {
            "type": "pane_process_info",
            "process_info": {
                "pane_id": "w1:p1",
                "shell_pid": 10,
                "foreground_process_group_id": 10,
                "foreground_processes": [{"pid": 10, "name": "-bash"}, {"pid": 11, "name": "x"}],
            },
        },
    )
    run = cli(*START)
    assert run.code == 0, run.err
    assert fake.methods().count("agent.start") == 2
    assert "pane.process_info" in fake.methods()


def test_busy_is_not_retried_when_the_terminal_changed(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    _script_start(fake)
    fake.reply(
        "pane.get",
        {"result": {"type": "pane_info", "pane": {"terminal_id": "term_1"}}},
        {"result": {"type": "pane_info", "pane": {"terminal_id": "term_2"}}},
    )
    fake.error(
        "agent.start", "agent_pane_busy", "agent target pane w1:p1 is not an available shell"
    )
    run = cli(*START)
    assert run.code == 1
    assert json.loads(run.err)["error"]["code"] == "agent_pane_busy"
    assert fake.methods().count("agent.start") == 1


def test_busy_with_a_program_running_is_not_retried(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    _script_start(fake)
    fake.error("agent.start", "agent_pane_busy", "busy")
    fake.result(
        "pane.process_info",
        {
            "type": "pane_process_info",
            "process_info": {
                "pane_id": "w1:p1",
                "shell_pid": 10,
                "foreground_process_group_id": 12,
                "foreground_processes": [{"pid": 12, "name": "vim"}],
            },
        },
    )
    run = cli(*START)
    assert json.loads(run.err)["error"]["code"] == "agent_pane_busy"
    assert fake.methods().count("agent.start") == 1
