"""The tool registry: every tool by name, in the contracts' order, and ``run_tool``.

``TOOLS`` holds the 24 low-level tools of seed 001; ``ALL_TOOLS`` adds the nine agent tools
of seed 000 (:mod:`orchestrator.agent_tools.tools`) and the nine managed-agent tools of seed
002 (:mod:`orchestrator.managed.tools`) after them: that is what the servers offer.

``run_tool`` is the one entry point servers (MCP, the ``herdr-orchestrator`` command) use: it
validates the arguments against the tool's schema first and turns every failure into a result
(``ok: false`` for a low-level tool, an AgentResult refusal for an agent tool, an
``invalid_request`` structured error for a managed-agent tool), so a bad call
from a model is a business result in its tool family's shape, never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from orchestrator.agent_tools.contract import ResultError, refusal
from orchestrator.agent_tools.tools import AGENT_TOOLS
from orchestrator.logs import task_logger, task_scope
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.tools import MANAGED_TOOLS, error_result, invalid_arguments
from orchestrator.tools.low_level import LOW_LEVEL_TOOLS
from orchestrator.tools.outcome import is_agent_tool
from orchestrator.tools.result import failure
from orchestrator.tools.text_rules import NO_NUL, unsendable
from orchestrator.tools.tool import PREVIEW_REQUIRED_ENV, Risk, Tool, ToolContext

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
#: ``error.code`` of an agent tool's schema failure and of its handler's bug.
INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
INTERNAL_ERROR = "INTERNAL_ERROR"
#: Every tool the servers offer: the low-level ones, the agent tools (seed 000), then the
#: managed-agent tools (seed 002).
ALL_TOOLS: Mapping[str, Tool] = MappingProxyType({**TOOLS, **AGENT_TOOLS, **MANAGED_TOOLS})


@dataclass(frozen=True)
class ArgumentProblem:
    """Why arguments fail a tool's schema: the message and the top-level parameter at fault."""

    message: str
    field: str | None


#: id(tool) → (tool, its schema's validator): built once per tool and process (a Tool is
#: frozen, and the tool is kept so its id cannot be reused by another); bounded for servers
#: that make tools on the fly
_VALIDATORS: dict[int, tuple[Tool, Draft202012Validator]] = {}
_VALIDATORS_MAX = 512


def validator_of(tool: Tool) -> Draft202012Validator:
    """The JSON-Schema validator of ``tool``'s arguments, built on its first call."""
    kept = _VALIDATORS.get(id(tool))
    if kept is not None and kept[0] is tool:
        return kept[1]
    validator = Draft202012Validator(dict(tool.input_schema))
    if len(_VALIDATORS) >= _VALIDATORS_MAX:
        _VALIDATORS.clear()
    _VALIDATORS[id(tool)] = (tool, validator)
    return validator


def _argument_error(tool: Tool, arguments: object) -> ArgumentProblem | None:
    if not isinstance(arguments, Mapping):
        return ArgumentProblem("arguments must be a JSON object", None)
    validator = validator_of(tool)
    errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
    if not errors:
        found = unsendable(dict(arguments))
        if found is None:
            return None
        path, reason = found
        return ArgumentProblem(f"{'/'.join(path)}: {reason}", path[0] if path else None)
    first = errors[0]
    where = "/".join(str(part) for part in first.absolute_path)
    said = first.message
    if first.validator == "pattern" and first.validator_value == NO_NUL:
        said = "holds a NUL character, which Herdr cannot carry"  # the value is not echoed
    message = f"{where}: {said}" if where else said
    return ArgumentProblem(message, _field_of(first, arguments))


def _field_of(error: ValidationError, arguments: Mapping[str, Any]) -> str | None:
    """The parameter an error is about: its path, the missing or the unexpected property."""
    if error.absolute_path:
        return str(error.absolute_path[0])
    if error.validator == "required":
        required = error.validator_value if isinstance(error.validator_value, list) else []
        missing = [str(p) for p in required if p not in arguments]
        return missing[0] if missing else None
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        extra = [str(key) for key in arguments if key not in known]
        return extra[0] if extra else None
    return None


def _invalid(tool: Tool, problem: ArgumentProblem) -> dict[str, Any]:
    """A schema failure in the tool family's own shape (an AgentResult refusal for agent tools)."""
    if is_agent_tool(tool.name):
        error = ResultError(INVALID_ARGUMENTS, problem.message, field=problem.field)
        return refusal(tool.name, error, log_field=_in_schema(tool, problem.field))
    if tool.name in MANAGED_TOOLS:
        return invalid_arguments(tool.name, problem.message, field=problem.field)
    return failure(tool.name, "invalid_arguments", problem.message)


def _in_schema(tool: Tool, field: str | None) -> bool:
    """Whether ``field`` is one of ``tool``'s parameters (else it is the caller's text)."""
    props = tool.input_schema.get("properties") or {}
    return field is None or field in props


def _crashed(name: str, exc: Exception) -> dict[str, Any]:
    """A handler bug, answered as a result in the tool family's shape (never a crash)."""
    message = f"{type(exc).__name__}: {exc}"
    if is_agent_tool(name):
        return refusal(name, ResultError(INTERNAL_ERROR, message), next_action="inspect")
    if name in MANAGED_TOOLS:
        action = name.removeprefix("agent_")
        return error_result(
            action, ManagedAgentError("internal_failure", message, operation=action)
        )
    return failure(name, "internal_error", message)


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
    """Run one tool; always returns a result dict in its family's shape.

    A low-level tool answers ``ok: false`` with ``errorCode`` ``invalid_arguments`` or
    ``internal_error``; an agent tool answers an AgentResult refusal (``status: failed``,
    ``error.code`` ``INVALID_ARGUMENTS`` with ``error.field``, or ``INTERNAL_ERROR``), so a
    model reads one shape per family whatever went wrong.
    """
    tool = ALL_TOOLS.get(name)
    if tool is None:
        return failure(name, "unknown_tool", f"unknown tool {name!r}")
    from orchestrator.tools.call_guard import governed_call

    # the policy, the target's lock and the audit log (one wrapper, every server)
    context = ctx if ctx is not None else ToolContext.from_env()
    return governed_call(tool, arguments, context, run_given, ALL_TOOLS)


def run_given(tool: Tool, arguments: object, ctx: ToolContext | None = None) -> dict[str, Any]:
    """Run ``tool`` (the registry's or any other, e.g. an MCP server's own): its schema is
    checked, whole-number floats become integers (:func:`integers`) and a handler bug is a
    result. The one path from arguments to a handler, so no server skips a step."""
    problem = _argument_error(tool, arguments)
    if problem is not None:
        # the field only when the schema names it: an unknown argument's name is the caller's text
        field = problem.field if _in_schema(tool, problem.field) else "(not in the schema)"
        logger.info("%s: arguments refused (field %s)", tool.name, field)
        return _invalid(tool, problem)
    assert isinstance(arguments, Mapping)
    normalised = integers(tool.input_schema, arguments)
    context = ctx if ctx is not None else ToolContext.from_env()
    with task_scope():  # the task a handler binds is this call's only
        logger.debug("%s: called", tool.name)  # never the arguments: prompts, args, env
        try:
            return tool.handler(normalised, context)
        except Exception as exc:  # a handler bug must still answer as a result
            logger.error("%s: handler failed (%s)", tool.name, type(exc).__name__)
            return _crashed(tool.name, exc)
