"""``herdr_list_agents``: the fleet view — every agent Herdr knows, ours marked ``owned``.

Why Herdr's list joined with our records, not our records alone: the caller wants to see the
whole fleet (including agents the user or another orchestrator started), and the records can
be stale (a pane closed under a task). So the rows come from ``agent.list`` and a record only
adds what we know about a row: ``owned``, ``taskId`` and ``taskStatus``. Foreign agents are
listed read-only (the control tools refuse them, see :mod:`.control`).

Ownership is decided by the pane, the agent name, the kind and the terminal: a record owns a
row when its ``paneId`` is the row's pane, its ``name`` is the row's agent name (an unnamed
agent is never ours: Herdr names the agent we start and clears the name when it exits), its
``kind`` is the row's agent label, its ``terminalId`` (recorded at spawn) is the row's terminal
when both are known — or the row's agent reports the task's own session file, resumed by a
restarted Herdr in a new terminal — and the record is not ``closed``. The checks matter
because a pane outlives the agent we started in it: after our agent exits, the user may start
another agent there by hand (unnamed, maybe another kind), and that agent must stay out of our
control.

This module also holds the small helpers the other K2 tools share (gate refusals, the
artifact directory of a record, the text of a recorded error).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.agent_tools.completion import session_path_of
from orchestrator.agent_tools.context import AgentToolsContext, agent_context
from orchestrator.agent_tools.contract import ResultError, refusal
from orchestrator.agent_tools.records import TaskRecord
from orchestrator.client.errors import ClientError, HerdrError
from orchestrator.client.protocol import AGENT_STATUSES
from orchestrator.client.types import AgentInfo
from orchestrator.core.config import (
    LOCAL_MACHINE,
    ConfigError,
    GateError,
    check_machine,
    machine_hint,
)
from orchestrator.core.tool import ToolContext

TOOL = "herdr_list_agents"
#: Record statuses that no longer claim their pane.
RELEASED_STATUSES = frozenset({"closed"})

LIST_AGENTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "owned_only": {
            "type": "boolean",
            "default": False,
            "description": "Only the agents this orchestrator spawned.",
        },
        "machine": {
            "type": "string",
            "description": (
                "A label enabled in machines: list that machine (through herdr --machine) "
                "instead of the local one."
            ),
        },
    },
}
LIST_AGENTS_DESCRIPTION = (
    "Fleet view: every agent Herdr knows, as rows {paneId, name, kind, agentStatus, owned, "
    "taskId, taskStatus, workspaceId, tabId, cwd, machine}. owned marks a task this "
    "orchestrator spawned; foreign agents are listed read-only."
)


# -- helpers shared by the K2 tools ---------------------------------------------------------


def gate_refusal(tool: str, exc: GateError) -> dict[str, Any]:
    """A configuration gate's refusal as an AgentResult (``failed``, ``nextAction: retry``)."""
    return refusal(tool, ResultError(exc.code, str(exc), field=exc.field or None))


def config_refusal(tool: str, ctx: AgentToolsContext) -> dict[str, Any] | None:
    """``CONFIG_INVALID`` when the configuration cannot be loaded, else None (loads it)."""
    try:
        ctx.config  # noqa: B018 - loading is the check
    except ConfigError as exc:
        return refusal(tool, ResultError(exc.code, str(exc), field=exc.key))
    return None


def herdr_refusal(
    tool: str, exc: ClientError, *, field: str | None = None, machine: str = LOCAL_MACHINE
) -> dict[str, Any]:
    """A Herdr failure (refusal or transport) before any task was involved; Herdr's refusal
    of a saved ``machine`` (unknown, disabled, ambiguous) is ``MACHINE_UNAVAILABLE`` and
    names the fix."""
    code = getattr(exc, "code", None) if isinstance(exc, HerdrError) else None
    text = str(exc) or type(exc).__name__
    hint = machine_hint(machine, text)
    return refusal(
        tool,
        ResultError(
            "HERDR_ERROR" if hint is None else "MACHINE_UNAVAILABLE",
            text if hint is None else f"{text}; {hint}",
            field=field,
            herdr_code=str(code) if code else None,
        ),
        next_action="inspect",
    )


def error_text(record: TaskRecord) -> str | None:
    """The record's error as one human line (``CODE: message``), or None."""
    error = record.error
    if not error:
        return None
    code = error.get("code")
    message = error.get("message")
    if code and message:
        return f"{code}: {message}"
    return str(message or code or dict(error))


def artifact_dir_of(ctx: AgentToolsContext, record: TaskRecord) -> Path:
    """The task's artifact directory (:meth:`TaskRecord.artifact_path`)."""
    return record.artifact_path(ctx.config.artifact_dir)


def same_agent(record: TaskRecord, agent: AgentInfo, *, terminal: bool = True) -> bool:
    """Whether ``agent`` is the agent ``record`` started: same pane, same name (a record without
    a name owns nothing), same kind (an unlabelled agent only while its launch is pending) and
    the same terminal when the record and Herdr both know it — or, in a new terminal, the
    task's own session resumed (:func:`resumed_own_session`: a restarted Herdr restored it).
    ``terminal=False`` accepts any agent of the task restored into a new terminal: a harvest
    reports a turn lost with the restart (``AGENT_RESTARTED``), while control tools need the
    terminal or the resumed session."""
    if record.pane_id != agent.pane_id or record.name is None or agent.name != record.name:
        return False
    if agent.agent != record.kind and not (agent.agent is None and agent.launch_pending):
        return False
    if not (
        terminal
        and record.terminal_id
        and agent.terminal_id
        and agent.terminal_id != record.terminal_id
    ):
        return True
    return resumed_own_session(record, agent)


def resumed_own_session(record: TaskRecord, agent: AgentInfo) -> bool:
    """Whether ``agent``, in a terminal the task did not start, reports the task's own session
    file: a restarted Herdr restored the task's agent into a new terminal by resuming that
    session (pi: ``pi --session <path>``), so it is still the task's conversation — not an
    agent someone started there by hand (which starts a session of its own)."""
    return record.session_path is not None and session_path_of(agent) == record.session_path


def owns(record: TaskRecord, agent: AgentInfo) -> bool:
    """Whether ``record`` is the task running ``agent`` (:func:`same_agent`, not closed)."""
    return record.status not in RELEASED_STATUSES and same_agent(record, agent)


def owner_of(records: list[TaskRecord], agent: AgentInfo) -> TaskRecord | None:
    """The newest record owning ``agent`` (records are oldest first)."""
    for record in reversed(records):
        if owns(record, agent):
            return record
    return None


# -- the tool -------------------------------------------------------------------------------


def fleet_row(agent: AgentInfo, record: TaskRecord | None, machine: str) -> dict[str, Any]:
    """One FleetRow (``contract.FLEET_ROW_SCHEMA``)."""
    status = agent.agent_status if agent.agent_status in AGENT_STATUSES else "unknown"
    cwd = agent.raw.get("cwd")
    return {
        "paneId": agent.pane_id,
        "name": agent.name,
        "kind": agent.agent,
        "agentStatus": status,
        "owned": record is not None,
        "taskId": record.task_id if record else None,
        "taskStatus": record.status if record else None,
        "workspaceId": agent.workspace_id or None,
        "tabId": agent.tab_id or None,
        "cwd": cwd if isinstance(cwd, str) else None,
        "machine": machine,
    }


def list_agents(params: Mapping[str, Any], tool_ctx: ToolContext) -> dict[str, Any]:
    """``{agents: FleetRow[], warnings?}``, or a refusal (an unsupported machine, Herdr
    unreachable). ``warnings`` names task records that could not be read (skipped)."""
    ctx = agent_context(tool_ctx)
    refused = config_refusal(TOOL, ctx)
    if refused is not None:
        return refused
    try:
        machine = check_machine(ctx.config, params.get("machine"))
    except GateError as exc:
        return gate_refusal(TOOL, exc)
    ctx.select_machine(machine)
    try:
        agents = ctx.client.agent_list()
    except ClientError as exc:
        return herdr_refusal(TOOL, exc, machine=machine)
    # ids are unique per server only: only this machine's tasks can own its agents
    records = [r for r in ctx.store.list_records() if r.machine == machine]
    rows = [fleet_row(agent, owner_of(records, agent), machine) for agent in agents]
    if params.get("owned_only"):
        rows = [row for row in rows if row["owned"]]
    value: dict[str, Any] = {"agents": rows}
    warnings = ctx.store.unreadable_warnings()
    if warnings:
        value["warnings"] = warnings
    return value


__all__ = [
    "LIST_AGENTS_DESCRIPTION",
    "LIST_AGENTS_SCHEMA",
    "artifact_dir_of",
    "config_refusal",
    "error_text",
    "fleet_row",
    "gate_refusal",
    "herdr_refusal",
    "list_agents",
    "owner_of",
    "owns",
    "same_agent",
]
