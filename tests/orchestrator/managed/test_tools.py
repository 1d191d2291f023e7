"""The nine ``agent_*`` tools as registered: exactly the seed's request fields, served by the
registry, MCP (through the SDK's own client) and ``herdr-orchestrator call``.

Schema refusals answer the managed family's shape (``ok: false`` and a structured
``invalid_request`` error naming the field), never a crash, and nothing runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.types import CallToolResult, TextContent

from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.core.config import Config
from orchestrator.managed.errors import ERROR_CATEGORIES
from orchestrator.managed.tools import MANAGED_TOOLS
from orchestrator.mcp_server import build_server
from orchestrator.pipeline.outcome import call_failed
from orchestrator.pipeline.registry import ALL_TOOLS, run_tool

BIN = Path(sys.executable).parent

#: seed 002's request fields per tool: (required, optional)
SEED_FIELDS: dict[str, tuple[set[str], set[str]]] = {
    "agent_list": (set(), set()),
    "agent_delegate": ({"definition", "task"}, {"label", "files"}),
    "agent_continue": ({"session", "task"}, {"files"}),
    "agent_steer": ({"agent", "message"}, {"files"}),
    "agent_interrupt": ({"agent", "message"}, {"files"}),
    "agent_reply": ({"agent", "message"}, {"files"}),
    "agent_close": ({"agent"}, set()),
    "agent_inspect": ({"agent"}, set()),
    "agent_transcript": ({"agent"}, set()),
}


def offline_ctx(tmp_path: Path) -> AgentToolsContext:
    """A context whose Herdr is never reached (a client factory that fails the test)."""
    state = tmp_path / "state"
    ctx = AgentToolsContext.create(
        {"HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(tmp_path / "pi")},
        config=Config(state_dir=state, artifact_dir=state / "a"),
    )

    def no_client(_env: Any) -> Any:
        raise AssertionError("Herdr must not be called")

    ctx.client_factory = no_client
    return ctx


def test_the_nine_tools_are_registered_in_the_seed_order() -> None:
    assert list(MANAGED_TOOLS) == list(SEED_FIELDS)
    assert list(ALL_TOOLS)[-9:] == list(SEED_FIELDS)
    assert len(ALL_TOOLS) == 42


@pytest.mark.parametrize("name", list(SEED_FIELDS))
def test_each_schema_has_exactly_the_seed_fields(name: str) -> None:
    schema = MANAGED_TOOLS[name].input_schema
    required, optional = SEED_FIELDS[name]
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == required
    assert set(schema["properties"]) == required | optional
    if "files" in schema["properties"]:
        files = schema["properties"]["files"]
        assert files["type"] == "array" and files["items"]["type"] == "string"


@pytest.mark.parametrize("name", list(SEED_FIELDS))
def test_unknown_fields_are_refused_as_invalid_request(name: str, tmp_path: Path) -> None:
    required, _ = SEED_FIELDS[name]
    result = run_tool(
        name, {**dict.fromkeys(required, "x"), "unexpected": 1}, offline_ctx(tmp_path)
    )
    assert result["ok"] is False
    assert result["error"]["category"] == "invalid_request"
    assert result["error"]["details"]["field"] == "unexpected"
    assert result["text"].startswith(f"Agent {name.removeprefix('agent_')} failed.")
    assert call_failed(name, result)


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("agent_delegate", {"definition": "scout", "task": 3}, "task"),
        ("agent_delegate", {"definition": "scout", "task": "   "}, "task"),
        ("agent_delegate", {"definition": "scout", "task": "t", "label": "Bad"}, "label"),
        ("agent_delegate", {"definition": "scout", "task": "t", "label": "ok\n"}, "label"),
        ("agent_delegate", {"definition": "scout", "task": "t", "files": "a.txt"}, "files"),
        ("agent_steer", {"agent": "a"}, "message"),
        ("agent_close", {"agent": "a", "files": []}, "files"),
        ("agent_reply", {"agent": "a", "message": "m", "files": [""]}, "files"),
        ("agent_continue", {"session": "s"}, "task"),
        ("agent_continue", {"session": 7, "task": "t"}, "session"),
        ("agent_continue", {"session": "s", "task": "t", "files": [1]}, "files"),
        ("agent_interrupt", {"agent": "a", "message": False}, "message"),
        ("agent_interrupt", {"agent": ["a"], "message": "m"}, "agent"),
        ("agent_steer", {"agent": "a", "message": "m", "files": {"a": 1}}, "files"),
        ("agent_reply", {"agent": None, "message": "m"}, "agent"),
        ("agent_close", {"agent": 3}, "agent"),
        ("agent_inspect", {"agent": ""}, "agent"),
        ("agent_transcript", {"agent": {"label": "a"}}, "agent"),
        ("agent_delegate", {"definition": 1, "task": "t"}, "definition"),
    ],
)
def test_wrong_types_and_missing_fields_are_refused(
    name: str, arguments: dict[str, Any], field: str, tmp_path: Path
) -> None:
    result = run_tool(name, arguments, offline_ctx(tmp_path))
    assert result["ok"] is False, result
    assert result["error"]["category"] == "invalid_request"
    assert result["error"]["details"]["field"] == field


def test_agent_list_with_no_agents_is_a_result_to_read(tmp_path: Path) -> None:
    agents = tmp_path / "pi" / "agents"
    agents.mkdir(parents=True)
    (agents / "scout.md").write_text("---\nname: scout\ndescription: Scouts\n---\nBody\n")
    result = run_tool("agent_list", {}, offline_ctx(tmp_path))
    assert result["ok"] is True, result
    assert result["agents"] == [] and result["deliveries"] == []
    assert result["delivery"] == "pull"
    assert [d["name"] for d in result["agent_definitions"]] == [
        "explorer",
        "reviewer",
        "scout",
        "worker",
    ]
    assert not call_failed("agent_list", result)


def test_the_preview_gate_refuses_managed_r2_tools_without_running(tmp_path: Path) -> None:
    ctx = offline_ctx(tmp_path)
    ctx.env = {**ctx.env, "DSH_HERDR_PREVIEW_REQUIRED": "1"}
    result = run_tool("agent_delegate", {"definition": "d", "task": "t"}, ctx)
    assert result["ok"] is False
    assert result["error"]["category"] == "invalid_request"
    assert "DSH_HERDR_PREVIEW_REQUIRED" in result["error"]["message"]


def test_every_error_category_is_the_references() -> None:
    assert {"invalid_request", "agent_label_exists", "pane_not_ready"} <= ERROR_CATEGORIES


def test_mcp_lists_and_serves_the_managed_tools_through_the_sdk_client(tmp_path: Path) -> None:
    ctx = offline_ctx(tmp_path)

    async def body() -> tuple[list[Any], CallToolResult, CallToolResult]:
        async with Client(build_server(context=ctx), mode="legacy") as client:
            listed = (await client.list_tools()).tools
            good = await client.call_tool("agent_list", {})
            bad = await client.call_tool("agent_close", {"agent": "x", "extra": True})
            return listed, good, bad

    async def bounded() -> tuple[list[Any], CallToolResult, CallToolResult]:
        with anyio.fail_after(20):
            return await body()

    listed, good, bad = anyio.run(bounded)
    by_name = {tool.name: tool for tool in listed}
    for name in SEED_FIELDS:
        assert by_name[name].input_schema == json.loads(
            json.dumps(MANAGED_TOOLS[name].input_schema)
        )
        errors = Draft202012Validator(by_name[name].input_schema).iter_errors({"zzz": 1})
        assert "additionalProperties" in {e.validator for e in errors}
    assert good.is_error is False
    block = good.content[0]
    assert isinstance(block, TextContent)
    assert json.loads(block.text)["action"] == "list"
    assert bad.is_error is True
    assert bad.structured_content is not None
    assert bad.structured_content["error"]["category"] == "invalid_request"


def test_the_cli_calls_agent_list(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
        "HERDR_ORCHESTRATOR_STATE_DIR": str(tmp_path / "state"),
    }

    def agent_list(arguments: str) -> subprocess.CompletedProcess[str]:
        argv = [str(BIN / "herdr-orchestrator"), "call", "agent_list", arguments]
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path, check=False
        )

    done = agent_list("{}")
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    assert answer["ok"] is True and answer["action"] == "list"
    refused = agent_list('{"x": 1}')
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["error"]["category"] == "invalid_request"
