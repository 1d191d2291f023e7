"""One runner for every tool: each gate and policy switch binds all 42 tools, refuses in the
tool family's own contract shape with a next action that can work, and sends nothing to
Herdr (the simulator's request log stays empty).

The matrix is generated from the tools' declarations (``Tool.traits``), not from a list kept
here: a tool added later is covered by the same rows. The named tests below it pin the
defects the single runner fixed (the managed tools skipping the kill switch, ``allowCwd``
and ``agentKinds``; a start the policy could not close; refusals in another family's shape;
the doctor's ``transport_error`` with no server)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from orchestrator.agent_tools.contract import AGENT_RESULT_SCHEMA
from orchestrator.core.tool import STARTING_EFFECTS, Tool, ToolContext
from orchestrator.pipeline import audit
from orchestrator.pipeline.call_guard import PREVIEWED_EFFECTS, governed_call
from orchestrator.pipeline.registry import ALL_TOOLS, run_given, run_tool
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import Received, context, pane_of, received

#: what the test harness itself may send (the plugin's event watcher)
HARNESS = {"ping", "events.subscribe"}
#: what the directory checks of an existing pane or agent read (never a mutation)
DIRECTORY_READS = {"pane.get", "agent.get"}
#: the managed structured error's fields (the reference's A.2 block)
MANAGED_ERROR_FIELDS = {
    "category",
    "message",
    "operation",
    "rollbackOccurred",
    "retryAttempted",
    "nextAction",
}


def acted(rec: Received) -> list[str]:
    return [m for m in rec.methods(pings=True) if m not in HARNESS]


def sample_args(tool: Tool, pane: str, cwd: Path) -> dict[str, Any]:
    """Valid arguments for ``tool``: its required fields, plus the fields a gate reads."""
    values: dict[str, Any] = {
        "pane": pane,
        "workspace": "w1",
        "tab": "w1:t1",
        "agent": "evil",
        "target": "evil",
        "name": "evil",
        "label": "evil",
        "kind": "pi",
        "cwd": str(cwd),
        "prompt": "task",
        "task": "task",
        "message": "hello",
        "command": "echo hi",
        "text": "echo hi\n",  # a line break: the text runs
        "pattern": "x",
        "direction": "right",
        "definition": "scout",
        "session": "00000000-0000-4000-8000-000000000000",
    }
    props = tool.input_schema.get("properties") or {}
    wanted = set(tool.input_schema.get("required") or ())
    traits = tool.declared
    wanted |= {f for f in (traits.name, traits.kind, traits.cwd) if f} | set(traits.targets)
    args = {key: values[key] for key in sorted(wanted) if key in props}
    if not Draft202012Validator(dict(tool.input_schema)).is_valid(args):
        raise AssertionError(f"{tool.name}: no valid sample arguments ({args})")
    return args


@dataclass(frozen=True)
class Switch:
    """One gate or policy switch: its configuration, the code it refuses with, the tools it
    binds (from their declarations) and whether its check may read a pane's directory."""

    name: str
    env: Callable[[Path, Tool], dict[str, str]]
    code: str
    applies: Callable[[Tool, Mapping[str, Any]], bool]
    #: a retry cannot cure it: the next action must not say retry
    final: bool = True


def _config(tmp: Path, text: str) -> dict[str, str]:
    path = tmp / "policy.toml"
    path.write_text(text)
    return {"HERDR_ORCHESTRATOR_CONFIG": str(path)}


def _starts_work(tool: Tool, args: Mapping[str, Any]) -> bool:
    return tool.declared.effect_for(args) in STARTING_EFFECTS


def _works_in_a_directory(tool: Tool, args: Mapping[str, Any]) -> bool:
    t = tool.declared
    where = (t.cwd, t.launch_cwd, t.pane, t.agent_pane, t.inherits_cwd_of)
    return _starts_work(tool, args) and any(w is not None for w in where)


def _named(tool: Tool, args: Mapping[str, Any]) -> bool:
    t = tool.declared
    return tool.risk != "R0" and (
        t.name is not None or t.launch_name is not None or any(f in args for f in t.targets)
    )


SWITCHES = [
    Switch(
        "disableTools",
        lambda tmp, tool: _config(tmp, f'disableTools = ["{tool.name}"]\n'),
        "tool_disabled",
        lambda tool, args: True,
    ),
    Switch(
        "readOnly",
        lambda tmp, tool: {"HERDR_ORCHESTRATOR_READ_ONLY": "1"},
        "read_only",
        lambda tool, args: tool.risk != "R0",
    ),
    Switch(
        "agentKinds",
        lambda tmp, tool: {"HERDR_ORCHESTRATOR_AGENT_KINDS": "omp"},
        "agent_kind_not_allowed",
        lambda tool, args: tool.declared.starts_agents,
    ),
    Switch(
        "agentNames",
        lambda tmp, tool: {"HERDR_ORCHESTRATOR_AGENT_NAMES": "ok-*"},
        "agent_name_not_allowed",
        _named,
        final=False,  # another name can work
    ),
    Switch(
        "enabled",
        lambda tmp, tool: {"HERDR_ORCHESTRATOR_ENABLED": "false"},
        "disabled",
        _starts_work,
    ),
    Switch(
        "allowCwd",
        lambda tmp, tool: {"HERDR_ORCHESTRATOR_ALLOW_CWD": str(tmp / "allowed")},
        "cwd_not_allowed",
        _works_in_a_directory,
        final=False,  # another directory can work
    ),
    Switch(
        "previewRequired",
        lambda tmp, tool: {"DSH_HERDR_PREVIEW_REQUIRED": "1"},
        "preview_required",
        lambda tool, args: tool.declared.effect_for(args) in PREVIEWED_EFFECTS,
        final=False,  # again with preview: true, then the user's approval
    ),
]

#: every (tool, switch) pair the declarations say applies (computed on placeholder arguments;
#: the pane id does not change which switches apply)
MATRIX = [
    pytest.param(tool.name, switch, id=f"{tool.name}-{switch.name}")
    for tool in ALL_TOOLS.values()
    for switch in SWITCHES
    if switch.applies(tool, sample_args(tool, "w1:p1", Path("/tmp")))
]


def assert_family_shape(tool: Tool, result: Mapping[str, Any], code: str, final: bool) -> None:
    """``result`` is a refusal with ``code`` in ``tool``'s family contract shape."""
    family = tool.declared.family
    if family == "low_level":
        assert result["ok"] is False and result["command"] and "exitCode" in result, result
        assert result["errorCode"] == code and result["data"]["error"]["code"] == code, result
    elif family == "agent":
        Draft202012Validator(AGENT_RESULT_SCHEMA).validate(dict(result))
        assert (result["status"], result["error"]["code"]) == ("failed", code.upper()), result
        if final:
            assert result["nextAction"] != "retry", result
    else:
        assert result["ok"] is False and result["action"] == tool.name.removeprefix("agent_")
        error = result["error"]
        assert set(error) >= MANAGED_ERROR_FIELDS, error
        assert error["details"]["code"] == code and error["nextAction"], error
        assert "errorCode" not in result and "command" not in result, result
        if final:
            assert "retry" not in error["nextAction"].lower(), error


def test_the_matrix_covers_every_tool_and_every_switch() -> None:
    tools = {param.values[0] for param in MATRIX}
    switches = {param.values[1].name for param in MATRIX if isinstance(param.values[1], Switch)}
    assert tools == set(ALL_TOOLS) and len(ALL_TOOLS) == 42
    assert switches == {s.name for s in SWITCHES}


@pytest.mark.parametrize(("name", "switch"), MATRIX)
def test_every_gate_refuses_every_tool_it_binds_in_its_family_shape_sending_nothing(
    herdr_server: HerdrServer, tmp_path: Path, name: str, switch: Switch
) -> None:
    tool = ALL_TOOLS[name]
    (tmp_path / "allowed").mkdir()
    work = tmp_path / "elsewhere"
    work.mkdir()
    pane = pane_of(herdr_server, work)
    args = sample_args(tool, pane, work)
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), **switch.env(tmp_path, tool)}
    rec = received(herdr_server)
    result = run_tool(name, args, context(herdr_server, "socket", env))
    code = switch.code
    if switch.name == "allowCwd" and (tool.declared.launch_name or tool.declared.agent_pane):
        # a continue of an unknown session, a prompt to an agent Herdr does not know: the
        # directory cannot be told, and the gate fails closed
        code = "cwd_unknown"
    assert_family_shape(tool, result, code, switch.final)
    sent = set(acted(rec))
    if switch.name == "allowCwd":
        assert sent <= DIRECTORY_READS, sent  # the pane's directory is read, nothing sent
    else:
        assert sent == set(), sent


# -- the defects, one by one ------------------------------------------------------------------


def managed_ctx(server: HerdrServer, tmp_path: Path, env: Mapping[str, str]) -> ToolContext:
    return context(server, "socket", {"XDG_STATE_HOME": str(tmp_path / "state"), **env})


def test_the_kill_switch_binds_agent_delegate_and_every_managed_tool_that_starts_or_prompts(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    rec = received(herdr_server)
    ctx = managed_ctx(herdr_server, tmp_path, {"HERDR_ORCHESTRATOR_ENABLED": "false"})
    delegate = run_tool("agent_delegate", {"definition": "scout", "task": "t", "label": "k"}, ctx)
    assert delegate["ok"] is False and delegate["error"]["details"]["code"] == "disabled"
    for name in ("agent_steer", "agent_interrupt", "agent_reply"):
        result = run_tool(name, {"agent": "k", "message": "m"}, ctx)
        assert result["error"]["details"]["code"] == "disabled", result
    assert acted(rec) == []
    # what only stops or reads is never kept from running by the switch
    closed = run_tool("agent_close", {"agent": "k"}, ctx)
    assert (closed.get("error") or {}).get("details", {}).get("code") != "disabled", closed


def test_allow_cwd_binds_a_delegation_on_the_directory_its_child_would_get(
    herdr_server: HerdrServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    monkeypatch.chdir(outside)  # the controller's cwd: the one a delegated child gets
    rec = received(herdr_server)
    env = {"HERDR_ORCHESTRATOR_ALLOW_CWD": str(allowed)}
    ctx = managed_ctx(herdr_server, tmp_path, env)
    result = run_tool("agent_delegate", {"definition": "scout", "task": "t", "label": "k"}, ctx)
    assert result["ok"] is False and result["error"]["details"]["code"] == "cwd_not_allowed"
    assert "allowCwd" in result["error"]["nextAction"]
    assert acted(rec) == []


def test_agent_kinds_and_agent_names_bind_managed_launches_by_kind_and_label(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    rec = received(herdr_server)
    kinds = managed_ctx(herdr_server, tmp_path, {"HERDR_ORCHESTRATOR_AGENT_KINDS": "claude"})
    pi = run_tool("agent_delegate", {"definition": "scout", "task": "t", "label": "ok-1"}, kinds)
    assert pi["error"]["details"] == {"code": "agent_kind_not_allowed"}, pi
    env = {"HERDR_ORCHESTRATOR_AGENT_NAMES": "ok-*"}
    names = managed_ctx(herdr_server, tmp_path, env)
    evil = run_tool("agent_delegate", {"definition": "scout", "task": "t", "label": "evil"}, names)
    assert evil["error"]["details"] == {"code": "agent_name_not_allowed", "field": "label"}
    unnamed = run_tool("agent_delegate", {"definition": "scout", "task": "t"}, names)
    assert unnamed["error"]["details"]["code"] == "agent_name_not_allowed"
    assert acted(rec) == []
    # a label the policy lets start is one the policy lets close: the close reaches the
    # controller (which finds no such agent), it is not refused by the policy
    close = run_tool("agent_close", {"agent": "ok-1"}, names)
    assert "details" not in close["error"] or "code" not in close["error"]["details"], close
    assert close["error"]["category"] == "target_not_found", close


@pytest.mark.parametrize(
    ("closer", "starter", "args"),
    [
        ("agent_close", "agent_delegate", {"definition": "scout", "task": "t", "label": "a"}),
        ("agent_close", "agent_continue", {"session": "s", "task": "t"}),
        ("herdr_close_agent", "herdr_spawn_agent", {"prompt": "t", "name": "a"}),
    ],
)
def test_a_policy_never_lets_one_start_what_it_then_cannot_close(
    herdr_server: HerdrServer, tmp_path: Path, closer: str, starter: str, args: dict[str, Any]
) -> None:
    rec = received(herdr_server)
    ctx = managed_ctx(herdr_server, tmp_path, _config(tmp_path, f'disableTools = ["{closer}"]\n'))
    result = run_tool(starter, args, ctx)
    assert_family_shape(ALL_TOOLS[starter], result, "tool_disabled", final=True)
    assert acted(rec) == []


def test_the_doctor_answers_server_not_running_like_every_other_tool(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {
        "HOME": str(tmp_path),
        "PATH": str(empty),  # no herdr executable
        "HERDR_SOCKET_PATH": str(tmp_path / "gone.sock"),  # no socket
        "HERDR_ORCHESTRATOR_TRANSPORT": "auto",
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    doctor = run_tool("_dsh_herdr_doctor", {}, ToolContext.from_env(env))
    listed = run_tool("_dsh_herdr_workspace_list", {}, ToolContext.from_env(env))
    assert listed["errorCode"] == "server_not_running", listed
    assert doctor["errorCode"] == "server_not_running", doctor
    assert doctor["data"]["error"]["code"] == "server_not_running"
    assert str(tmp_path / "gone.sock") in doctor["data"]["error"]["message"]


def test_a_managed_policy_refusal_comes_in_the_managed_shape(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx = managed_ctx(herdr_server, tmp_path, {"HERDR_ORCHESTRATOR_AGENT_NAMES": "ok-*"})
    result = run_tool("agent_close", {"agent": "evil"}, ctx)
    assert_family_shape(ALL_TOOLS["agent_close"], result, "agent_name_not_allowed", False)
    assert result["text"].startswith("Agent close failed.")


def test_a_read_only_refusal_never_says_retry(herdr_server: HerdrServer, tmp_path: Path) -> None:
    ctx = managed_ctx(herdr_server, tmp_path, {"HERDR_ORCHESTRATOR_READ_ONLY": "1"})
    result = run_tool("herdr_spawn_agent", {"prompt": "t", "cwd": str(tmp_path)}, ctx)
    assert (result["error"]["code"], result["nextAction"]) == ("READ_ONLY", "ask_user")
    managed = run_tool("agent_delegate", {"definition": "scout", "task": "t"}, ctx)
    assert "retry" not in managed["error"]["nextAction"].lower()


def test_a_refusal_names_the_machine_the_request_named(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx = managed_ctx(herdr_server, tmp_path, {"HERDR_ORCHESTRATOR_READ_ONLY": "1"})
    result = run_tool("herdr_spawn_agent", {"prompt": "t", "machine": "box"}, ctx)
    assert (result["error"]["code"], result["machine"]) == ("READ_ONLY", "box")
    here = run_tool("herdr_spawn_agent", {"prompt": "t"}, ctx)
    assert here["machine"] == "local"
    # a refusal by the tool itself (the machine is not configured) names it too
    ctx = managed_ctx(herdr_server, tmp_path, {})
    unknown = run_tool("herdr_spawn_agent", {"prompt": "t", "machine": "box"}, ctx)
    assert (unknown["error"]["code"], unknown["machine"]) == ("MACHINE_NOT_ENABLED", "box")
    assert "box" in unknown["header"]


def test_a_failed_agent_delegate_is_audited_with_its_error_code(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    ctx = managed_ctx(herdr_server, tmp_path, {"HERDR_ORCHESTRATOR_ENABLED": "false"})
    run_tool("agent_delegate", {"definition": "scout", "task": "t", "label": "k"}, ctx)
    ctx = managed_ctx(herdr_server, tmp_path, {})
    failed = run_tool("agent_delegate", {"definition": "no-such-definition", "task": "t"}, ctx)
    assert failed["ok"] is False and failed["error"]["category"], failed
    path = audit.audit_path(tmp_path / "state" / "herdr-orchestrator")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["tool"], line["outcome"], line["errorCode"]) for line in lines] == [
        ("agent_delegate", "refused", "disabled"),
        ("agent_delegate", "failed", failed["error"]["category"]),
    ]


def test_a_tool_added_without_a_declaration_gets_the_same_gates(tmp_path: Path) -> None:
    # an embedder's tools: no Traits given, so the runner reads them from risk, name, schema
    ran: list[str] = []

    def handler(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
        ran.append(str(args))
        return {"ok": True}

    schema = {"type": "object", "properties": {"cwd": {"type": "string"}}}
    runs = Tool("thing_run", "R2", "runs", schema, handler)
    closes = Tool("thing_close", "R1", "closes", {"type": "object", "properties": {}}, handler)
    assert (runs.declared.effect, runs.declared.cwd) == ("run", "cwd")
    assert closes.declared.effect == "end"
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    env = {
        "HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "HERDR_ORCHESTRATOR_ENABLED": "false",
    }
    ctx = ToolContext.from_env(env)
    tools = {tool.name: tool for tool in (runs, closes)}
    refused = governed_call(runs, {"cwd": str(tmp_path)}, ctx, run_given, tools)
    assert (refused["ok"], refused["errorCode"]) == (False, "disabled")
    assert governed_call(closes, {}, ctx, run_given, tools) == {"ok": True}
    ctx = ToolContext.from_env({**env, "HERDR_ORCHESTRATOR_ENABLED": "1",
                                "HERDR_ORCHESTRATOR_ALLOW_CWD": str(allowed)})  # fmt: skip
    outside = governed_call(runs, {"cwd": str(tmp_path)}, ctx, run_given, tools)
    assert outside["errorCode"] == "cwd_not_allowed"
    assert ran == ["{}"]  # only the close ran
