"""The tool registry: every tool by name, in the contracts' order, and ``run_tool``.

``TOOLS`` holds the 24 low-level tools of seed 001; ``ALL_TOOLS`` adds the nine agent tools
of seed 000 (:mod:`orchestrator.agent_tools.tools`) and the nine managed-agent tools of seed
002 (:mod:`orchestrator.managed.tools`) after them: that is what the servers offer. The
families register here; none imports another or this package.

``run_tool`` is the one entry point servers (MCP, the ``herdr-orchestrator`` command) use: it
takes every call through the runner (:mod:`.call_guard`: the policy, the schema, the gates,
the target's lock, the handler, the audit), and every failure is a result in its tool
family's shape (:mod:`.refusals`), so a bad call from a model is a business result, never a
crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from orchestrator.agent_tools.tools import AGENT_TOOLS
from orchestrator.core.result import failure
from orchestrator.core.tool import PREVIEW_REQUIRED_ENV, Risk, Tool, ToolContext
from orchestrator.logs import task_logger, task_scope
from orchestrator.managed.tools import MANAGED_TOOLS
from orchestrator.pipeline import call_guard
from orchestrator.pipeline.refusals import render_crash
from orchestrator.pipeline.schema import (
    argument_error,
    in_schema,
    integers,
    invalid,
    validator_of,
)
from orchestrator.tools.low_level import LOW_LEVEL_TOOLS

logger = task_logger(__name__)

__all__ = [
    "ALL_TOOLS",
    "PREVIEW_REQUIRED_ENV",
    "TOOLS",
    "Risk",
    "Tool",
    "ToolContext",
    "run_given",
    "run_tool",
    "validator_of",
]

#: The low-level tools by name, in the order of the dsh-herdr contract (seed 001).
TOOLS: Mapping[str, Tool] = MappingProxyType({tool.name: tool for tool in LOW_LEVEL_TOOLS})
#: Every tool the servers offer: the low-level ones, the agent tools (seed 000), then the
#: managed-agent tools (seed 002).
ALL_TOOLS: Mapping[str, Tool] = MappingProxyType({**TOOLS, **AGENT_TOOLS, **MANAGED_TOOLS})


def run_tool(name: str, arguments: object, ctx: ToolContext | None = None) -> dict[str, Any]:
    """Run one tool; always returns a result dict in its family's shape.

    A low-level tool answers ``ok: false`` with ``errorCode`` ``invalid_arguments`` or
    ``internal_error``; an agent tool answers an AgentResult refusal (``status: failed``,
    ``error.code`` ``INVALID_ARGUMENTS`` with ``error.field``, or ``INTERNAL_ERROR``), so a
    model reads one shape per family whatever went wrong.
    """
    tool = ALL_TOOLS.get(name)
    if tool is None:
        return failure(name, "unknown_tool", f"unknown tool {name!r}")
    context = ctx if ctx is not None else ToolContext.from_env()
    return call_guard.governed_call(tool, arguments, context, run_given, ALL_TOOLS)


def run_given(tool: Tool, arguments: object, ctx: ToolContext | None = None) -> dict[str, Any]:
    """Run ``tool`` (the registry's or any other, e.g. an MCP server's own): its schema is
    checked, whole-number floats become integers (:func:`integers`) and a handler bug is a
    result. The one path from arguments to a handler, so no server skips a step."""
    problem = argument_error(tool, arguments)
    if problem is not None:
        # the field only when the schema names it: an unknown argument's name is the caller's text
        field = problem.field if in_schema(tool, problem.field) else "(not in the schema)"
        logger.info("%s: arguments refused (field %s)", tool.name, field)
        return invalid(tool, problem)
    assert isinstance(arguments, Mapping)
    normalised = integers(tool.input_schema, arguments)
    context = ctx if ctx is not None else ToolContext.from_env()
    with task_scope():  # the task a handler binds is this call's only
        logger.debug("%s: called", tool.name)  # never the arguments: prompts, args, env
        try:
            return tool.handler(normalised, context)
        except Exception as exc:  # a handler bug must still answer as a result
            logger.error("%s: handler failed (%s)", tool.name, type(exc).__name__)
            return render_crash(tool, exc)
