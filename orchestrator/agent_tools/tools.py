"""The agent tools (seed 000) as registry :class:`~orchestrator.core.tool.Tool` objects.

``AGENT_TOOLS`` maps each tool name to its Tool. Handlers live in their own modules (spawn
and get_result in :mod:`.spawn` and :mod:`.harvest`, the fleet, inbox, transcript, doctor and
control tools in theirs); this module only lists them, in the seed's order. A tool whose
handler is not written yet is simply absent, never a stub that answers success.

Handlers take any :class:`~orchestrator.core.tool.ToolContext`; they turn it into an
:class:`~orchestrator.agent_tools.context.AgentToolsContext` with
:func:`~orchestrator.agent_tools.context.agent_context`.

Every handler starts on the local machine (:func:`~.context.on_local_machine`) and picks
another only from its ``machine`` argument or an owned task's record.

Every handler runs in its own task scope (:func:`orchestrator.logs.scoped`): the task id a
handler binds for its log records ends with the call.

Every string parameter refuses NUL in the schema
(:func:`~orchestrator.core.text_rules.refuse_nul`), as the low-level tools' do: a host
sees the rule, and ``run_tool`` answers it with the AgentResult refusal shape.

Each tool carries its declaration (:class:`~orchestrator.core.tool.Traits`): what it does and
which fields name a directory, a kind, a name, an agent, a machine. The runner
(:mod:`orchestrator.pipeline.call_guard`) applies every gate from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.agent_tools import (
    control,
    doctor_tool,
    fleet,
    harvest,
    inbox_tool,
    spawn,
    transcript_tool,
)
from orchestrator.agent_tools.context import on_local_machine
from orchestrator.core.text_rules import refuse_nul
from orchestrator.core.tool import Tool, ToolContext, Traits
from orchestrator.logs import scoped


def _server_cwd(args: Mapping[str, Any], ctx: ToolContext) -> str:
    """Where a spawn without ``cwd`` starts its agent: this server's working directory."""
    return str(Path.cwd())


AGENT_TOOLS: dict[str, Tool] = {
    spawn.TOOL: Tool(
        name=spawn.TOOL,
        risk="R2",
        description=(
            "Delegate a task to a new Herdr agent (default kind pi): creates its pane, starts "
            "the agent, sends the task envelope, waits until it settles and returns the "
            "AgentResult (final message, result.md, diff). Never answers a blocked agent."
        ),
        input_schema=refuse_nul(spawn.SPAWN_SCHEMA),
        handler=on_local_machine(scoped(spawn.handle_spawn)),
        traits=Traits(
            family="agent",
            effect="start",
            cwd="cwd",
            launch_cwd=_server_cwd,
            kind="kind",
            name="name",
            machine="machine",
            preview="preview",
            agent_args=("agent_args",),
            closed_by=control.CLOSE,
        ),
    ),
    harvest.TOOL: Tool(
        name=harvest.TOOL,
        risk="R0",
        description=(
            "Harvest a task's AgentResult (task id, agent name or pane id), waiting until "
            "the agent settles by default; a target not spawned here gets an observation. "
            "Never re-submits the task."
        ),
        input_schema=refuse_nul(harvest.GET_RESULT_SCHEMA),
        handler=on_local_machine(scoped(harvest.handle_get_result)),
        traits=Traits(family="agent", targets=("target",), machine="machine"),
    ),
    control.MESSAGE: Tool(
        name=control.MESSAGE,
        # R2: it prompts an agent (or types the answer to its question and presses Enter).
        risk="R2",
        description=control.MESSAGE_DESCRIPTION,
        input_schema=refuse_nul(control.MESSAGE_SCHEMA),
        handler=on_local_machine(scoped(control.message_agent)),
        traits=Traits(
            family="agent",
            effect="prompt",
            targets=("target",),
            machine="machine",
            preview="preview",
            lock=("target",),
        ),
    ),
    fleet.TOOL: Tool(
        name=fleet.TOOL,
        risk="R0",
        description=fleet.LIST_AGENTS_DESCRIPTION,
        input_schema=refuse_nul(fleet.LIST_AGENTS_SCHEMA),
        handler=on_local_machine(scoped(fleet.list_agents)),
        traits=Traits(family="agent", machine="machine"),
    ),
    control.INTERRUPT: Tool(
        name=control.INTERRUPT,
        risk="R1",
        description=control.INTERRUPT_DESCRIPTION,
        input_schema=refuse_nul(control.INTERRUPT_SCHEMA),
        handler=on_local_machine(scoped(control.interrupt_agent)),
        traits=Traits(family="agent", effect="end", targets=("target",)),
    ),
    inbox_tool.TOOL: Tool(
        name=inbox_tool.TOOL,
        risk="R0",
        description=inbox_tool.INBOX_DESCRIPTION,
        input_schema=refuse_nul(inbox_tool.INBOX_SCHEMA),
        handler=on_local_machine(scoped(inbox_tool.inbox)),
        traits=Traits(family="agent", targets=("target",)),
    ),
    transcript_tool.TOOL: Tool(
        name=transcript_tool.TOOL,
        risk="R0",
        description=transcript_tool.READ_AGENT_DESCRIPTION,
        input_schema=refuse_nul(transcript_tool.READ_AGENT_SCHEMA),
        handler=on_local_machine(scoped(transcript_tool.read_agent)),
        traits=Traits(family="agent", targets=("target",)),
    ),
    control.CLOSE: Tool(
        name=control.CLOSE,
        risk="R1",
        description=control.CLOSE_DESCRIPTION,
        input_schema=refuse_nul(control.CLOSE_SCHEMA),
        handler=on_local_machine(scoped(control.close_agent)),
        traits=Traits(family="agent", effect="end", targets=("target",)),
    ),
    doctor_tool.TOOL: Tool(
        name=doctor_tool.TOOL,
        risk="R0",
        description=doctor_tool.DOCTOR_DESCRIPTION,
        input_schema=refuse_nul(doctor_tool.DOCTOR_SCHEMA),
        handler=on_local_machine(scoped(doctor_tool.doctor)),
        traits=Traits(family="agent"),
    ),
}

__all__ = ["AGENT_TOOLS"]
