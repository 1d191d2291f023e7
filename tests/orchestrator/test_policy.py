"""The policy (issue 18 §2): every switch refuses in the tool family's shape before anything
reaches Herdr (the simulator receives no request), MCP lists only what the policy offers, the
command line asks the same module, and a bad policy is refused when it is read."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from orchestrator import cli
from orchestrator.core.caller import Caller, calling_as
from orchestrator.core.config import ConfigError, load_config
from orchestrator.core.tool import ToolContext
from orchestrator.mcp_server import build_server
from orchestrator.pipeline.registry import ALL_TOOLS, run_tool
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import Received, context, pane_of, received
from tests.results import field

#: what the test harness itself may send (the plugin's event watcher)
HARNESS = {"ping", "events.subscribe"}


def acted(rec: Received) -> list[str]:
    return [m for m in rec.methods(pings=True) if m not in HARNESS]


def code_of(result: Mapping[str, Any]) -> str:
    """The error code of either family (``errorCode``, or an AgentResult's ``error.code``)."""
    if "errorCode" in result:
        return str(result["errorCode"])
    return str(result["error"]["code"])


def refused_everywhere(
    server: HerdrServer, env: Mapping[str, str], calls: list[tuple[str, dict[str, Any]]]
) -> list[str]:
    """Run ``calls`` on the simulator with ``env``; the codes, and nothing reached Herdr."""
    rec = received(server)
    ctx = context(server, "socket", env)
    codes = [code_of(run_tool(name, args, ctx)) for name, args in calls]
    assert acted(rec) == []
    return codes


def test_read_only_refuses_every_tool_that_is_not_r0(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    pane = pane_of(herdr_server, tmp_path)
    codes = refused_everywhere(
        herdr_server,
        {"HERDR_ORCHESTRATOR_READ_ONLY": "1"},
        [
            ("_dsh_herdr_workspace_create", {"cwd": str(tmp_path)}),
            ("_dsh_herdr_pane_send_text", {"pane": pane, "text": "hi"}),
            ("_dsh_herdr_pane_run", {"pane": pane, "command": "echo hi", "preview": True}),
            ("herdr_spawn_agent", {"prompt": "task", "cwd": str(tmp_path)}),
            ("herdr_close_agent", {"target": "worker"}),
        ],
    )
    assert codes == ["read_only", "read_only", "read_only", "READ_ONLY", "READ_ONLY"]
    ctx = context(herdr_server, "socket", {"HERDR_ORCHESTRATOR_READ_ONLY": "1"})
    assert run_tool("_dsh_herdr_pane_list", {}, ctx)["ok"] is True  # R0 still runs


def test_disabled_tools_are_refused_by_name_whatever_their_risk(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    pane = pane_of(herdr_server, tmp_path)
    config = tmp_path / "config.toml"
    config.write_text('disableTools = ["_dsh_herdr_pane_*", "herdr_inbox"]\n')
    codes = refused_everywhere(
        herdr_server,
        {"HERDR_ORCHESTRATOR_CONFIG": str(config)},
        [
            ("_dsh_herdr_pane_read", {"pane": pane}),
            ("_dsh_herdr_pane_run", {"pane": pane, "command": "echo hi"}),
            ("herdr_inbox", {}),
        ],
    )
    assert codes == ["tool_disabled", "tool_disabled", "TOOL_DISABLED"]


def test_agent_kinds_outside_the_allowlist_are_refused(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    pane = pane_of(herdr_server, tmp_path)
    codes = refused_everywhere(
        herdr_server,
        {"HERDR_ORCHESTRATOR_AGENT_KINDS": "pi,omp"},
        [
            ("_dsh_herdr_agent_start", {"name": "w", "kind": "claude", "pane": pane}),
            ("herdr_spawn_agent", {"prompt": "t", "kind": "codex", "cwd": str(tmp_path)}),
        ],
    )
    assert codes == ["agent_kind_not_allowed", "AGENT_KIND_NOT_ALLOWED"]


def test_an_absent_kind_is_the_schemas_default_and_is_checked_too(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    codes = refused_everywhere(
        herdr_server,
        {"HERDR_ORCHESTRATOR_AGENT_KINDS": "claude"},
        [("herdr_spawn_agent", {"prompt": "t", "cwd": str(tmp_path)})],  # kind pi by default
    )
    assert codes == ["AGENT_KIND_NOT_ALLOWED"]


def test_agent_names_bind_starts_and_every_address_that_is_not_r0(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    pane = pane_of(herdr_server, tmp_path)
    codes = refused_everywhere(
        herdr_server,
        {"HERDR_ORCHESTRATOR_AGENT_NAMES": "ok-*"},
        [
            ("_dsh_herdr_agent_start", {"name": "rogue", "kind": "pi", "pane": pane}),
            ("_dsh_herdr_agent_prompt", {"agent": "rogue", "prompt": "p", "wait": False}),
            # a pane id cannot be checked without asking Herdr: refused
            ("_dsh_herdr_agent_prompt", {"agent": pane, "prompt": "p", "wait": False}),
            ("herdr_spawn_agent", {"prompt": "t", "cwd": str(tmp_path)}),  # no name
            ("herdr_message_agent", {"target": "rogue", "message": "m"}),
            ("herdr_close_agent", {"target": "t-0123456789ab"}),  # a task id
        ],
    )
    assert codes == [
        "agent_name_not_allowed",
        "agent_name_not_allowed",
        "agent_name_not_allowed",
        "AGENT_NAME_NOT_ALLOWED",
        "AGENT_NAME_NOT_ALLOWED",
        "AGENT_NAME_NOT_ALLOWED",
    ]


def test_agent_args_are_off_over_mcp_unless_allowed(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    pane = pane_of(herdr_server, tmp_path)
    start = {"name": "w", "kind": "pi", "pane": pane, "args": ["--x"], "preview": True}
    spawn = {"prompt": "t", "cwd": str(tmp_path), "agent_args": ["--x"], "preview": True}
    rec = received(herdr_server)
    ctx = context(herdr_server, "socket")
    with calling_as(Caller("mcp", "host", "1")):
        codes = [code_of(run_tool(n, a, ctx)) for n, a in [("_dsh_herdr_agent_start", start)]]
        codes.append(code_of(run_tool("herdr_spawn_agent", spawn, ctx)))
    assert codes == ["agent_args_not_allowed", "AGENT_ARGS_NOT_ALLOWED"]
    assert acted(rec) == []
    # the command line's default allows them (a preview: nothing runs either way)
    assert run_tool("_dsh_herdr_agent_start", start, ctx)["ok"] is True
    # and the configuration can allow them over MCP, or refuse them from the command line
    allowed = context(herdr_server, "socket", {"HERDR_ORCHESTRATOR_ALLOW_AGENT_ARGS": "1"})
    with calling_as(Caller("mcp")):
        assert run_tool("_dsh_herdr_agent_start", start, allowed)["ok"] is True
    refused = context(herdr_server, "socket", {"HERDR_ORCHESTRATOR_ALLOW_AGENT_ARGS": "0"})
    assert code_of(run_tool("_dsh_herdr_agent_start", start, refused)) == "agent_args_not_allowed"


def test_a_disable_glob_matching_no_tool_refuses_everything_but_the_doctors(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    env = {"HERDR_ORCHESTRATOR_DISABLE_TOOLS": "herdr_spwn_*"}  # a typo must not leave it on
    codes = refused_everywhere(herdr_server, env, [("_dsh_herdr_pane_list", {})])
    assert codes == ["config_invalid"]
    report = run_tool("herdr_doctor", {}, context(herdr_server, "socket", env))
    policy = next(c for c in report["checks"] if c["id"] == "policy")
    assert field(policy, "status") == "fail" and "herdr_spwn_*" in policy["detail"]


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("disableTools", '["herdr_[spawn"]', "disableTools[0]"),
        ("disableTools", '["a b"]', "disableTools[0]"),
        ("agentKinds", "[]", "agentKinds"),
        ("agentNames", '["ok]"]', "agentNames[0]"),
        ("readOnly", '"yes"', "readOnly"),
        ("readonly", "true", "readonly"),
    ],
)
def test_bad_policy_keys_and_globs_are_refused_naming_the_key(
    tmp_path: Path, key: str, value: str, field: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"{key} = {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_config({"HOME": str(tmp_path)}, path)
    assert caught.value.key == field


def test_the_environment_sets_every_policy_key(tmp_path: Path) -> None:
    config = load_config(
        {
            "HOME": str(tmp_path),
            "HERDR_ORCHESTRATOR_READ_ONLY": "true",
            "HERDR_ORCHESTRATOR_DISABLE_TOOLS": "_dsh_herdr_pane_run, herdr_inbox",
            "HERDR_ORCHESTRATOR_AGENT_KINDS": "pi",
            "HERDR_ORCHESTRATOR_AGENT_NAMES": "w-*",
            "HERDR_ORCHESTRATOR_ALLOW_AGENT_ARGS": "no",
            "HERDR_ORCHESTRATOR_PASS_ENV": "OPENAI_API_KEY",
        }
    )
    assert config.read_only is True
    assert config.disable_tools == ("_dsh_herdr_pane_run", "herdr_inbox")
    assert (config.agent_kinds, config.agent_names) == (("pi",), ("w-*",))
    assert config.allow_agent_args is False
    assert config.pass_env == ("OPENAI_API_KEY",)


def listed_names(env: Mapping[str, str]) -> list[str]:
    async def body() -> list[str]:
        server = build_server(context=ToolContext.from_env(env))
        async with Client(server, mode="legacy") as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    return anyio.run(body)


def test_mcp_lists_only_what_the_policy_offers(tmp_path: Path) -> None:
    base = {"HOME": str(tmp_path)}
    assert listed_names(base) == list(ALL_TOOLS)
    read_only = listed_names({**base, "HERDR_ORCHESTRATOR_READ_ONLY": "1"})
    assert read_only == [name for name, tool in ALL_TOOLS.items() if tool.risk == "R0"]
    hidden = listed_names({**base, "HERDR_ORCHESTRATOR_DISABLE_TOOLS": "_dsh_herdr_*"})
    assert hidden == [name for name in ALL_TOOLS if not name.startswith("_dsh_herdr_")]
    broken = listed_names({**base, "HERDR_ORCHESTRATOR_DISABLE_TOOLS": "nothing-like-it"})
    assert broken == ["_dsh_herdr_doctor", "herdr_doctor"]


def test_mcp_refuses_a_hidden_tool_called_by_name(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    env = {
        **herdr_server.env,
        "HERDR_BIN_PATH": str(herdr_server.cli_path),
        "HERDR_ORCHESTRATOR_DISABLE_TOOLS": "_dsh_herdr_workspace_*",
    }
    rec = received(herdr_server)

    async def body() -> Any:
        server = build_server(context=ToolContext.from_env(env))
        async with Client(server, mode="legacy") as client:
            return await client.call_tool("_dsh_herdr_workspace_list", {})

    result = anyio.run(body)
    assert result.is_error is True
    assert result.structured_content["errorCode"] == "tool_disabled"
    assert acted(rec) == []


def test_the_command_line_asks_the_same_policy(
    herdr_server: HerdrServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in herdr_server.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HERDR_ORCHESTRATOR_DISABLE_TOOLS", "_dsh_herdr_workspace_list")
    rec = received(herdr_server)
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    status = cli.main(["call", "_dsh_herdr_workspace_list", "{}"])
    assert status == cli.EXIT_NOT_OK
    assert json.loads(out.getvalue())["errorCode"] == "tool_disabled"
    assert acted(rec) == []


def test_the_tools_command_lists_what_the_policy_offers(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("HERDR_ORCHESTRATOR_READ_ONLY", "1")
    assert cli.main(["tools"]) == cli.EXIT_OK
    names = [tool["name"] for tool in json.loads(capsys.readouterr().out)["tools"]]
    assert names == [name for name, tool in ALL_TOOLS.items() if tool.risk == "R0"]


def test_the_doctor_prints_the_effective_policy_for_its_caller(
    herdr_server: HerdrServer,
) -> None:
    env = {"HERDR_ORCHESTRATOR_READ_ONLY": "1", "HERDR_ORCHESTRATOR_AGENT_KINDS": "pi,c*"}
    ctx = context(herdr_server, "socket", env)
    with calling_as(Caller("mcp", "host")):
        report = run_tool("herdr_doctor", {}, ctx)
    assert report["runtime"]["policy"] == {
        "readOnly": True,
        "disableTools": [],
        "agentKinds": ["pi", "c*"],
        "agentNames": "*",
        "allowAgentArgs": False,
    }
    check = next(c for c in report["checks"] if c["id"] == "policy")
    assert field(check, "status") == "ok"
    assert "read-only" in check["detail"] and "agent kinds: pi, c*" in check["detail"]
    assert run_tool("herdr_doctor", {}, ctx)["runtime"]["policy"]["allowAgentArgs"] is True
