"""The preview answer of the agent tools that start or prompt agents (spawn, message).

Why: seed 001 makes every R2 call (runs a command, starts or prompts an agent) previewable.
``herdr_spawn_agent`` starts and prompts an agent and ``herdr_message_agent`` prompts one (or
types the answer to its question). ``preview: true`` → nothing touches Herdr or the task
records; the result is ``status: idle``, ``nextAction: ask_user``, ``observation: false``, no
task, and ``preview: {action, target}`` with payloads (prompt, message, native args)
redacted.

The gate itself (``DSH_HERDR_PREVIEW_REQUIRED`` refusing a call that is not a preview, as
``PREVIEW_REQUIRED`` with ``error.field: preview``; an unreadable value as
``CONFIG_INVALID``) is the runner's (:mod:`orchestrator.pipeline.call_guard`), for every tool
alike: by the time a handler asks here, the call may run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.agent_tools.contract import AgentResult, elapsed_ms
from orchestrator.core.tool import PREVIEW_REQUIRED_ENV, ToolContext

PREVIEW_SCHEMA: dict[str, Any] = {
    "type": "boolean",
    "default": False,
    "description": "true: start and send nothing; return what would be done (action and a "
    "redacted target) so a human can approve it. Required under "
    f"{PREVIEW_REQUIRED_ENV}.",
}


def preview_gate(
    tool: str,
    ctx: ToolContext,
    args: Mapping[str, Any],
    action: str,
    target: Mapping[str, Any],
    *,
    started: float,
) -> dict[str, Any] | None:
    """The preview when ``args`` ask for one, else None to go ahead (module docstring)."""
    if args.get("preview") is not True:
        return None
    return AgentResult(
        status="idle",
        tool=tool,
        next_action="ask_user",
        preview={"action": action, "target": dict(target)},
        elapsed_ms=elapsed_ms(started),
    ).to_dict()


__all__ = ["PREVIEW_SCHEMA", "preview_gate"]
