"""The policy: which tools are offered and which calls may run. The one place that decides.

Why one module: a switch read by the MCP listing but not by ``herdr-orchestrator call`` (or by
one tool family but not another) is a gate another path walks around. So the MCP server's
``tools/list`` (:func:`listed`), the runner (:func:`refusal`, its first step, before any
handler runs, so a refused call never reaches Herdr;
:mod:`orchestrator.pipeline.call_guard`) and ``herdr_doctor`` (:meth:`Policy.describe`) all
ask this module, and it decides from a tool's **name, risk level and declaration**
(:class:`~orchestrator.core.tool.Traits`), never from a list of tools: a tool added to the
registry later is covered by the same rules (one without a declaration gets one inferred
from its schema's parameter names).

The switches (configuration keys, docs/orchestrator/configuration.md), on top of ``enabled``,
``allowCwd`` and the preview gate, which the runner applies after it (:mod:`.gates`):

* ``readOnly``: only R0 tools are listed and callable.
* ``disableTools``: name globs; a matching tool is not listed, and is refused when called by
  name. A glob that matches no tool is refused when the policy is read (a typo would otherwise
  leave the tool on). A tool that starts agents is refused (and not listed) while the tool
  that closes them (``closed_by``) is disabled: nothing starts that could not be closed.
* ``agentKinds``: kind globs; a call that starts an agent of another kind is refused: the
  declared ``kind`` field (absent: the schema's default), or the one kind a tool starts (a
  managed definition's, ``pi``).
* ``agentNames``: name globs, for every call that is not R0: the name or label an agent is
  started under (a start without one is refused: a generated name cannot be checked in
  advance; a label a continued session inherits is checked by the runner,
  :func:`name_refusal`), and the agent a call addresses through its declared target fields.
  Such an address must then be an agent name; a pane id or task id is refused, since telling
  whose it is would need Herdr. So what the policy lets start, it lets close.
* ``allowAgentArgs``: native agent arguments (the declared ``agent_args`` fields). Unset,
  they are allowed from the command line and refused over MCP, where a model writes them.

An invalid configuration refuses every call but the doctors' (``*doctor``), which report it;
MCP then lists only those.
"""

from __future__ import annotations

import contextlib
import fnmatch
import re
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from orchestrator.client.protocol import AGENT_LABELS, AGENT_NAME_PATTERN
from orchestrator.core.caller import Caller, current_caller
from orchestrator.core.config import Config
from orchestrator.core.text_rules import is_task_id

if TYPE_CHECKING:
    from orchestrator.core.tool import Tool

_NAME = re.compile(AGENT_NAME_PATTERN)
#: parameters that address an existing agent (by name, pane id or task id)
#: the policy the running call was checked against (set by ``run_tool`` around the handler;
#: a context variable, not the shared ToolContext: concurrent calls may have other callers)
_CURRENT: ContextVar[Policy | None] = ContextVar("herdr_orchestrator_policy", default=None)
#: tools answered even when the configuration is invalid: they report what is wrong
DOCTOR_GLOB = "*doctor"


@dataclass(frozen=True)
class Denial:
    """Why the policy refuses a call: a lower_snake code, a message, the parameter at fault."""

    code: str
    message: str
    field: str | None = None


@dataclass(frozen=True)
class Policy:
    """The effective policy for one caller (see the module docstring)."""

    read_only: bool = False
    disable_tools: tuple[str, ...] = ()
    agent_kinds: tuple[str, ...] | None = None
    agent_names: tuple[str, ...] | None = None
    allow_agent_args: bool = True
    #: set when the configuration could not be read: only the doctors run
    config_error: str | None = None

    @classmethod
    def of(cls, config: Config, caller: Caller | None = None) -> Policy:
        """The policy ``config`` sets for ``caller`` (default: the current one)."""
        who = caller or current_caller()
        args = config.allow_agent_args
        return cls(
            read_only=config.read_only,
            disable_tools=config.disable_tools,
            agent_kinds=config.agent_kinds,
            agent_names=config.agent_names,
            allow_agent_args=(who.kind != "mcp") if args is None else args,
        )

    def describe(self) -> dict[str, Any]:
        """The effective policy as ``herdr_doctor`` prints it."""
        return {
            "readOnly": self.read_only,
            "disableTools": list(self.disable_tools),
            "agentKinds": list(self.agent_kinds) if self.agent_kinds is not None else "*",
            "agentNames": list(self.agent_names) if self.agent_names is not None else "*",
            "allowAgentArgs": self.allow_agent_args,
            **({"configError": self.config_error} if self.config_error else {}),
        }


def unmatched_globs(globs: Iterable[str], names: Iterable[str]) -> list[str]:
    """The ``disableTools`` globs that match none of ``names`` (likely typos)."""
    known = list(names)
    return [glob for glob in globs if not fnmatch.filter(known, glob)]


def _matches(value: str, globs: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(value, glob) for glob in globs)


def starts_agents(tool: Tool) -> bool:
    """Whether ``tool`` starts agents (its declaration names a kind)."""
    return tool.declared.starts_agents


def _agent_kind(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    traits = tool.declared
    if traits.fixed_kind is not None:
        return traits.fixed_kind
    if traits.kind is None:
        return None
    props = tool.input_schema.get("properties")
    schema = props.get(traits.kind) if isinstance(props, Mapping) else None
    default = schema.get("default") if isinstance(schema, Mapping) else None
    value = arguments.get(traits.kind, default)
    return value if isinstance(value, str) else None


def _agent_args(tool: Tool, arguments: Mapping[str, Any]) -> tuple[str, Any] | None:
    for param in tool.declared.agent_args:
        if arguments.get(param):
            return param, arguments[param]
    return None


def is_agent_name(value: object) -> bool:
    """Whether ``value`` addresses an agent by name (not a pane id nor a task id)."""
    return isinstance(value, str) and bool(_NAME.fullmatch(value)) and not is_task_id(value)


def name_refusal(policy: Policy, value: object, field: str) -> Denial | None:
    """Why ``agentNames`` refuses starting an agent named (or labelled) ``value``."""
    allowed = policy.agent_names
    if allowed is None:
        return None
    if not isinstance(value, str):
        return Denial(
            "agent_name_not_allowed",
            f"agentNames is set: give the agent a {field} (a generated one cannot be checked)",
            field,
        )
    if not _matches(value, allowed):
        return Denial("agent_name_not_allowed", f"the agent {field} is not in agentNames", field)
    return None


def _names(tool: Tool, arguments: Mapping[str, Any], policy: Policy) -> Denial | None:
    allowed = policy.agent_names
    traits = tool.declared
    if allowed is None or tool.risk == "R0":
        return None
    if traits.name is not None and traits.launch_name is None:
        named = name_refusal(policy, arguments.get(traits.name), traits.name)
        if named is not None:
            return named
    for param in traits.targets:
        if param not in arguments:
            continue
        value = arguments[param]
        if not is_agent_name(value):
            return Denial(
                "agent_name_not_allowed",
                f"agentNames is set: address the agent by its name ({param} is not a name)",
                param,
            )
        if not _matches(str(value), allowed):
            return Denial("agent_name_not_allowed", "the agent is not in agentNames", param)
    return None


def _closer_refused(policy: Policy, tool: Tool) -> Denial | None:
    """A start is refused when the tool that would end it is: nothing starts that the same
    policy would keep from being closed."""
    closer = tool.declared.closed_by
    if closer is not None and _matches(closer, policy.disable_tools):
        return Denial(
            "tool_disabled",
            f"{tool.name} is off because {closer}, which closes what it starts, is disabled "
            "(disableTools)",
        )
    return None


def listed(policy: Policy, tool: Tool) -> bool:
    """Whether ``tools/list`` shows ``tool``."""
    if policy.config_error is not None:
        return fnmatch.fnmatchcase(tool.name, DOCTOR_GLOB)
    if policy.read_only and tool.risk != "R0":
        return False
    return not _matches(tool.name, policy.disable_tools) and _closer_refused(policy, tool) is None


def refusal(policy: Policy, tool: Tool, arguments: Mapping[str, Any]) -> Denial | None:
    """Why ``policy`` refuses calling ``tool`` with ``arguments`` (None: it may run).

    Messages never quote an argument's value: they are logged and audited.
    """
    if policy.config_error is not None:
        if fnmatch.fnmatchcase(tool.name, DOCTOR_GLOB):
            return None
        return Denial("config_invalid", policy.config_error)
    if _matches(tool.name, policy.disable_tools):
        return Denial("tool_disabled", f"{tool.name} is disabled by configuration (disableTools)")
    closer = _closer_refused(policy, tool)
    if closer is not None:
        return closer
    if policy.read_only and tool.risk != "R0":
        return Denial(
            "read_only",
            f"{tool.name} is {tool.risk}: the configuration is read-only (readOnly = true), "
            "only R0 tools run",
        )
    kind = _agent_kind(tool, arguments)
    kinds = policy.agent_kinds
    if (
        tool.declared.starts_agents
        and kinds is not None
        and (kind is None or not _matches(kind, kinds))
    ):
        allowed = ", ".join(kinds)
        return Denial(
            "agent_kind_not_allowed",
            f"agent kind {kind!r} is not in agentKinds ({allowed})"
            if kind in AGENT_LABELS
            else f"the agent kind is not in agentKinds ({allowed})",
            tool.declared.kind,
        )
    named = _names(tool, arguments, policy)
    if named is not None:
        return named
    given = _agent_args(tool, arguments)
    if given is not None and not policy.allow_agent_args:
        return Denial(
            "agent_args_not_allowed",
            "native agent arguments are off (allowAgentArgs; off by default over MCP)",
            given[0],
        )
    return None


@contextlib.contextmanager
def checked_against(rules: Policy) -> Iterator[None]:
    """Run the block (a tool's handler) as checked against ``rules``."""
    token = _CURRENT.set(rules)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def effective_policy(config: Config | None) -> Policy:
    """The policy the running call was checked against (:func:`checked_against`), else the
    one ``config`` sets for the current caller."""
    kept = _CURRENT.get()
    if kept is not None:
        return kept
    return Policy.of(config) if config is not None else Policy(config_error="unreadable")


__all__ = [
    "DOCTOR_GLOB",
    "Denial",
    "Policy",
    "checked_against",
    "effective_policy",
    "is_agent_name",
    "listed",
    "name_refusal",
    "refusal",
    "starts_agents",
    "unmatched_globs",
]
