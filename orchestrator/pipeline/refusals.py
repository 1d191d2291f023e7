"""Every refusal the runner answers, in the refused tool's family shape, with a next action
that can work.

Why one renderer per family, chosen by the tool's declaration (``traits.family``): a model
reads one shape per family whatever refused it — a gate, the policy, a bad argument, a busy
target, a handler bug:

* low-level tools: ``{ok: false, command, exitCode, errorCode, data: {error: {code,
  message}, field?}}``;
* agent tools: an AgentResult refusal (``status: failed``, ``error.code`` in UPPER_SNAKE,
  ``error.field``, ``nextAction``, and the ``machine`` the request named);
* managed-agent tools: ``{ok: false, action, error: {category, message, operation,
  rollbackOccurred, retryAttempted, nextAction, details: {code, field}}, text}``.

A refusal a retry cannot cure never says retry: the policy, the kill switch and ``allowCwd``
are the user's configuration, so their next action is to ask the user (or, for a name, to
choose an allowed one); a busy target clears by itself, so that one is retried.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.agent_tools.contract import NextAction, ResultError, header, refusal
from orchestrator.core.config import LOCAL_MACHINE
from orchestrator.core.result import failure
from orchestrator.core.tool import Tool
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.tools import error_result, invalid_arguments, request_refused

#: ``error.code`` of an agent tool's schema failure and of its handler's bug.
INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
INTERNAL_ERROR = "INTERNAL_ERROR"

#: What the caller can do about each refusal (the managed tools' ``nextAction`` text); the
#: agent tools' ``nextAction`` is :data:`AGENT_NEXT` of the same code.
NEXT_ACTION: Mapping[str, str] = {
    "config_invalid": "Ask the user to fix the configuration (the doctor tools report it); "
    "nothing runs until then.",
    "tool_disabled": "Ask the user: this tool is turned off by configuration (disableTools); "
    "calling it again is refused the same way.",
    "read_only": "Ask the user: the configuration is read-only (readOnly), so only reading "
    "tools run; calling again is refused the same way.",
    "agent_kind_not_allowed": "Ask the user to allow this agent kind (agentKinds); calling "
    "again is refused the same way.",
    "agent_name_not_allowed": "Use a name or label that agentNames allows (or ask the user "
    "to allow this one).",
    "agent_args_not_allowed": "Call again without native agent arguments, or ask the user to "
    "allow them (allowAgentArgs).",
    "disabled": "Ask the user: the orchestrator is switched off (enabled = false); nothing new "
    "starts until it is on again, while closing and interrupting agents still work.",
    "cwd_not_allowed": "Ask the user to add the directory to allowCwd, or work in a directory "
    "inside an allowed root.",
    "cwd_unknown": "Ask the user: the directory cannot be told, so allowCwd cannot be checked.",
    "preview_required": "Call again with preview: true and ask the user to approve what it "
    "shows; a tool without a preview runs only once the user lifts the gate.",
    "target_busy": "Retry once the other call typing into this target has finished.",
}
#: The agent tools' ``nextAction`` per refusal code (default ``ask_user``).
AGENT_NEXT: Mapping[str, NextAction] = {
    "preview_required": "retry",  # with preview: true, then the user's approval
    "agent_name_not_allowed": "retry",
    "agent_args_not_allowed": "retry",
    "cwd_not_allowed": "retry",  # in a directory inside an allowed root
    "target_busy": "retry",
}


def _machine(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """The machine the request named, if the tool has one and it was given."""
    field = tool.declared.machine
    value = arguments.get(field) if field else None
    return value if isinstance(value, str) and value else None


def render_refusal(
    tool: Tool,
    code: str,
    message: str,
    field: str | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A refusal (``code`` in lower_snake) before the handler ran, in ``tool``'s family shape."""
    args = arguments or {}
    family = tool.declared.family
    if family == "agent":
        error = ResultError(code.upper(), message, field=field)
        then = AGENT_NEXT.get(code, "ask_user")
        return refusal(tool.name, error, next_action=then, machine=_machine(tool, args))
    if family == "managed":
        details: dict[str, Any] = {"code": code}
        if field:
            details["field"] = field
        text = NEXT_ACTION.get(code, "Ask the user.")
        return request_refused(tool.name, message, next_action=text, details=details)
    data = {"field": field} if field else None
    return failure(tool.name, code, message, data=data)


def name_the_machine(
    tool: Tool, arguments: Mapping[str, Any], result: dict[str, Any]
) -> dict[str, Any]:
    """An agent tool's refusal by its handler (no task involved) names the machine the
    request named, as the runner's own refusals do: a refusal of a call on ``box`` that said
    ``machine: local`` sent the reader to the wrong host."""
    named = _machine(tool, arguments)
    refused = result.get("status") == "failed" and result.get("taskId") is None
    if tool.declared.family != "agent" or named is None or not refused:
        return result
    if result.get("machine") in (None, LOCAL_MACHINE) and named != LOCAL_MACHINE:
        result["machine"] = named
        result["header"] = header(result)
    return result


def render_invalid(
    tool: Tool, message: str, field: str | None, *, log_field: bool = True
) -> dict[str, Any]:
    """Arguments that fail the schema, in ``tool``'s family shape (the caller fixes them)."""
    family = tool.declared.family
    if family == "agent":
        error = ResultError(INVALID_ARGUMENTS, message, field=field)
        return refusal(tool.name, error, log_field=log_field)
    if family == "managed":
        return invalid_arguments(tool.name, message, field=field)
    return failure(tool.name, "invalid_arguments", message)


def render_crash(tool: Tool, exc: Exception) -> dict[str, Any]:
    """A handler bug, answered as a result in ``tool``'s family shape (never a crash)."""
    message = f"{type(exc).__name__}: {exc}"
    family = tool.declared.family
    if family == "agent":
        return refusal(tool.name, ResultError(INTERNAL_ERROR, message), next_action="inspect")
    if family == "managed":
        action = tool.name.removeprefix("agent_")
        return error_result(
            action, ManagedAgentError("internal_failure", message, operation=action)
        )
    return failure(tool.name, "internal_error", message)


__all__ = [
    "AGENT_NEXT",
    "INTERNAL_ERROR",
    "INVALID_ARGUMENTS",
    "NEXT_ACTION",
    "name_the_machine",
    "render_crash",
    "render_invalid",
    "render_refusal",
]
