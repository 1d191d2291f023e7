"""Strings no transport can carry (NUL, lone surrogates) and Herdr's agent name grammar are
refused before anything runs, by both tool families, each in its own result shape."""

from __future__ import annotations

import re
from typing import Any

import pytest

from orchestrator.agent_tools.tools import AGENT_TOOLS
from orchestrator.core.text_rules import AGENT_NAME_PATTERN, NO_NUL, unsendable
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import TOOLS, run_tool
from tests.results import assert_refused, field


def _string_params() -> list[tuple[str, str, bool]]:
    """(tool, parameter, is an array of strings) for every free-text parameter of every
    agent tool."""
    found: list[tuple[str, str, bool]] = []
    for name, tool in AGENT_TOOLS.items():
        for param, schema in tool.input_schema["properties"].items():
            if schema.get("type") == "string" and "enum" not in schema:
                found.append((name, param, False))
            items = schema.get("items")
            if isinstance(items, dict) and items.get("type") == "string":
                found.append((name, param, True))
    return found


STRING_PARAMS = _string_params()


def _required(tool: str) -> dict[str, Any]:
    return dict.fromkeys(AGENT_TOOLS[tool].input_schema.get("required", []), "x")


def test_every_agent_tool_names_its_text_parameters() -> None:
    params = {(tool, param) for tool, param, _ in STRING_PARAMS}
    # the list: prompt, message, name, cwd, model, agent_args, and every target
    for expected in [
        ("herdr_spawn_agent", "prompt"),
        ("herdr_spawn_agent", "name"),
        ("herdr_spawn_agent", "cwd"),
        ("herdr_spawn_agent", "model"),
        ("herdr_spawn_agent", "agent_args"),
        ("herdr_message_agent", "message"),
        ("herdr_message_agent", "target"),
        ("herdr_close_agent", "target"),
    ]:
        assert expected in params


@pytest.mark.parametrize(("tool", "param", "array"), STRING_PARAMS)
@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800b"])
def test_agent_tools_refuse_unsendable_text_as_an_agent_result(
    tool: str, param: str, array: bool, bad: str
) -> None:
    args = {**_required(tool), param: [bad] if array else bad}
    result = run_tool(tool, args, ToolContext(env={}))
    assert field(result, "status") == "failed" and result["tool"] == tool, result
    assert (result["error"]["code"], result["error"]["field"]) == ("INVALID_ARGUMENTS", param)
    assert bad not in result["error"]["message"]  # never echoed back
    assert "ok" not in result  # the AgentResult shape, not the low-level one


def test_agent_tool_schemas_say_so_to_hosts() -> None:
    for tool, param, array in STRING_PARAMS:
        schema = AGENT_TOOLS[tool].input_schema["properties"][param]
        schema = schema["items"] if array else schema
        assert "pattern" in schema, (tool, param)
        assert not re.search(schema["pattern"], "a\x00b"), (tool, param)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("agent_start", {"name": "evil\n", "kind": "pi", "pane": "w1:p1"}),
        ("agent_start", {"name": "ok", "kind": "pi", "pane": "w1:p1", "args": ["a\x00"]}),
        ("pane_send_text", {"pane": "w1:p1", "text": "lone \ud800"}),
    ],
)
def test_low_level_tools_refuse_them_as_invalid_arguments(name: str, args: dict[str, Any]) -> None:
    # the context has no Herdr at all: a refusal is answered before any call
    result = run_tool(f"_dsh_herdr_{name}", args, ToolContext(env={}))
    assert_refused(result, "invalid_arguments")


def test_the_name_pattern_means_the_same_in_python_and_ecmascript() -> None:
    # no $ (Python's matches before a trailing newline), a lookahead both dialects read alike
    schema = TOOLS["_dsh_herdr_agent_start"].input_schema["properties"]["name"]
    assert schema["pattern"] == AGENT_NAME_PATTERN
    assert "$" not in AGENT_NAME_PATTERN and "\\z" not in AGENT_NAME_PATTERN.lower()
    accepts = re.compile(AGENT_NAME_PATTERN)
    assert accepts.search("evil") and accepts.search("a" * 32)
    for bad in ["evil\n", "a" * 33, "Evil", "evil\nx", ""]:
        assert not accepts.search(bad), bad
    assert re.search(NO_NUL, "a\nb") and not re.search(NO_NUL, "a\x00b")  # newlines are fine


def test_unsendable_finds_keys_and_nested_values() -> None:
    found = unsendable({"env": {"A\x00": "x"}})
    assert found is not None and found[0] == ("env", "A\x00") and "NUL" in found[1]
    assert unsendable({"a": ["ok", "\udfff"]}) is not None
    assert unsendable({"a": ["ok", "emoji 😀"]}) is None
