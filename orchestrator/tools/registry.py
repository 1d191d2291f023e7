"""The tool registry: every tool by name, in the contracts' order, and ``run_tool``.

``TOOLS`` holds the 24 low-level tools of seed 001; ``ALL_TOOLS`` adds the nine agent tools
of seed 000 (:mod:`orchestrator.agent_tools.tools`) after them: that is what the servers offer.

``run_tool`` is the one entry point servers (MCP, the ``herdr-orchestrator`` command) use: it
validates the arguments against the tool's schema first and turns every failure into a result
(``ok: false``), so a bad call from a model is a business result, never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from jsonschema import Draft202012Validator

from orchestrator.agent_tools.tools import AGENT_TOOLS
from orchestrator.tools.low_level import LOW_LEVEL_TOOLS
from orchestrator.tools.result import failure
from orchestrator.tools.tool import PREVIEW_REQUIRED_ENV, Risk, Tool, ToolContext

__all__ = [
    "ALL_TOOLS",
    "PREVIEW_REQUIRED_ENV",
    "TOOLS",
    "Risk",
    "Tool",
    "ToolContext",
    "run_tool",
]

#: The low-level tools by name, in the order of the dsh-herdr contract (seed 001).
TOOLS: Mapping[str, Tool] = MappingProxyType({tool.name: tool for tool in LOW_LEVEL_TOOLS})
#: Every tool the servers offer: the low-level ones, then the agent tools (seed 000).
ALL_TOOLS: Mapping[str, Tool] = MappingProxyType({**TOOLS, **AGENT_TOOLS})


def _argument_error(tool: Tool, arguments: object) -> str | None:
    if not isinstance(arguments, Mapping):
        return "arguments must be a JSON object"
    validator = Draft202012Validator(dict(tool.input_schema))
    errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    first = errors[0]
    where = "/".join(str(part) for part in first.absolute_path)
    return f"{where}: {first.message}" if where else first.message


def integers(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` with every whole-number float the schema types ``integer`` made an int.

    JSON has one number type: ``5000.0`` validates as an integer, but Herdr's CLI refuses
    ``--timeout 5000.0`` and its socket refuses a float for a ``u64``. Run on validated
    arguments, so every integer parameter of every tool reaches its handler as an int.
    """
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if isinstance(value, float) and "integer" in kinds and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        rest = extra if isinstance(extra, Mapping) else {}
        return {key: integers(props.get(key, rest), item) for key, item in value.items()}
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [integers(items, item) for item in value]
    return value


def run_tool(name: str, arguments: object, ctx: ToolContext | None = None) -> dict[str, Any]:
    """Run one tool; always returns a result dict (``ok`` false on any failure)."""
    tool = ALL_TOOLS.get(name)
    if tool is None:
        return failure(name, "unknown_tool", f"unknown tool {name!r}")
    problem = _argument_error(tool, arguments)
    if problem is not None:
        return failure(name, "invalid_arguments", problem)
    assert isinstance(arguments, Mapping)
    normalised = integers(tool.input_schema, arguments)
    context = ctx if ctx is not None else ToolContext.from_env()
    try:
        return tool.handler(normalised, context)
    except Exception as exc:  # a handler bug must still answer as a result
        return failure(name, "internal_error", f"{type(exc).__name__}: {exc}")
