"""The MCP server: the 24 low-level, nine agent and nine managed-agent tools as an MCP client
sees them, and calls end to end against a simulator, through an in-process client and through a real
``herdr-orchestrator mcp`` process.

In process, ``mode="legacy"`` runs the ``initialize`` handshake and JSON-RPC over the SDK's
memory streams (what most hosts speak today); the SDK's default era (2026-07-28, per request,
no framing in process) is run too for the listing and one call. The stdio process is driven
through the handshake.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent

from orchestrator.core.tool import Tool, ToolContext
from orchestrator.mcp_server import RISK_META_KEY, build_server
from orchestrator.pipeline.registry import ALL_TOOLS
from pytest_herdr.backends import HerdrServer
from tests.results import assert_refused, field

T = TypeVar("T")

#: The contract's R2 tools (seed 001): the only ones a host should treat as destructive.
#: the seed 001 R2 tools, and the one agent tool that starts agents (seed 000)
R2_TOOLS = {
    "_dsh_herdr_pane_run",
    "_dsh_herdr_agent_start",
    "_dsh_herdr_agent_prompt",
    "herdr_spawn_agent",
    "herdr_message_agent",  # prompts an agent (issue 10 §3)
    # seed 002: the managed-agent tools that start or prompt a pi child
    "agent_delegate",
    "agent_continue",
    "agent_steer",
    "agent_interrupt",
    "agent_reply",
}
BIN = Path(sys.executable).parent
TIMEOUT = 20.0
#: Both protocol eras the SDK serves: the handshake (over memory streams) and per request.
ERAS = pytest.mark.parametrize("mode", ["legacy", "auto"])


def run(body: Callable[[], Awaitable[T]]) -> T:
    """Run one async test body with a bound on the whole exchange."""

    async def bounded() -> T:
        with anyio.fail_after(TIMEOUT):
            return await body()

    try:
        return anyio.run(bounded)
    finally:
        # an unclosed transport is reported when it is collected; collect now, so the test
        # that leaked it is the one that fails (not whichever test the collector runs in)
        gc.collect()


def tool_env(server: HerdrServer) -> dict[str, str]:
    """The environment that points the tools at ``server`` (its socket and its ``herdr``)."""
    return {**server.env, "HERDR_BIN_PATH": str(server.cli_path)}


def served(server: HerdrServer) -> Server[Any]:
    return build_server(context=ToolContext.from_env(tool_env(server)))


def body_of(result: CallToolResult) -> dict[str, Any]:
    """The result object, checked to be the same in the text block and the structured content."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    body: dict[str, Any] = json.loads(block.text)
    assert result.structured_content == body
    return body


def received(server: HerdrServer) -> list[str]:
    """Start recording the methods ``server`` receives; returns the live list."""
    methods: list[str] = []

    def observe(kind: str, line: dict[str, Any]) -> None:
        if kind == "request" and isinstance(line.get("method"), str):
            methods.append(line["method"])

    server.tap(observe)
    return methods


def test_tool_layer_does_not_import_the_mcp_sdk() -> None:
    code = (
        "import sys, orchestrator.pipeline.registry, orchestrator.cli\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types'))\n"
        "print(bad)\n"
        "raise SystemExit(1 if bad else 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


@ERAS
def test_lists_the_24_tools_in_contract_order_with_schemas_verbatim(mode: str) -> None:
    async def body() -> None:
        async with Client(build_server(context=ToolContext.from_env({})), mode=mode) as client:
            listed = (await client.list_tools()).tools
        assert [tool.name for tool in listed] == list(ALL_TOOLS)
        assert len(listed) == 42  # 24 low-level, 9 agent (seed 000), 9 managed (seed 002)
        for tool in listed:
            own = ALL_TOOLS[tool.name]
            assert tool.input_schema == json.loads(json.dumps(own.input_schema, default=dict))
            assert tool.description == own.description

    run(body)


def test_listed_schemas_reject_unknown_fields() -> None:
    async def body() -> None:
        async with Client(build_server(context=ToolContext.from_env({})), mode="legacy") as client:
            listed = (await client.list_tools()).tools
        for tool in listed:
            assert tool.input_schema["additionalProperties"] is False, tool.name
            errors = Draft202012Validator(tool.input_schema).iter_errors({"unexpected": 1})
            assert "additionalProperties" in {error.validator for error in errors}, tool.name

    run(body)


#: R1 tools that end something (issue 18 §3): destructive, and idempotent
ENDING_TOOLS = {"herdr_interrupt_agent", "herdr_close_agent", "agent_close"}


def test_risk_levels_reach_clients_as_hints_and_meta() -> None:
    async def body() -> None:
        async with Client(build_server(context=ToolContext.from_env({})), mode="legacy") as client:
            listed = (await client.list_tools()).tools
        assert [tool.name for tool in listed] == list(ALL_TOOLS)
        for tool in listed:
            risk = ALL_TOOLS[tool.name].risk
            assert tool.meta == {RISK_META_KEY: risk}
            hints = tool.annotations
            assert hints is not None, tool.name
            assert hints.read_only_hint is (risk == "R0"), tool.name
            ends = tool.name in ENDING_TOOLS
            assert hints.destructive_hint is (risk == "R2" or ends), tool.name
            assert hints.idempotent_hint is (risk == "R0" or ends), tool.name
            assert hints.open_world_hint is (risk == "R2"), tool.name
        destructive = {
            tool.name for tool in listed if tool.annotations and tool.annotations.destructive_hint
        }
        assert destructive == R2_TOOLS | ENDING_TOOLS

    run(body)


@ERAS
def test_a_read_tool_runs_end_to_end_against_the_simulator(
    herdr_server: HerdrServer, mode: str
) -> None:
    assert herdr_server.sim is not None
    herdr_server.sim.call("workspace.create", {"label": "mcp-e2e"})
    methods = received(herdr_server)

    async def body() -> CallToolResult:
        async with Client(served(herdr_server), mode=mode) as client:
            return await client.call_tool("_dsh_herdr_workspace_list", {})

    result = run(body)
    answer = body_of(result)
    assert result.is_error is False
    assert answer["ok"] is True and answer["exitCode"] == 0
    assert "mcp-e2e" in json.dumps(answer)
    assert "workspace.list" in methods


def test_an_extra_field_is_refused_before_herdr_is_called(herdr_server: HerdrServer) -> None:
    methods = received(herdr_server)

    async def body() -> CallToolResult:
        async with Client(served(herdr_server), mode="legacy") as client:
            return await client.call_tool("_dsh_herdr_workspace_list", {"unexpected": 1})

    result = run(body)
    answer = body_of(result)
    assert result.is_error is True
    assert_refused(answer, "invalid_arguments")
    assert methods == []


def test_a_herdr_error_is_an_error_result_carrying_the_code(herdr_server: HerdrServer) -> None:
    async def body() -> CallToolResult:
        async with Client(served(herdr_server), mode="legacy") as client:
            return await client.call_tool("_dsh_herdr_pane_get", {"pane": "p_missing"})

    result = run(body)
    answer = body_of(result)
    assert result.is_error is True
    assert answer["ok"] is False
    assert field(answer, "data", "error", "code") == "pane_not_found"


def test_a_preview_returns_without_calling_herdr_or_echoing_the_command(
    herdr_server: HerdrServer,
) -> None:
    methods = received(herdr_server)

    async def body() -> CallToolResult:
        async with Client(served(herdr_server), mode="legacy") as client:
            return await client.call_tool(
                "_dsh_herdr_pane_run",
                {"pane": "p_1", "command": "echo secret-token-123", "preview": True},
            )

    result = run(body)
    answer = body_of(result)
    assert result.is_error is False
    assert answer["ok"] is True and field(answer, "data", "preview") is True
    assert "secret-token-123" not in json.dumps(answer)
    assert methods == []


def test_preview_required_by_the_servers_environment(herdr_server: HerdrServer) -> None:
    methods = received(herdr_server)
    env = {**tool_env(herdr_server), "DSH_HERDR_PREVIEW_REQUIRED": "1"}

    async def body() -> CallToolResult:
        server = build_server(context=ToolContext.from_env(env))
        async with Client(server, mode="legacy") as client:
            return await client.call_tool(
                "_dsh_herdr_pane_run", {"pane": "p_1", "command": "echo hi"}
            )

    result = run(body)
    assert result.is_error is True
    assert body_of(result)["errorCode"] == "preview_required"
    assert methods == []


def test_an_unknown_tool_is_a_protocol_error() -> None:
    async def body() -> None:
        async with Client(build_server(context=ToolContext.from_env({})), mode="legacy") as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("_dsh_herdr_nope", {})
        assert raised.value.code == INVALID_PARAMS
        assert "_dsh_herdr_nope" in raised.value.message

    run(body)


def _echo(params: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if params.get("word") == "boom":
        raise RuntimeError("handler bug")
    return {"ok": True, "command": "echo", "exitCode": 0, "data": {"word": params["word"]}}


ECHO = Tool(
    name="echo_word",
    risk="R1",
    description="Echo a word.",
    input_schema={
        "type": "object",
        "properties": {"word": {"type": "string", "enum": ["hi", "boom"]}},
        "required": ["word"],
        "additionalProperties": False,
    },
    handler=_echo,
)


def test_tools_outside_the_registry_are_validated_and_contained() -> None:
    async def body() -> list[CallToolResult]:
        async with Client(
            build_server([ECHO], context=ToolContext.from_env({})), mode="legacy"
        ) as client:
            listed = (await client.list_tools()).tools
            assert [tool.name for tool in listed] == ["echo_word"]
            assert listed[0].input_schema == ECHO.input_schema
            return [
                await client.call_tool("echo_word", arguments)
                for arguments in ({"word": "hi"}, {"word": "bye"}, {"word": "boom"})
            ]

    fine, refused, crashed = run(body)
    assert body_of(fine)["data"] == {"word": "hi"} and fine.is_error is False
    assert body_of(refused)["errorCode"] == "invalid_arguments" and refused.is_error is True
    assert body_of(crashed)["errorCode"] == "internal_error" and crashed.is_error is True


def _typed(params: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    value = params["timeout"]
    return {"ok": True, "command": "typed", "exitCode": 0, "data": {"type": type(value).__name__}}


def test_tools_outside_the_registry_get_integers_as_registry_tools_do() -> None:
    # JSON's 5000.0 validates as an integer; run_tool hands handlers an int (Herdr refuses
    # "--timeout 5000.0"), and a server's own tools take the same path (a frozen schema too)
    schema = MappingProxyType(
        {
            "type": "object",
            "properties": MappingProxyType({"timeout": MappingProxyType({"type": "integer"})}),
            "required": ["timeout"],
            "additionalProperties": False,
        }
    )
    typed = Tool(name="typed", risk="R0", description="Type.", input_schema=schema, handler=_typed)

    async def body() -> CallToolResult:
        async with Client(
            build_server([typed], context=ToolContext.from_env({})), mode="legacy"
        ) as client:
            return await client.call_tool("typed", {"timeout": 5000.0})

    result = run(body)
    assert result.is_error is False, body_of(result)
    assert body_of(result)["data"] == {"type": "int"}


@pytest.mark.slow
def test_stdio_server_process_initializes_lists_and_calls(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    assert herdr_server.sim is not None
    herdr_server.sim.call("workspace.create", {"label": "over-stdio"})
    methods = received(herdr_server)
    params = StdioServerParameters(
        command=str(BIN / "herdr-orchestrator"), args=["mcp"], env=tool_env(herdr_server)
    )

    async def body() -> tuple[Any, list[str], CallToolResult]:
        with (tmp_path / "server.stderr").open("w") as errlog:
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, mode="legacy") as client:
                info = client.server_info
                names = [tool.name for tool in (await client.list_tools()).tools]
                result = await client.call_tool("_dsh_herdr_workspace_list", {})
        return info, names, result

    info, names, result = run(body)
    assert info is not None and info.name == "herdr-orchestrator"
    assert names == list(ALL_TOOLS)
    answer = body_of(result)
    assert answer["ok"] is True
    assert "over-stdio" in json.dumps(answer)
    assert "workspace.list" in methods


STRAY_SERVER = """
from orchestrator.mcp_server import build_server, run_stdio
from orchestrator.core.tool import Tool, ToolContext

def noisy(params, ctx):
    print("stray output from a tool")
    return {"ok": True, "command": "noisy", "exitCode": 0}

schema = {"type": "object", "properties": {}, "additionalProperties": False}
run_stdio(build_server([Tool("noisy", "R0", "Print.", schema, noisy)], context=ToolContext()))
"""


def test_stray_prints_from_tools_go_to_stderr_not_onto_the_wire(tmp_path: Path) -> None:
    script = tmp_path / "noisy_server.py"
    script.write_text(STRAY_SERVER)
    params = StdioServerParameters(command=sys.executable, args=[str(script)])
    errors = tmp_path / "server.stderr"

    async def body() -> CallToolResult:
        with errors.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                return await client.call_tool("noisy", {})

    assert body_of(run(body))["ok"] is True
    # written once: had it gone to stdout it would have been on the wire, not here
    assert "stray output from a tool" in errors.read_text()


# -- issue 10: success is not an error, a responsive server, a listing a model can act on -----


def _agent(tool: str, status: str, code: str | None = None) -> tuple[str, dict[str, Any]]:
    from orchestrator.agent_tools.contract import AgentResult, ResultError

    error = ResultError(code, "why") if code else None
    value = AgentResult(status=status, tool=tool, name="a", error=error)  # type: ignore[arg-type]
    return tool, value.to_dict()


SPAWN, HARVEST = "herdr_spawn_agent", "herdr_get_agent_result"
DOCTOR_PAGE = {"ok": False, "checks": [], "next": [], "aliases": [], "runtime": {}}


@pytest.mark.parametrize(
    ("call", "is_error"),
    [
        (_agent(SPAWN, "completed"), False),
        (_agent(SPAWN, "running"), False),
        (_agent(HARVEST, "blocked"), False),
        (_agent("herdr_close_agent", "gone"), False),
        (_agent("herdr_interrupt_agent", "failed", "INTERRUPTED"), False),
        (_agent(SPAWN, "failed", "AGENT_ERROR"), True),
        (_agent(HARVEST, "gone", "PANE_GONE"), True),
        (_agent("herdr_close_agent", "running", "AGENT_WORKING"), True),
        (("herdr_list_agents", {"agents": []}), False),
        (("herdr_doctor", DOCTOR_PAGE), False),
        (("_dsh_herdr_workspace_list", {"ok": True, "command": "c", "exitCode": 0}), False),
        (("_dsh_herdr_workspace_list", {"ok": False, "command": "c", "exitCode": 1}), True),
    ],
)
def test_is_error_follows_each_tool_familys_contract(
    call: tuple[str, dict[str, Any]], is_error: bool
) -> None:
    from orchestrator.mcp_server import call_result

    tool, value = call
    assert call_result(value, tool).is_error is is_error


def test_agent_tool_schema_failures_are_agent_result_refusals() -> None:
    from orchestrator.agent_tools.contract import AGENT_RESULT_SCHEMA
    from orchestrator.cli import main
    from orchestrator.pipeline.registry import run_tool

    value = run_tool("herdr_spawn_agent", {"kind": "pi"})
    Draft202012Validator(AGENT_RESULT_SCHEMA).validate(value)
    assert field(value, "status") == "failed" and value["nextAction"] == "retry"
    assert value["error"]["code"] == "INVALID_ARGUMENTS"
    assert value["error"]["field"] == "prompt"
    assert main(["call", "herdr_list_agents", '{"owned_only": "yes"}']) == 1


def test_the_listing_is_self_describing() -> None:
    async def body() -> list[Any]:
        async with Client(build_server(context=ToolContext.from_env({})), mode="legacy") as client:
            return list((await client.list_tools()).tools)

    listed = run(body)
    for tool in listed:
        assert tool.title and "herdr herdr" not in tool.title.lower(), tool.title
        for name, schema in tool.input_schema.get("properties", {}).items():
            assert len(schema.get("description", "")) >= 10, (tool.name, name)
    spawn = next(t for t in listed if t.name == "herdr_spawn_agent").input_schema["properties"]
    assert all(kind in spawn["kind"]["description"] for kind in ("pi", "claude", "codex", "qwen"))
    assert "flash=deepseek/deepseek-flash (default)" in spawn["model"]["description"]
    assert "xhigh" in spawn["thinking"]["description"]
    assert "reviewer" in spawn["role"]["description"]
    message = next(t for t in listed if t.name == "herdr_message_agent").input_schema
    for word in ("REVIEW_FINDINGS", "ANSWER"):
        assert word in message["properties"]["kind"]["description"]
    assert "REVIEW_FINDINGS" in message["properties"]["round"]["description"]


def test_long_calls_get_their_own_pool() -> None:
    from orchestrator.mcp_server import may_block

    assert may_block("herdr_inbox", {"wait": True})
    assert not may_block("herdr_inbox", {})
    assert may_block("herdr_get_agent_result", {})
    assert not may_block("herdr_get_agent_result", {"wait": False})
    assert may_block("herdr_spawn_agent", {"wait": False})  # the queue may still wait
    assert may_block("_dsh_herdr_agent_wait", {})
    assert not may_block("_dsh_herdr_workspace_list", {})


def test_docs_describe_the_agent_tools_as_built_and_the_host_example_names_herdr() -> None:
    import orchestrator
    import orchestrator.agent_tools

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    assert "being built" not in readme
    assert "docs/orchestrator/agent-tools.md" in readme
    for module in (orchestrator, orchestrator.agent_tools):
        doc = module.__doc__ or ""
        assert "later" not in doc and "agent tools" in doc.lower(), module.__name__
    mcp_md = (root / "docs" / "orchestrator" / "mcp.md").read_text()
    example = mcp_md.split("```json", 1)[1].split("```", 1)[0]
    assert json.loads(example)["mcpServers"]["herdr"]["env"]["HERDR_SOCKET_PATH"]
