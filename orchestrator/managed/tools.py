"""The nine ``agent_*`` tools of seed 002 as registry :class:`~orchestrator.core.tool.Tool`s.

Why here: the schemas are the seed's request fields exactly (``additionalProperties:
false``; ``files`` only on delegate, continue, steer, interrupt and reply), and each handler
is one call of :class:`orchestrator.managed.service.ManagedService`. The service is built
once per :class:`~orchestrator.core.tool.ToolContext` (kept in ``ctx.derived``) over the
agent tools' configuration (its ``stateDir``, its Herdr client), so an MCP server's one
context keeps one controller, and a one-shot ``herdr-orchestrator call`` finds the same
durable controller identity under the same state dir. Called from inside a managed child
(its ``PI_HERDSMAN_*`` environment), the controller is that child, a delegating agent
(:mod:`orchestrator.managed.delegation`), and a leaf's calls are refused.

Results: ``{"ok": true, "action": …, "text": …, …}`` on success; a failure is never raised
to the server: ``{"ok": false, "action": …, "error": <StructuredError>, "text": …}`` with the
reference's error block as ``text`` (A.2). ``ok`` drives MCP ``isError`` and the exit status
of ``call`` (:func:`orchestrator.pipeline.outcome.call_failed`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from orchestrator.agent_tools.context import agent_context
from orchestrator.booleans import BooleanError
from orchestrator.client.file_trust.private_files import UnsafeFile
from orchestrator.core.config import ConfigError
from orchestrator.core.text_rules import AGENT_NAME_PATTERN, refuse_nul
from orchestrator.core.tool import Tool, ToolContext, Traits
from orchestrator.logs import scoped, task_logger
from orchestrator.managed.delegation import delegating_controller, is_managed_child
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.lineage import launched_in
from orchestrator.managed.owner import owner_channel
from orchestrator.managed.service import MANAGED_TOOL_NAMES, ManagedService
from orchestrator.managed.settings import managed_settings

__all__ = [
    "BACKGROUND_KEY",
    "DERIVED_KEY",
    "MANAGED_TOOLS",
    "enable_background",
    "error_result",
    "managed_service",
    "request_refused",
]

DERIVED_KEY = "managed"
#: ``ctx.derived`` key: True asks for the background, then holds the running one
BACKGROUND_KEY = "managed_background"

logger = task_logger(__name__)

_FILES: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "description": "Files to attach: paths from your cwd, or result:<label>#<n> refs.",
}
_NONBLANK = {"type": "string", "pattern": "\\S"}
_AGENT = {
    "type": "string",
    "minLength": 1,
    "description": "The agent's exact label (agent_list).",
}
_MESSAGE = {**_NONBLANK, "description": "Your message to the agent."}
_TASK = {**_NONBLANK, "description": "The one bounded assignment."}


def _schema(properties: Mapping[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return refuse_nul(
        {
            "type": "object",
            "properties": dict(properties),
            "required": list(required),
            "additionalProperties": False,
        }
    )


SCHEMAS: dict[str, dict[str, Any]] = {
    "agent_list": _schema({}),
    "agent_delegate": _schema(
        {
            "definition": {**_NONBLANK, "description": "A definition name from agent_list."},
            "task": _TASK,
            "label": {
                "type": "string",
                "pattern": AGENT_NAME_PATTERN,
                "description": "Optional label (automatic when omitted).",
            },
            "files": _FILES,
        },
        ("definition", "task"),
    ),
    "agent_continue": _schema(
        {
            "session": {
                **_NONBLANK,
                "description": "Exact saved session path or full UUID of a former agent.",
            },
            "task": _TASK,
            "files": _FILES,
        },
        ("session", "task"),
    ),
    "agent_steer": _schema(
        {"agent": _AGENT, "message": _MESSAGE, "files": _FILES}, ("agent", "message")
    ),
    "agent_interrupt": _schema(
        {"agent": _AGENT, "message": _MESSAGE, "files": _FILES}, ("agent", "message")
    ),
    "agent_reply": _schema(
        {"agent": _AGENT, "message": _MESSAGE, "files": _FILES}, ("agent", "message")
    ),
    "agent_close": _schema({"agent": _AGENT}, ("agent",)),
    "agent_inspect": _schema({"agent": _AGENT}, ("agent",)),
    "agent_transcript": _schema({"agent": _AGENT}, ("agent",)),
}

DESCRIPTIONS: dict[str, str] = {
    "agent_list": "Delegate and coordinate work with owned asynchronous pi agents: list owned "
    "agent state (state, available_tools) and refresh the definition roster. Without an owner "
    "pane this is also where results and questions are delivered. Not for progress polling.",
    "agent_delegate": "Start one fresh bounded assignment from a definition in a new pi "
    "session (in the caller's cwd); returns once recorded, not on completion.",
    "agent_continue": "Start one bounded assignment from an exact historical managed-agent pi "
    "session (new generation, inherited label).",
    "agent_steer": "Cooperatively change a live direct agent's current assignment (queued for "
    "pi's next steering boundary; does not preempt).",
    "agent_interrupt": "Cancel a live agent's current pi operation and continue the same "
    "assignment with replacement direction.",
    "agent_reply": "Answer the exact pending ask_owner question of a direct agent.",
    "agent_close": "Destructively close an eligible directly owned agent generation (its "
    "owned descendants first).",
    "agent_inspect": "Bounded live terminal/process evidence of a direct agent.",
    "agent_transcript": "Bounded persisted pi conversation/tool evidence of a direct agent.",
}

RISKS = {
    "agent_list": "R0",
    "agent_delegate": "R2",
    "agent_continue": "R2",
    "agent_steer": "R2",
    "agent_interrupt": "R2",
    "agent_reply": "R2",
    "agent_close": "R1",
    "agent_inspect": "R0",
    "agent_transcript": "R0",
}


def managed_service(ctx: ToolContext) -> ManagedService:
    """The controller of this context, built once (module docstring)."""
    kept = ctx.derived.get(DERIVED_KEY)
    if isinstance(kept, ManagedService):
        return kept
    actx = agent_context(ctx)
    state_dir = actx.config.state_dir.expanduser()
    env = dict(actx.env)
    delegating = None
    lineage = launched_in()
    if is_managed_child(env) or lineage.run_id is not None:
        # a managed child serves as its own (delegating) controller over the lead's state,
        # as its launch recorded it: one that dropped its PI_HERDSMAN_* variables is still
        # the child its pane was launched as, never a lead controller
        delegating = delegating_controller(env, lineage)
        state_dir = delegating.state_dir
    owner = None
    if env.get("HERDR_PANE_ID", "").strip():
        owner = owner_channel(env, actx.client, spool_dir=state_dir / "managed" / "owner-messages")
    service = ManagedService(
        state_dir=state_dir,
        client_of=lambda: actx.client,
        env=env,
        cwd=Path.cwd(),
        owner=owner,
        settings=managed_settings(actx.config, env),
        aliases_overrides=actx.config.aliases,
        delegating=delegating,
        read_only=actx.config.read_only,
    )
    ctx.derived[DERIVED_KEY] = service
    # the background delivers into the owner's pane and closes finished agents: mutations
    # of Herdr, never made under readOnly (docs: "Read-only configuration")
    if ctx.derived.get(BACKGROUND_KEY) is True and not service.read_only:
        from orchestrator.managed.background import ControllerBackground
        from orchestrator.managed.health import LifecycleEvents

        background = ControllerBackground(service)
        ctx.derived[BACKGROUND_KEY] = background
        background.start(LifecycleEvents.from_env(env))
    return service


def enable_background(ctx: ToolContext) -> None:
    """Run the controller's background work (reconcile, health attention) in this
    long-running server: at once when managed state exists (a restarted server recovers and
    delivers without waiting for a call), else from the first managed-agent call."""
    ctx.derived[BACKGROUND_KEY] = True
    try:
        state_dir = agent_context(ctx).config.state_dir.expanduser()
        if (state_dir / "managed" / "generations").is_dir():
            managed_service(ctx)
    except Exception as exc:  # never keep the server from starting; calls report it
        logger.warning("managed background not started (%s)", type(exc).__name__)


def error_result(action: str, error: ManagedAgentError) -> dict[str, Any]:
    """The public failure of one call: the structured error and its text block (A.2)."""
    detail = error.to_dict()
    lines = [
        f"Agent {action} failed.",
        f"Category: {detail['category']}",
        f"Message: {detail['message']}",
        f"Operation: {detail['operation']}",
        f"Rollback occurred: {str(detail['rollbackOccurred']).lower()}",
        f"Retry attempted: {str(detail['retryAttempted']).lower()}",
    ]
    ids = detail.get("ids")
    if ids:
        lines.append("Identity: " + ", ".join(f"{k}={v}" for k, v in ids.items()))
    startup = (detail.get("details") or {}).get("startupDiagnostic")
    if startup:
        lines.append(f"Startup diagnostic: {startup}")
    if detail.get("nextAction"):
        lines.append(f"Next action: {detail['nextAction']}")
    return {"ok": False, "action": action, "error": detail, "text": "\n".join(lines)}


def request_refused(
    name: str, message: str, *, next_action: str, details: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A call of managed tool ``name`` refused before it ran, as an ``invalid_request``
    structured error with what the caller can do next."""
    action = name.removeprefix("agent_")
    return error_result(
        action,
        ManagedAgentError(
            "invalid_request",
            message,
            operation=action,
            next_action=next_action,
            details=dict(details) if details else None,
        ),
    )


def invalid_arguments(name: str, message: str, *, field: str | None = None) -> dict[str, Any]:
    """A schema refusal of a managed tool (``details.field`` names the parameter at fault
    when one is)."""
    return request_refused(
        name,
        message,
        next_action="Fix the call: only the tool's own fields, with their types.",
        details={"field": field} if field else None,
    )


def _handler(
    name: str, call: Callable[[ManagedService, Mapping[str, Any]], dict[str, Any]]
) -> Callable[[Mapping[str, Any], ToolContext], dict[str, Any]]:
    action = name.removeprefix("agent_")

    def handle(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
        try:
            return call(managed_service(ctx), args)
        except ManagedAgentError as exc:
            return error_result(action, exc)
        except (ConfigError, BooleanError, UnsafeFile) as exc:
            return error_result(
                action,
                ManagedAgentError("invalid_request", str(exc), operation="controller"),
            )

    return scoped(handle)


_CALLS: dict[str, Callable[[ManagedService, Mapping[str, Any]], dict[str, Any]]] = {
    "agent_list": lambda s, a: s.list_agents(),
    "agent_delegate": lambda s, a: s.delegate(
        a["definition"], a["task"], a.get("label"), a.get("files")
    ),
    "agent_continue": lambda s, a: s.continue_(a["session"], a["task"], a.get("files")),
    "agent_steer": lambda s, a: s.steer(a["agent"], a["message"], a.get("files")),
    "agent_interrupt": lambda s, a: s.interrupt(a["agent"], a["message"], a.get("files")),
    "agent_reply": lambda s, a: s.reply(a["agent"], a["message"], a.get("files")),
    "agent_close": lambda s, a: s.close(a["agent"]),
    "agent_inspect": lambda s, a: s.inspect(a["agent"]),
    "agent_transcript": lambda s, a: s.transcript(a["agent"]),
}


def _delegate_cwd(args: Mapping[str, Any], ctx: ToolContext) -> str:
    """The directory a delegated child gets: the controller's own (``ManagedService.cwd``)."""
    return os.path.realpath(Path.cwd())


def _continued(args: Mapping[str, Any], ctx: ToolContext) -> tuple[str, str] | None:
    try:
        return managed_service(ctx).continue_source(str(args["session"]))
    except (ManagedAgentError, ConfigError, BooleanError, UnsafeFile, OSError):
        return None  # the handler reports why; the gates fail closed on an unknown value


def _continue_cwd(args: Mapping[str, Any], ctx: ToolContext) -> str | None:
    """The directory a continued child gets: its saved session's."""
    found = _continued(args, ctx)
    return found[0] if found is not None else None


def _continue_label(args: Mapping[str, Any], ctx: ToolContext) -> str | None:
    """The label a continued child inherits: its saved session's."""
    found = _continued(args, ctx)
    return found[1] if found is not None else None


_LIVE = Traits(family="managed", targets=("agent",))
_PROMPTS = Traits(family="managed", effect="prompt", targets=("agent",), lock=("agent",))
#: each tool's declaration (core.tool.Traits): every managed agent is a pi agent, whose
#: label is its name; a launch's directory is the one its child will get
TRAITS: dict[str, Traits] = {
    "agent_list": Traits(family="managed"),
    "agent_delegate": Traits(
        family="managed",
        effect="start",
        fixed_kind="pi",
        name="label",
        launch_cwd=_delegate_cwd,
        closed_by="agent_close",
    ),
    "agent_continue": Traits(
        family="managed",
        effect="start",
        fixed_kind="pi",
        launch_cwd=_continue_cwd,
        launch_name=_continue_label,
        closed_by="agent_close",
    ),
    "agent_steer": _PROMPTS,
    "agent_interrupt": _PROMPTS,
    "agent_reply": _PROMPTS,
    "agent_close": Traits(family="managed", effect="end", targets=("agent",)),
    "agent_inspect": _LIVE,
    "agent_transcript": _LIVE,
}

MANAGED_TOOLS: dict[str, Tool] = {
    name: Tool(
        name=name,
        risk=RISKS[name],  # type: ignore[arg-type]
        description=DESCRIPTIONS[name],
        input_schema=SCHEMAS[name],
        handler=_handler(name, _CALLS[name]),
        traits=TRAITS[name],
    )
    for name in MANAGED_TOOL_NAMES  # the one list of the nine (the extension's allowlist too)
}
