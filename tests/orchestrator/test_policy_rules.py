"""The policy's rules on their own, with stand-in tools (``tools.policy``, no Herdr, no
registry): which tools start agents, which arguments are native agent arguments, how an
agent is addressed under ``agentNames``, and the exact refusal of each switch. The tool-level
tests (test_policy.py) prove the rules bind every real tool; these pin each rule's edges."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from orchestrator.core.caller import Caller
from orchestrator.core.config import Config
from orchestrator.core.policy import (
    Denial,
    Policy,
    checked_against,
    effective_policy,
    is_agent_name,
    listed,
    refusal,
    starts_agents,
)
from orchestrator.core.tool import Tool, ToolContext, Traits
from orchestrator.pipeline.call_guard import policy_of


def tool(tool_name: str = "x_start", risk: str = "R2", /, **props: Any) -> Tool:
    """A tool with no handler worth calling: its name, risk and schema parameters (and the
    declaration the runner infers from them) are all the policy reads."""
    return bare_tool(tool_name, risk, {"properties": props})


def bare_tool(tool_name: str, risk: str, schema: dict[str, Any]) -> Tool:
    return Tool(tool_name, cast(Any, risk), "", schema, lambda params, ctx: {})


STARTER = tool(
    kind={"type": "string", "default": "pi"}, name={"type": "string"}, args={"type": "array"}
)
ADDRESSER = tool("x_prompt", agent={"type": "string"}, target={"type": "string"})


def test_a_tool_starts_agents_when_its_kind_parameter_names_agent_kinds() -> None:
    assert starts_agents(STARTER)
    assert starts_agents(tool(kind={"enum": ["pi", "codex"]}))
    assert not starts_agents(tool(kind={"enum": ["pi", "bash"]}))  # not only agent kinds
    assert not starts_agents(tool(kind="a string, not a schema"))
    assert not starts_agents(tool())
    assert not starts_agents(bare_tool("x", "R2", {}))
    assert not starts_agents(bare_tool("x", "R2", {"properties": ["kind"]}))


def test_an_agent_is_addressed_by_name_only() -> None:
    assert is_agent_name("worker-1")
    for value in ("w1:p2", "Worker", "", None, 7, "a" * 33):
        assert not is_agent_name(value), value


def test_each_switch_refuses_with_its_code_message_and_field() -> None:
    kinds = Policy(agent_kinds=("claude", "cod*"))
    assert refusal(kinds, STARTER, {}) == Denial(
        "agent_kind_not_allowed", "agent kind 'pi' is not in agentKinds (claude, cod*)", "kind"
    )  # an absent kind is the schema's default
    assert refusal(kinds, STARTER, {"kind": "codex"}) is None
    assert refusal(kinds, STARTER, {"kind": "secret-tool"}) == Denial(
        "agent_kind_not_allowed", "the agent kind is not in agentKinds (claude, cod*)", "kind"
    )  # a value that is no agent kind is not quoted back
    # a kind the policy cannot read is refused, failing closed (the schema refuses it too)
    unreadable = refusal(kinds, STARTER, {"kind": 3})
    assert unreadable is not None and unreadable.code == "agent_kind_not_allowed"

    names = Policy(agent_names=("work*",))
    assert refusal(names, STARTER, {}) == Denial(
        "agent_name_not_allowed",
        "agentNames is set: give the agent a name (a generated one cannot be checked)",
        "name",
    )
    assert refusal(names, STARTER, {"name": "boss"}) == Denial(
        "agent_name_not_allowed", "the agent name is not in agentNames", "name"
    )
    assert refusal(names, STARTER, {"name": "worker"}) is None
    assert refusal(names, ADDRESSER, {"agent": "w1:p2"}) == Denial(
        "agent_name_not_allowed",
        "agentNames is set: address the agent by its name (agent is not a name)",
        "agent",
    )
    assert refusal(names, ADDRESSER, {"agent": "worker", "target": "boss"}) == Denial(
        "agent_name_not_allowed", "the agent is not in agentNames", "target"
    )
    assert refusal(names, ADDRESSER, {"agent": "worker"}) is None
    # a ``name`` that names no agent (a tool that starts none) is not checked
    assert refusal(names, tool("x_rename", name={}), {"name": "Anything Goes"}) is None
    assert refusal(names, tool("x_read", "R0", agent={}), {"agent": "boss"}) is None
    assert refusal(Policy(), ADDRESSER, {"agent": "w1:p2"}) is None  # agentNames unset

    no_args = Policy(allow_agent_args=False)
    assert refusal(no_args, STARTER, {"args": ["--model", "x"]}) == Denial(
        "agent_args_not_allowed",
        "native agent arguments are off (allowAgentArgs; off by default over MCP)",
        "args",
    )
    assert refusal(no_args, STARTER, {"args": []}) is None
    # ``args`` counts only on a tool that starts agents; ``agent_args`` on any tool
    assert refusal(no_args, tool("x_run", args={}), {"args": ["x"]}) is None
    other = tool("x_send", agent_args={})
    assert refusal(no_args, other, {"agent_args": ["x"]}) == Denial(
        "agent_args_not_allowed",
        "native agent arguments are off (allowAgentArgs; off by default over MCP)",
        "agent_args",
    )
    assert refusal(Policy(), other, {"agent_args": ["x"]}) is None


def test_read_only_disabled_tools_and_an_invalid_configuration() -> None:
    assert refusal(Policy(read_only=True), STARTER, {}) == Denial(
        "read_only",
        "x_start is R2: the configuration is read-only (readOnly = true), only R0 tools run",
    )
    assert refusal(Policy(disable_tools=("x_st*",)), STARTER, {}) == Denial(
        "tool_disabled", "x_start is disabled by configuration (disableTools)"
    )
    broken = Policy(config_error="bad file")
    assert refusal(broken, STARTER, {}) == Denial("config_invalid", "bad file")
    assert refusal(broken, tool("herdr_doctor", "R0"), {}) is None
    assert listed(broken, tool("herdr_doctor", "R0"))
    assert not listed(broken, tool("x_read", "R0"))
    assert not listed(Policy(read_only=True), STARTER)
    assert listed(Policy(read_only=True), tool("x_read", "R0"))
    assert not listed(Policy(disable_tools=("x_*",)), tool("x_read", "R0"))


def test_the_doctor_prints_the_effective_policy() -> None:
    assert Policy().describe() == {
        "readOnly": False,
        "disableTools": [],
        "agentKinds": "*",
        "agentNames": "*",
        "allowAgentArgs": True,
    }
    assert Policy(
        read_only=True,
        disable_tools=("a*",),
        agent_kinds=("pi",),
        agent_names=("w*",),
        allow_agent_args=False,
        config_error="bad",
    ).describe() == {
        "readOnly": True,
        "disableTools": ["a*"],
        "agentKinds": ["pi"],
        "agentNames": ["w*"],
        "allowAgentArgs": False,
        "configError": "bad",
    }


def test_the_effective_policy_is_the_checked_one_else_the_configuration_s() -> None:
    """A handler sees the policy its call was checked against; outside a checked call it is
    the configuration's, and with no readable configuration only the doctors run."""
    assert effective_policy(None) == Policy(config_error="unreadable")
    assert effective_policy(Config(read_only=True)).read_only is True
    rules = Policy(agent_names=("w*",))
    with checked_against(rules):
        assert effective_policy(Config(read_only=True)) is rules
    assert effective_policy(Config()).read_only is False


def test_policy_of_a_context_for_a_caller(tmp_path: Path) -> None:
    """The policy read from a context: for the caller given (native agent arguments are off
    over MCP by default), invalid configuration and misspelt ``disableTools`` globs reported,
    and no glob judged when no tool names are given to judge it against."""
    home = {"HOME": str(tmp_path)}
    ctx = ToolContext(env=home)
    assert policy_of(ctx, caller=Caller(kind="mcp")).allow_agent_args is False
    assert policy_of(ctx, caller=Caller(kind="cli")).allow_agent_args is True
    broken = ToolContext(env={**home, "HERDR_ORCHESTRATOR_ALLOW_CWD": ""})
    assert policy_of(broken) == Policy(
        config_error="environment: allowCwd: an empty list is refused: list the allowed "
        "directories, or remove the setting to allow every directory"
    )
    typo = ToolContext(env={**home, "HERDR_ORCHESTRATOR_DISABLE_TOOLS": "x_strat"})
    assert policy_of(typo, ["x_start"]) == Policy(
        config_error="disableTools: 'x_strat' matches no tool (herdr-orchestrator tools)"
    )
    assert policy_of(typo).config_error is None  # no names: nothing to judge the glob by


def declared(tool_name: str, schema: dict[str, Any], **traits: Any) -> Tool:
    """A stand-in tool with an explicit declaration (nothing inferred)."""
    return Tool(tool_name, "R2", "", schema, lambda params, ctx: {}, Traits(**traits))


def test_a_start_is_off_when_the_tool_that_would_close_it_is_disabled() -> None:
    start = declared("x_start", {"properties": {}}, closed_by="x_close")
    for disabled in (("x_close",), ("x_cl*",)):
        policy = Policy(disable_tools=disabled)
        assert refusal(policy, start, {}) == Denial(
            "tool_disabled",
            "x_start is off because x_close, which closes what it starts, is disabled "
            "(disableTools)",
        )
        assert not listed(policy, start)
    other = Policy(disable_tools=("y_close",))
    assert refusal(other, start, {}) is None and listed(other, start)


def test_a_kind_parameter_without_a_readable_schema_has_no_default() -> None:
    kinds = Policy(agent_kinds=("pi",))
    for schema in ({"properties": ["kind"]}, {"properties": {"kind": "a string"}}):
        start = declared("x_start", schema, kind="kind")
        assert refusal(kinds, start, {}) == Denial(
            "agent_kind_not_allowed", "the agent kind is not in agentKinds (pi)", "kind"
        )
        assert refusal(kinds, start, {"kind": "pi"}) is None


def test_every_target_given_is_checked_not_only_the_first_declared() -> None:
    names = Policy(agent_names=("work*",))
    prompt = declared("x_prompt", {"properties": {}}, targets=("agent", "target"))
    assert refusal(names, prompt, {"target": "boss"}) == Denial(
        "agent_name_not_allowed", "the agent is not in agentNames", "target"
    )
    assert refusal(names, prompt, {"target": "worker"}) is None
