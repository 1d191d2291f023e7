"""cli_map: the argv, request ids and output shapes of Herdr's CLI for every operation.

The end-to-end proof (what the simulator received for each argv) is in test_tools.py; these
pin the table itself and the parsing of the CLI's output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orchestrator.client import cli_map
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import client, received

ARGV: list[tuple[str, dict[str, Any], list[str], str]] = [
    ("workspace.list", {}, ["workspace", "list"], "cli:workspace:list"),
    ("workspace.get", {"workspace_id": "w1"}, ["workspace", "get", "w1"], "cli:workspace:get"),
    (
        "workspace.create",
        {"cwd": "/p", "label": "L", "env": {"A": "1", "B": "2"}, "focus": False},
        ["workspace", "create", "--cwd", "/p", "--label", "L", "--env", "A=1", "--env", "B=2",
         "--no-focus"],
        "cli:workspace:create",
    ),
    ("tab.list", {"workspace_id": "w1"}, ["tab", "list", "--workspace", "w1"], "cli:tab:list"),
    ("tab.get", {"tab_id": "w1:t1"}, ["tab", "get", "w1:t1"], "cli:tab:get"),
    (
        "tab.create",
        {"workspace_id": "w1", "cwd": "/p", "focus": False},
        ["tab", "create", "--workspace", "w1", "--cwd", "/p", "--no-focus"],
        "cli:tab:create",
    ),
    ("pane.list", {}, ["pane", "list"], "cli:pane:list"),
    ("pane.get", {"pane_id": "w1:p1"}, ["pane", "get", "w1:p1"], "cli:pane:get"),
    ("pane.layout", {"pane_id": "w1:p1"}, ["pane", "layout", "--pane", "w1:p1"], "cli:pane:layout"),
    (
        "pane.process_info",
        {"pane_id": "w1:p1"},
        ["pane", "process-info", "--pane", "w1:p1"],
        "cli:pane:process_info",
    ),
    ("pane.edges", {"pane_id": "w1:p1"}, ["pane", "edges", "--pane", "w1:p1"], "cli:pane:edges"),
    (
        "pane.read",
        {"pane_id": "w1:p1", "source": "recent-unwrapped", "lines": 5},
        ["pane", "read", "w1:p1", "--source", "recent-unwrapped", "--lines", "5"],
        "cli:pane:read",
    ),
    (
        "pane.split",
        {"target_pane_id": "w1:p1", "direction": "right", "ratio": 0.3, "focus": False},
        ["pane", "split", "w1:p1", "--direction", "right", "--ratio", "0.3", "--no-focus"],
        "cli:pane:split",
    ),
    ("pane.run", {"pane_id": "w1:p1", "command": "ls -l"}, ["pane", "run", "w1:p1", "ls -l"],
     "cli:request"),
    (
        "pane.wait_for_output",
        {"pane_id": "w1:p1", "source": "recent", "match": {"type": "regex", "value": "^a"},
         "timeout_ms": 10},
        ["pane", "wait-output", "w1:p1", "--regex=^a", "--source", "recent", "--timeout", "10"],
        "cli:pane:wait-output",
    ),
    ("pane.send_text", {"pane_id": "w1:p1", "text": "hi"}, ["pane", "send-text", "w1:p1", "hi"],
     "cli:request"),
    ("agent.list", {}, ["agent", "list"], "cli:agent:list"),
    ("agent.get", {"target": "a"}, ["agent", "get", "a"], "cli:agent:get"),
    (
        "agent.read",
        {"target": "a", "source": "recent-unwrapped"},
        ["agent", "read", "a", "--source", "recent-unwrapped"],
        "cli:agent:read",
    ),
    (
        "agent.start",
        {"name": "a", "kind": "pi", "pane_id": "w1:p1", "args": ["--x"], "timeout_ms": 5000},
        ["agent", "start", "a", "--kind", "pi", "--pane", "w1:p1", "--timeout", "5000", "--",
         "--x"],
        "cli:agent:start",
    ),
    (
        "agent.wait",
        {"target": "a", "until": ["idle", "done"], "timeout_ms": 9},
        ["agent", "wait", "a", "--until", "idle", "--until", "done", "--timeout", "9"],
        "cli:agent:wait",
    ),
    (
        "agent.prompt",
        {"target": "a", "text": "go", "wait": {"timeout_ms": 9}},
        ["agent", "prompt", "a", "go", "--wait", "--timeout", "9"],
        "cli:agent:prompt",
    ),
    ("agent.explain", {"target": "a"}, ["agent", "explain", "a", "--json"], "cli:agent:explain"),
    (
        "agent.send_keys",
        {"target": "a", "keys": ["Escape"]},
        ["agent", "send-keys", "a", "Escape"],
        "cli:agent:send-keys",
    ),
    ("pane.close", {"pane_id": "w1:p2"}, ["pane", "close", "w1:p2"], "cli:pane:close"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "params", "argv", "request_id"), ARGV)
def test_argv_and_request_id(
    name: str, params: dict[str, Any], argv: list[str], request_id: str
) -> None:
    op = cli_map.operation(name)
    assert op.cli_argv(params) == argv
    assert op.request_id == request_id


def test_every_operation_has_a_row() -> None:
    assert {row[0] for row in ARGV} | {"ping"} == set(cli_map.OPERATIONS)


def test_only_creates_closes_inputs_and_starts_are_mutations() -> None:
    mutations = {name for name, op in cli_map.OPERATIONS.items() if op.mutation}
    assert mutations == {
        "workspace.create",
        "tab.create",
        "pane.split",
        "pane.close",
        "pane.run",
        "pane.send_text",
        "agent.send_keys",
        "agent.start",
        "agent.prompt",
    }


def test_pane_run_is_send_input_with_enter_on_the_wire() -> None:
    op = cli_map.operation("pane.run")
    assert op.method == "pane.send_input"
    assert op.wire_params({"pane_id": "w1:p1", "command": "ls"}) == {
        "pane_id": "w1:p1",
        "text": "ls",
        "keys": ["Enter"],
    }


def test_read_sources_use_the_wire_spelling_on_the_socket() -> None:
    wire = cli_map.operation("pane.read").wire_params(
        {"pane_id": "p", "source": "recent-unwrapped"}
    )
    assert wire["source"] == "recent_unwrapped"


def test_parse_stderr_finds_herdrs_envelope() -> None:
    line = '{"error":{"code":"timeout","message":"m"},"id":"cli:agent:wait"}'
    assert cli_map.parse_stderr(f"noise\n{line}\n") == {
        "error": {"code": "timeout", "message": "m"},
        "id": "cli:agent:wait",
    }
    assert cli_map.parse_stderr("usage: herdr pane read <pane_id>\n") is None


def test_parse_stdout_per_output_shape() -> None:
    read = cli_map.operation("pane.read")
    # the CLI prints only the text: whether it was cut, and its revision, are unknown
    assert cli_map.parse_stdout(read, {"pane_id": "p", "source": "visible"}, "abc") == {
        "type": "pane_read",
        "read": {
            "text": "abc",
            "source": "visible",
            "pane_id": "p",
            "truncated": None,
            "revision": None,
        },
    }
    assert cli_map.parse_stdout(cli_map.operation("pane.run"), {}, "") == {"type": "ok"}
    explain = cli_map.parse_stdout(cli_map.operation("agent.explain"), {}, '{"agent":"pi"}\n')
    assert explain == {"type": "agent_explain", "explain": {"agent": "pi"}}
    listed = cli_map.parse_stdout(
        cli_map.operation("agent.list"),
        {},
        '{"id":"cli:agent:list","result":{"agents":[],"type":"agent_list"}}\n',
    )
    assert listed == {"agents": [], "type": "agent_list"}


def test_render_is_the_clis_sorted_compact_json() -> None:
    op = cli_map.operation("workspace.list")
    rendered = cli_map.render_stdout(op, {}, {"type": "workspace_list", "workspaces": []})
    assert (
        rendered
        == '{"id":"cli:workspace:list","result":{"type":"workspace_list","workspaces":[]}}\n'
    )


def test_patterns_that_look_like_options_reach_herdr_intact(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    rec = received(herdr_server)
    herdr = client(herdr_server, "cli")
    pane = herdr.workspace_create(str(tmp_path)).root_pane.pane_id
    herdr.pane_run(pane, "echo --dash--")
    match = herdr.pane_wait_output(pane, "^--dash--$", regex=True, timeout_ms=5000)
    assert match.matched_line == "--dash--"
    (sent,) = rec.calls("pane.wait_for_output")
    assert sent["match"] == {"type": "regex", "value": "^--dash--$"}
