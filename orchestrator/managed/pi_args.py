"""The pi command line of a managed child: model, thinking, tool policy, session.

Why apart from the launch: the tool policy is the security-relevant part of a child's
arguments (what the child may run, and that ``ask_owner`` always survives), and it is pure,
so it is tested on its own (``tests/orchestrator/managed/test_service.py``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from orchestrator.core import aliases
from orchestrator.managed.definitions import AgentDefinition
from orchestrator.managed.errors import ManagedAgentError

__all__ = ["AGENT_DIR_ENV", "MANAGED_TOOL_NAMES", "MANDATORY_TOOL", "pi_args", "tool_policy_args"]

#: the tools a delegating child's extension registers (``orchestrator.managed.tools``)
MANAGED_TOOL_NAMES = (
    "agent_list",
    "agent_delegate",
    "agent_continue",
    "agent_steer",
    "agent_interrupt",
    "agent_reply",
    "agent_close",
    "agent_inspect",
    "agent_transcript",
)
#: the tool every managed child keeps (the extension's ``ask_owner``)
MANDATORY_TOOL = "ask_owner"
#: pi's agent directory variable: where the child's pi loads the managed-child extension
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


def pi_args(
    definition: AgentDefinition,
    session_file: str | None,
    operation: str,
    overrides: Mapping[str, Mapping[str, str]],
) -> list[str]:
    """pi's arguments for a child of ``definition``: its model (through the aliases),
    thinking level, tool policy and, for a continue, the session to resume."""
    args: list[str] = []
    if definition.model is not None or session_file is None:
        try:
            resolved = aliases.resolve("pi", definition.model, overrides=overrides)
        except aliases.AliasError as exc:
            raise ManagedAgentError(
                "invalid_request",
                f"definition {definition.name}: {exc}",
                operation=operation,
            ) from None
        args += resolved.argv
    if definition.thinking is not None:
        args += ["--thinking", definition.thinking]
    args += tool_policy_args(definition, operation)
    if session_file is not None:
        args += ["--session", session_file]
    return args


def tool_policy_args(definition: AgentDefinition, operation: str = "delegate") -> list[str]:
    """pi's tool flags for a definition: ``--tools`` (an allowlist: ``tools`` minus the
    exact ``excludeTools``, or none with ``noTools``), always naming ``ask_owner`` because pi
    unregisters every tool an allowlist leaves out, the extension's included; and
    ``--exclude-tools`` (pi's denylist of names or ``*`` patterns) for the ``excludeTools``
    not already applied. ``ask_owner`` is mandatory: an exact exclusion of it is ignored, a
    pattern that would match it refuses the launch (reference A.8). A delegating
    definition's (one listing ``agents``) allowlist also names the nine ``agent_*`` tools the
    extension gives it."""
    front = definition.front_matter
    tools = front.get("tools")
    excluded = front.get("excludeTools")
    exclude = [str(t) for t in excluded] if isinstance(excluded, list) else []
    for pattern in exclude:
        if "*" in pattern and fnmatch.fnmatchcase(MANDATORY_TOOL, pattern):
            raise ManagedAgentError(
                "invalid_request",
                f"definition {definition.name}: excludeTools pattern {pattern!r} would "
                f"remove the mandatory {MANDATORY_TOOL} tool",
                operation=operation,
                next_action="Narrow the pattern so it cannot match ask_owner.",
            )
    exclude = [t for t in exclude if t != MANDATORY_TOOL]
    extension = [MANDATORY_TOOL, *(MANAGED_TOOL_NAMES if definition.agents else ())]
    args: list[str] = []
    if front.get("noTools") is True:
        args = ["--tools", ",".join(extension)]
        exclude = []
    elif isinstance(tools, list):
        allowed = [str(t) for t in tools if str(t) not in exclude]
        args = ["--tools", ",".join(dict.fromkeys([*allowed, *extension]))]
        exclude = [t for t in exclude if "*" in t]  # exact ones are out of the allowlist
    if exclude:
        args += ["--exclude-tools", ",".join(dict.fromkeys(exclude))]
    return args
