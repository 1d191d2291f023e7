"""The R2 preview gate of the agent tools that start or prompt agents (spawn, message).

Why: seed 001 makes every R2 call (runs a command, starts or prompts an agent) previewable,
and ``DSH_HERDR_PREVIEW_REQUIRED`` refuses any that is not a preview. ``herdr_spawn_agent``
starts and prompts an agent and ``herdr_message_agent`` prompts one (or types the answer to
its question), so without this gate they were R2 paths around it. They mirror the low-level
``_guard_r2`` exactly, in the AgentResult shape:

* ``preview: true`` → nothing touches Herdr or the task records; the result is
  ``status: idle``, ``nextAction: ask_user``, ``observation: false``, no task, and
  ``preview: {action, target}`` with payloads (prompt, message, native args) redacted.
* gate on, no preview → a refusal: ``status: failed``, ``nextAction: retry``,
  ``error.code: PREVIEW_REQUIRED`` (the low-level ``preview_required``), ``error.field:
  preview``. As with the low-level tools, the gate refuses every non-preview call: the user
  runs the work or lifts the gate.
* an unreadable gate value (``DSH_HERDR_PREVIEW_REQUIRED=maybe``) → ``CONFIG_INVALID``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.agent_tools.contract import AgentResult, ResultError, elapsed_ms, refusal
from orchestrator.booleans import BooleanError
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
    """The preview, the gate's refusal, or None to go ahead (see the module docstring)."""
    if args.get("preview") is True:
        return AgentResult(
            status="idle",
            tool=tool,
            next_action="ask_user",
            preview={"action": action, "target": dict(target)},
            elapsed_ms=elapsed_ms(started),
        ).to_dict()
    try:
        required = ctx.preview_required
    except BooleanError as exc:
        return refusal(tool, ResultError("CONFIG_INVALID", str(exc), field=PREVIEW_REQUIRED_ENV))
    if required:
        return refusal(
            tool,
            ResultError(
                "PREVIEW_REQUIRED",
                f"{PREVIEW_REQUIRED_ENV} is on: {tool} is R2 ({action}); call again with "
                "preview: true and get approval first (this gate refuses every R2 call that "
                "is not a preview)",
                field="preview",
            ),
        )
    return None


__all__ = ["PREVIEW_SCHEMA", "preview_gate"]
