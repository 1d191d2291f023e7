"""What wraps every registry call: the policy first, the target's lock, then the audit line.

Why one wrapper: ``run_tool`` is the path both servers (MCP and ``herdr-orchestrator call``)
take, so the policy (:mod:`.policy`), the per-target lock (:mod:`.target_lock`) and the audit
log (:mod:`.audit`) sit here once, in this order, and no server can call a handler around
them. A refusal by the policy or a busy target is answered in the tool family's own shape
(``ok: false`` with ``errorCode`` for a low-level tool, an AgentResult refusal with the code in
UPPER_SNAKE for an agent tool) before the handler runs, so it never reaches Herdr.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from orchestrator.agent_tools.config import Config, ConfigError, default_state_dir
from orchestrator.agent_tools.contract import ResultError, refusal
from orchestrator.agent_tools.safe_fs import UnsafeFile
from orchestrator.tools import audit, policy, target_lock
from orchestrator.tools.caller import current_caller
from orchestrator.tools.outcome import call_failed, is_agent_tool
from orchestrator.tools.result import failure
from orchestrator.tools.tool import Tool, ToolContext

logger = logging.getLogger(__name__)

Run = Callable[[Tool, object, ToolContext], dict[str, Any]]


def _config(ctx: ToolContext) -> Config | None:
    from orchestrator.agent_tools.context import agent_context

    try:
        return agent_context(ctx).config
    except ConfigError:
        return None


def refused(tool: Tool, denial: policy.Denial) -> dict[str, Any]:
    """A policy's denial in ``tool``'s family shape."""
    if is_agent_tool(tool.name):
        error = ResultError(denial.code.upper(), denial.message, field=denial.field)
        return refusal(tool.name, error)
    data = {"field": denial.field} if denial.field else None
    return failure(tool.name, denial.code, denial.message, data=data)


def governed_call(
    tool: Tool, arguments: object, ctx: ToolContext, run: Run, names: Iterable[str] = ()
) -> dict[str, Any]:
    """Run ``tool`` through the policy, its target's lock and ``run``; audit it unless R0.

    ``names`` are the tools offered (a ``disableTools`` glob must match one of them).
    """
    started = time.monotonic()
    config = _config(ctx)
    rules = policy.policy_of(ctx, names)
    args: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
    denial = policy.refusal(rules, tool, args)
    if denial is not None:
        logger.info("%s: refused by the policy (%s)", tool.name, denial.code)
        outcome, result = "refused", refused(tool, denial)
    else:
        with policy.checked_against(rules):  # what herdr_doctor prints as the effective policy
            outcome, result = _locked_run(tool, arguments, ctx, config, run)
    if tool.risk != "R0":
        if outcome == "ran":
            outcome = "failed" if call_failed(tool.name, result) else "ok"
        _audit(tool, arguments, ctx, config, outcome, result, time.monotonic() - started)
    return result


def _locked_run(
    tool: Tool, arguments: object, ctx: ToolContext, config: Config | None, run: Run
) -> tuple[str, dict[str, Any]]:
    args: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
    key = target_lock.lock_key(tool, args)
    if key is None or config is None:
        return "ran", run(tool, arguments, ctx)
    try:
        with target_lock.target_lock(config.state_dir, key, config.target_lock_timeout_ms / 1000):
            return "ran", run(tool, arguments, ctx)
    except target_lock.TargetBusy as exc:
        logger.warning("%s: target busy", tool.name)
        return "refused", refused(tool, policy.Denial("target_busy", str(exc)))


def _audit(
    tool: Tool,
    arguments: object,
    ctx: ToolContext,
    config: Config | None,
    outcome: str,
    result: Mapping[str, Any],
    duration_s: float,
) -> None:
    state_dir: Path = config.state_dir if config is not None else default_state_dir(ctx.env)
    max_bytes = config.audit_max_bytes if config is not None else Config().audit_max_bytes
    line = audit.entry(
        tool,
        arguments,
        caller=current_caller().label(),
        outcome=outcome,
        result=result,
        duration_s=duration_s,
    )
    try:
        audit.append(state_dir, line, max_bytes)
    except (OSError, UnsafeFile) as exc:  # the call happened: say the record is missing
        logger.error("%s: the audit line could not be written (%s)", tool.name, type(exc).__name__)


__all__ = ["Run", "governed_call", "refused"]
