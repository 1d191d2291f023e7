"""Command line -> exact request (id, method, params), and what each command prints."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.cli.fake_herdr import FakeHerdr

if TYPE_CHECKING:
    from tests.cli.conftest import Run

# argv, request id, method, params. Params are compared including key order: the CLI
# sends fields in the order of Herdr's request structs and omits what serde skips.
CASES: list[tuple[list[str], str, str, dict[str, Any]]] = [
    (["workspace", "list"], "cli:workspace:list", "workspace.list", {}),
    (
        ["workspace", "create", "--cwd", "/p", "--label", "L", "--env", "A=1", "--focus"],
        "cli:workspace:create",
        "workspace.create",
        {"cwd": "/p", "focus": True, "label": "L", "env": {"A": "1"}},
    ),
    (["workspace", "create"], "cli:workspace:create", "workspace.create", {"focus": False}),
    (["workspace", "get", "w1"], "cli:workspace:get", "workspace.get", {"workspace_id": "w1"}),
    (["workspace", "focus", "1"], "cli:workspace:focus", "workspace.focus", {"workspace_id": "1"}),
    (
        ["workspace", "rename", "w1", "my", "space"],
        "cli:workspace:rename",
        "workspace.rename",
        {"workspace_id": "w1", "label": "my space"},
    ),
    (["workspace", "close", "w2"], "cli:workspace:close", "workspace.close",
     {"workspace_id": "w2"}),
    (
        ["workspace", "close", "w2", "--group"],
        "cli:workspace:close",
        "workspace.close",
        {"workspace_id": "w2", "close_group": True},
    ),
    (
        ["workspace", "report-metadata", "w1", "--source", "s", "--token", "a=b", "--clear-token",
         "c", "--seq", "3", "--ttl-ms", "100"],
        "cli:request",
        "workspace.report_metadata",
        {"workspace_id": "w1", "source": "s", "tokens": {"a": "b", "c": None}, "seq": 3,
         "ttl_ms": 100},
    ),
    (["tab", "list", "--workspace", "w1"], "cli:tab:list", "tab.list", {"workspace_id": "w1"}),
    (
        ["tab", "create", "--workspace", "w1", "--label", "x", "--no-focus"],
        "cli:tab:create",
        "tab.create",
        {"workspace_id": "w1", "focus": False, "label": "x"},
    ),
    (["tab", "get", "w1:t1"], "cli:tab:get", "tab.get", {"tab_id": "w1:t1"}),
    (["tab", "focus", "w1:2"], "cli:tab:focus", "tab.focus", {"tab_id": "w1:2"}),
    (["tab", "close", "w1:t2"], "cli:tab:close", "tab.close", {"tab_id": "w1:t2"}),
    (
        ["tab", "rename", "w1:t1", "a", "b"],
        "cli:tab:rename",
        "tab.rename",
        {"tab_id": "w1:t1", "label": "a b"},
    ),
    (["pane", "list"], "cli:pane:list", "pane.list", {}),
    (["pane", "get", "w1-2"], "cli:pane:get", "pane.get", {"pane_id": "w1-2"}),
    (["pane", "current"], "cli:pane:current", "pane.current", {}),
    (
        ["pane", "current", "--pane", "w1:p2"],
        "cli:pane:current",
        "pane.current",
        {"caller_pane_id": "w1:p2"},
    ),
    (["pane", "layout", "--pane", "w1:p1"], "cli:pane:layout", "pane.layout", {"pane_id": "w1:p1"}),
    (["pane", "process-info"], "cli:pane:process_info", "pane.process_info", {}),
    (["pane", "edges"], "cli:pane:edges", "pane.edges", {}),
    (
        ["pane", "neighbor", "--direction", "left", "--pane", "w1:p1"],
        "cli:pane:neighbor",
        "pane.neighbor",
        {"pane_id": "w1:p1", "direction": "left"},
    ),
    (
        ["pane", "focus", "--direction", "up", "--current"],
        "cli:pane:focus",
        "pane.focus_direction",
        {"direction": "up"},
    ),
    (
        ["pane", "resize", "--direction", "right", "--amount", "0.125"],
        "cli:pane:resize",
        "pane.resize",
        {"direction": "right", "amount": 0.125},
    ),
    (["pane", "zoom"], "cli:pane:zoom", "pane.zoom", {"mode": "toggle"}),
    (["pane", "zoom", "w1:p1", "--on"], "cli:pane:zoom", "pane.zoom",
     {"pane_id": "w1:p1", "mode": "on"}),
    (
        ["pane", "rename", "w1:p1", "build", "logs"],
        "cli:pane:rename",
        "pane.rename",
        {"pane_id": "w1:p1", "label": "build logs"},
    ),
    (["pane", "rename", "w1:p1", "--clear"], "cli:pane:rename", "pane.rename",
     {"pane_id": "w1:p1"}),
    (
        ["pane", "input", "--right-click=pane", "w1:p1"],
        "cli:pane:input:set",
        "pane.input.set",
        {"pane_id": "w1:p1", "right_click": "pane"},
    ),
    (
        ["pane", "split", "w1:p1", "--direction", "right", "--ratio", "0.333", "--cwd", "/x",
         "--env", "K=", "--focus"],
        "cli:pane:split",
        "pane.split",
        {"target_pane_id": "w1:p1", "direction": "right", "ratio": 0.333, "cwd": "/x",
         "focus": True, "right_click": "herdr", "env": {"K": ""}},
    ),
    (
        ["pane", "split", "--direction", "down"],
        "cli:pane:split",
        "pane.split",
        {"direction": "down", "focus": False, "right_click": "herdr"},
    ),
    (
        ["pane", "swap", "--source-pane", "w1:p1", "--target-pane", "w1:p2"],
        "cli:pane:swap",
        "pane.swap",
        {"source_pane_id": "w1:p1", "target_pane_id": "w1:p2"},
    ),
    (
        ["pane", "swap", "--direction", "left"],
        "cli:pane:swap",
        "pane.swap",
        {"direction": "left"},
    ),
    (
        ["pane", "move", "w1:p1", "--tab", "w1:t2", "--split", "right", "--target-pane", "w1:p3",
         "--ratio", "0.25", "--no-focus"],
        "cli:pane:move",
        "pane.move",
        {"pane_id": "w1:p1", "destination": {"type": "tab", "tab_id": "w1:t2",
         "target_pane_id": "w1:p3", "split": "right", "ratio": 0.25}, "focus": False},
    ),
    (
        ["pane", "move", "w1:p1", "--new-workspace", "--label", "L"],
        "cli:pane:move",
        "pane.move",
        {"pane_id": "w1:p1", "destination": {"type": "new_workspace", "label": "L"},
         "focus": True},
    ),
    (["pane", "close", "w1:p2"], "cli:pane:close", "pane.close", {"pane_id": "w1:p2"}),
    (
        ["pane", "send-text", "w1:p1", "echo", "hi"],
        "cli:request",
        "pane.send_text",
        {"pane_id": "w1:p1", "text": "echo hi"},
    ),
    (
        ["pane", "send-keys", "w1:p1", "C-c", "Enter"],
        "cli:request",
        "pane.send_keys",
        {"pane_id": "w1:p1", "keys": ["C-c", "Enter"]},
    ),
    (
        ["pane", "run", "w1:p1", "ls", "-la"],
        "cli:request",
        "pane.send_input",
        {"pane_id": "w1:p1", "text": "ls -la", "keys": ["Enter"]},
    ),
    (
        ["pane", "read", "--source=recent-unwrapped", "--lines=5", "w1:p1", "--raw"],
        "cli:pane:read",
        "pane.read",
        {"pane_id": "w1:p1", "source": "recent_unwrapped", "lines": 5, "format": "ansi",
         "strip_ansi": False},
    ),
    (
        ["pane", "read", "w1:p1"],
        "cli:pane:read",
        "pane.read",
        {"pane_id": "w1:p1", "source": "recent", "format": "text", "strip_ansi": True},
    ),
    (
        ["pane", "wait-output", "--match=a=b", "--timeout=100", "w1:p1"],
        "cli:pane:wait-output",
        "pane.wait_for_output",
        {"pane_id": "w1:p1", "source": "recent", "match": {"type": "substring", "value": "a=b"},
         "timeout_ms": 100, "strip_ansi": True},
    ),
    (
        ["pane", "wait-output", "w1:p1", "--regex", "^ok$", "--source", "visible", "--raw"],
        "cli:pane:wait-output",
        "pane.wait_for_output",
        {"pane_id": "w1:p1", "source": "visible", "match": {"type": "regex", "value": "^ok$"},
         "strip_ansi": False},
    ),
    (
        ["pane", "report-agent", "w1:p1", "--source", " custom:x ", "--agent", "hermes",
         "--state", "working", "--message", "m", "--seq", "7"],
        "cli:request",
        "pane.report_agent",
        {"pane_id": "w1:p1", "source": "custom:x", "agent": "hermes", "state": "working",
         "message": "m", "seq": 7},
    ),
    (
        ["pane", "report-agent", "--source=my-agent", "--agent", "my-agent", "--state=idle",
         "w1:p1", "--agent-session-id", "S1", "--", "my-agent", "--resume", "S1"],
        "cli:request",
        "pane.report_agent",
        {"pane_id": "w1:p1", "source": "my-agent", "agent": "my-agent", "state": "idle",
         "agent_session_id": "S1", "resume_argv": ["my-agent", "--resume", "S1"]},
    ),
    (
        ["pane", "report-agent-session", "w1:p1", "--source", "herdr:pi", "--agent", "pi",
         "--agent-session-path", "/s.jsonl", "--session-start-source", "startup", "--seq", "1"],
        "cli:request",
        "pane.report_agent_session",
        {"pane_id": "w1:p1", "source": "herdr:pi", "agent": "pi", "seq": 1,
         "agent_session_path": "/s.jsonl", "session_start_source": "startup"},
    ),
    (
        ["pane", "release-agent", "w1:p1", "--source", "s", "--agent", "a", "--seq", "9"],
        "cli:request",
        "pane.release_agent",
        {"pane_id": "w1:p1", "source": "s", "agent": "a", "seq": 9},
    ),
    (
        ["pane", "report-metadata", "w1:p1", "--source", "s", "--title", "T", "--state-label",
         " Working =busy", "--token", "k=v", "--clear-token", "old", "--ttl-ms", "50"],
        "cli:request",
        "pane.report_metadata",
        {"pane_id": "w1:p1", "source": "s", "title": "T", "state_labels": {"working": "busy"},
         "tokens": {"k": "v", "old": None}, "clear_title": False, "clear_display_agent": False,
         "clear_state_labels": False, "ttl_ms": 50},
    ),
    (["agent", "list"], "cli:agent:list", "agent.list", {}),
    (["agent", "get", "reviewer"], "cli:agent:get", "agent.get", {"target": "reviewer"}),
    (["agent", "focus", "w1:p1"], "cli:agent:focus", "agent.focus", {"target": "w1:p1"}),
    (
        ["agent", "read", "r", "--source", "visible", "--lines", "3", "--format", "ansi"],
        "cli:agent:read",
        "agent.read",
        {"target": "r", "source": "visible", "lines": 3, "format": "ansi", "strip_ansi": False},
    ),
    (
        ["agent", "send-keys", "r", "Escape"],
        "cli:agent:send-keys",
        "agent.send_keys",
        {"target": "r", "keys": ["Escape"]},
    ),
    (
        ["agent", "prompt", "w1:p1", "review this", "--wait", "--until", "idle"],
        "cli:agent:prompt",
        "agent.prompt",
        {"target": "w1:p1", "text": "review this", "wait": {"until": ["idle"]}},
    ),
    (
        ["agent", "prompt", "r", "go", "--wait"],
        "cli:agent:prompt",
        "agent.prompt",
        {"target": "r", "text": "go", "wait": {}},
    ),
    (
        ["agent", "prompt", "r", "go"],
        "cli:agent:prompt",
        "agent.prompt",
        {"target": "r", "text": "go"},
    ),
    (
        ["agent", "wait", "r", "--until", "blocked", "--until", "idle", "--timeout", "10000"],
        "cli:agent:wait",
        "agent.wait",
        {"target": "r", "until": ["blocked", "idle"], "timeout_ms": 10000},
    ),
    (
        ["agent", "rename", "w1:p1", "reviewer"],
        "cli:agent:rename",
        "agent.rename",
        {"target": "w1:p1", "name": "reviewer"},
    ),
    (["agent", "rename", "r", "--clear"], "cli:agent:rename", "agent.rename", {"target": "r"}),
    (
        ["notification", "show", "Done", "--body", "b", "--position", "top-left", "--sound",
         "done"],
        "cli:notification:show",
        "notification.show",
        {"title": "Done", "body": "b", "position": "top-left", "sound": "done"},
    ),
    (["notification", "show", "T"], "cli:notification:show", "notification.show", {"title": "T"}),
    (["api", "snapshot"], "cli:api:snapshot", "session.snapshot", {}),
    (
        ["terminal", "title", "set", "hello"],
        "cli:terminal:title:set",
        "client.window_title.set",
        {"title": "hello"},
    ),
    (["server", "reload-config"], "cli:server:reload-config", "server.reload_config", {}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "request_id", "method", "params"), CASES, ids=[" ".join(c[0]) for c in CASES]
)
def test_argv_maps_to_exact_request(
    fake: FakeHerdr,
    cli: Callable[..., Run],
    argv: list[str],
    request_id: str,
    method: str,
    params: dict[str, Any],
) -> None:
    run = cli(*argv)
    assert run.code == 0, run.err
    assert fake.methods() == ["ping", method]
    operation = fake.only_operation()
    assert operation["id"] == request_id
    assert list(operation) == ["id", "method", "params"]
    assert operation["params"] == params
    assert list(operation["params"]) == list(params)


def test_json_commands_print_the_whole_response_with_sorted_keys(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.reply(
        "pane.get",
        '{"result":{"type":"pane_info","pane":{"pane_id":"w1:p1","agent_status":"idle",'
        '"revision":0,"ratio":1e-05}},"id":"cli:pane:get"}',
    )
    run = cli("pane", "get", "w1:p1")
    assert run.code == 0
    assert run.err == ""
    assert run.out == (
        '{"id":"cli:pane:get","result":{"pane":{"agent_status":"idle","pane_id":"w1:p1",'
        '"ratio":0.00001,"revision":0},"type":"pane_info"}}\n'
    )


def test_ok_commands_print_nothing_and_errors_go_to_stderr(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    ok = cli("pane", "send-text", "w1:p1", "hi")
    assert (ok.code, ok.out, ok.err) == (0, "", "")
    fake.error("pane.send_keys", "invalid_key", "unsupported key bogus+")
    bad = cli("pane", "send-keys", "w1:p1", "bogus+")
    assert bad.code == 1
    assert bad.out == ""
    assert json.loads(bad.err) == {
        "id": "cli:request",
        "error": {"code": "invalid_key", "message": "unsupported key bogus+"},
    }


def test_pane_close_prints_the_ok_response(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    run = cli("pane", "close", "w1:p2")
    assert run.out == '{"id":"cli:pane:close","result":{"type":"ok"}}\n'


@pytest.mark.parametrize("command", [["pane", "read", "w1:p1"], ["agent", "read", "w1:p1"]])
def test_reads_print_raw_text_without_a_newline(
    fake: FakeHerdr, cli: Callable[..., Run], command: list[str]
) -> None:
    read = {"pane_id": "w1:p1", "source": "recent", "format": "text", "text": "a\n$ ",
            "revision": 0, "truncated": False}  # fmt: skip
    method = "pane.read" if command[0] == "pane" else "agent.read"
    fake.result(method, {"type": "pane_read", "read": read})
    run = cli(*command)
    assert (run.code, run.out, run.err) == (0, "a\n$ ", "")


def test_read_errors_are_json_on_stderr(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    fake.error("agent.read", "agent_not_found", "agent target missing not found")
    run = cli("agent", "read", "missing")
    assert run.code == 1
    assert run.out == ""
    assert json.loads(run.err)["error"]["code"] == "agent_not_found"


def test_pane_run_sends_one_send_input_with_enter(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    run = cli("pane", "run", "w1:p1", "pi")
    assert run.code == 0
    assert fake.methods() == ["ping", "pane.send_input"]
    assert fake.only_operation()["params"] == {
        "pane_id": "w1:p1", "text": "pi", "keys": ["Enter"],
    }  # fmt: skip


def test_prompt_wait_until_idle_is_one_request_without_timeout(
    fake: FakeHerdr, cli: Callable[..., Run]
) -> None:
    fake.result("agent.prompt", {"type": "agent_prompted", "agent": {"name": "reviewer"}})
    run = cli("agent", "prompt", "w1:p1", "review this", "--wait", "--until", "idle")
    assert run.code == 0
    prompt = fake.only_operation()
    assert prompt["method"] == "agent.prompt"
    assert prompt["params"]["wait"]["until"] == ["idle"]
    assert "timeout_ms" not in prompt["params"]["wait"]
    assert json.loads(run.out)["result"]["agent"]["name"] == "reviewer"


def test_wire_request_is_compact_json_line(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    cli("pane", "send-text", "w1:p1", "héllo")
    assert fake.lines[0] == b'{"id":"api-client:status","method":"ping","params":{}}\n'
    assert (
        fake.lines[1]
        == (
            '{"id":"cli:request","method":"pane.send_text","params":{"pane_id":"w1:p1",'
            '"text":"héllo"}}\n'
        ).encode()
    )


def test_split_inside_a_pane_targets_the_calling_pane(
    fake: FakeHerdr, cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERDR_PANE_ID", "w1:p3")
    cli("pane", "split", "--direction", "right")
    assert fake.only_operation()["params"]["target_pane_id"] == "w1:p3"


@pytest.mark.parametrize(
    ("argv", "key", "value"),
    [
        (["pane", "current"], "caller_pane_id", "w1:p3"),
        (["pane", "layout", "--current"], "pane_id", "w1:p3"),
        (["pane", "input", "--current", "--right-click", "herdr"], "pane_id", "w1:p3"),
        (["pane", "split", "--current", "--direction", "down"], "target_pane_id", "w1:p3"),
    ],
)
def test_current_uses_herdr_pane_id(
    fake: FakeHerdr,
    cli: Callable[..., Run],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    key: str,
    value: str,
) -> None:
    monkeypatch.setenv("HERDR_PANE_ID", "w1:p3")
    assert cli(*argv).code == 0
    assert fake.only_operation()["params"][key] == value


def test_neighbor_current_means_the_focused_pane(
    fake: FakeHerdr, cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERDR_PANE_ID", "w1:p3")
    cli("pane", "neighbor", "--direction", "down", "--current")
    assert fake.only_operation()["params"] == {"direction": "down"}


def test_agent_explain_text_and_json(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    explain = {
        "agent": "pi",
        "state": "idle",
        "manifest_source": "builtin",
        "manifest_version": "3",
        "matched_rule": {"id": "idle-prompt", "region": "bottom", "priority": 10},
        "evaluated_rules": [
            {"id": "idle-prompt", "evidence": {"region_preview": "> \n"}, "matched": True}
        ],
        "warning": "careful",
    }
    fake.result("agent.explain", {"type": "agent_explain", "explain": explain})
    text = cli("agent", "explain", "pi-1")
    assert text.out == (
        "agent: pi\nstate: idle\nmanifest: builtin 3\n"
        "rule: idle-prompt (region=bottom priority=10)\n"
        'evidence: "> \\n"\nwarning: careful\n'
    )
    as_json = cli("agent", "explain", "pi-1", "--format", "json")
    assert json.loads(as_json.out) == explain
    assert as_json.out.startswith('{"agent":"pi","evaluated_rules":')


def test_status_server_json_keeps_struct_order(fake: FakeHerdr, cli: Callable[..., Run]) -> None:
    run = cli("status", "server", "--json")
    assert run.code == 0
    status = json.loads(run.out)
    assert list(status) == [
        "status", "running", "version", "protocol", "capabilities", "compatible",
        "endpoint_compatible", "socket", "session", "restart_needed",
    ]  # fmt: skip
    assert status["running"] is True
    assert status["compatible"] is True
    assert status["endpoint_compatible"] is True
    assert status["socket"] == str(fake.path)
    assert status["restart_needed"] is False
    assert fake.methods() == ["ping"]


def test_status_text_for_running_and_missing_servers(
    fake: FakeHerdr, cli: Callable[..., Run], monkeypatch: pytest.MonkeyPatch, sock_dir: Path
) -> None:
    fake.protocol = 20
    fake.version = "0.8.2"
    running = cli("status")
    assert running.code == 0
    assert running.out == (
        "client:\n  version: 0.9.2\n  channel: stable\n  protocol: 22\n\n"
        "server:\n  status: running\n  version: 0.8.2\n  protocol: 20\n  compatible: no\n"
        f"  socket: {fake.path}\n\nupdate:\n  restart_needed: yes\n"
    )
    missing = sock_dir / "none.sock"
    monkeypatch.setenv("HERDR_SOCKET_PATH", str(missing))
    stopped = cli("status", "--json")
    assert stopped.code == 0
    body = json.loads(stopped.out)
    assert list(body) == ["client", "server", "update"]
    assert body["server"]["status"] == "not_running"
    assert body["server"]["socket"] == str(missing)
    assert body["update"] == {"restart_needed": False}
    assert body["client"]["protocol"] == 22
