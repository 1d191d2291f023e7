"""The runner: every registry call, whatever its family, takes the same steps in one order.

1. **policy** (:mod:`orchestrator.core.policy`): ``readOnly``, ``disableTools``,
   ``agentKinds`` (a managed definition's kind counts), ``agentNames`` (names and labels);
2. **schema** (:mod:`.schema`): the arguments against the tool's JSON Schema;
3. **kill switch** (``enabled = false``): refuses every call whose declared effect creates,
   runs, starts or prompts (:data:`~orchestrator.core.tool.STARTING_EFFECTS`);
4. **allowCwd** on the resolved directory: the declared ``cwd`` (replaced by the resolved
   path), the directory a split inherits, the directory a managed launch's child will get,
   the pane or agent a call types into;
5. **agentNames on an inherited label** (a continued managed session keeps its label);
6. **preview gate** (``DSH_HERDR_PREVIEW_REQUIRED``): a call that runs, starts or prompts and
   is not a preview is refused;
7. **the target's lock** (:mod:`.target_lock`), then **the handler**;
8. **outcome** (:func:`.outcome.call_failed`: MCP ``isError``, ``call``'s exit status) and
   **audit** (:mod:`.audit`) of every call that is not R0.

Each gate reads the tool's declaration (:class:`~orchestrator.core.tool.Traits`), never a
list of tool names, and no handler checks a gate itself, so a new tool cannot skip one. A
refusal is rendered by the tool's family renderer (:mod:`.refusals`) before anything reaches
Herdr (the directory checks of step 4 read a pane from Herdr; they send nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from orchestrator.agent_tools.context import agent_context
from orchestrator.booleans import BooleanError
from orchestrator.client.file_trust.private_files import UnsafeFile
from orchestrator.core import gates, policy
from orchestrator.core.caller import Caller, current_caller
from orchestrator.core.config import LOCAL_MACHINE, Config, ConfigError, default_state_dir
from orchestrator.core.tool import PREVIEW_REQUIRED_ENV, STARTING_EFFECTS, Tool, ToolContext
from orchestrator.logs import task_logger, task_scope
from orchestrator.pipeline import audit, target_lock
from orchestrator.pipeline.outcome import call_failed
from orchestrator.pipeline.refusals import name_the_machine, render_refusal
from orchestrator.pipeline.schema import argument_error, integers, invalid

#: the agent tools' logger form: every record carries ``task_id`` (``-`` before a call has one)
logger = task_logger(__name__)

Run = Callable[[Tool, object, ToolContext], dict[str, Any]]
#: effects the preview gate binds (R2: a command, an agent started or prompted)
PREVIEWED_EFFECTS = frozenset({"run", "start", "prompt"})


def config_of(ctx: ToolContext) -> Config | None:
    """The configuration of ``ctx`` (kept across calls on the same context), None when it
    cannot be read (the policy then refuses all but the doctors)."""
    try:
        return agent_context(ctx).config
    except ConfigError:
        return None


def policy_of(
    ctx: ToolContext, tools: Iterable[str] = (), caller: Caller | None = None
) -> policy.Policy:
    """The policy of ``ctx``'s configuration for the tools named ``tools``: a
    ``disableTools`` glob that matches none of them makes the configuration invalid (a
    misspelt name would leave the tool on)."""
    try:
        config = agent_context(ctx).config
    except ConfigError as exc:
        return policy.Policy(config_error=str(exc))
    names = list(tools)
    stray = policy.unmatched_globs(config.disable_tools, names) if names else []
    if stray:
        return policy.Policy(
            config_error=f"disableTools: {stray[0]!r} matches no tool (herdr-orchestrator tools)"
        )
    return policy.Policy.of(config, caller)


def governed_call(
    tool: Tool, arguments: object, ctx: ToolContext, run: Run, names: Iterable[str] = ()
) -> dict[str, Any]:
    """Run ``tool`` through every step of the module docstring; audit it unless R0.

    ``names`` are the tools offered (a ``disableTools`` glob must match one of them).
    """
    started = time.monotonic()
    # the whole call in one task scope: a refusal's or the audit's records carry this call's
    # task (none before a handler binds one), never one left bound by an earlier call
    with task_scope():
        config = config_of(ctx)
        rules = policy_of(ctx, names)
        given: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
        outcome, result = _steps(tool, arguments, given, ctx, config, rules, run)
        if tool.risk != "R0":
            if outcome == "ran":
                outcome = "failed" if call_failed(tool.name, result) else "ok"
            _audit(tool, arguments, ctx, config, outcome, result, time.monotonic() - started)
    return result


def _steps(
    tool: Tool,
    arguments: object,
    given: Mapping[str, Any],
    ctx: ToolContext,
    config: Config | None,
    rules: policy.Policy,
    run: Run,
) -> tuple[str, dict[str, Any]]:
    denial = policy.refusal(rules, tool, given)
    if denial is not None:
        logger.info("%s: refused by the policy (%s)", tool.name, denial.code)
        return "refused", render_refusal(tool, denial.code, denial.message, denial.field, given)
    problem = argument_error(tool, arguments)
    if problem is not None:
        return "ran", invalid(tool, problem)
    args = dict(integers(tool.input_schema, given))
    try:
        if config is not None:
            _gates(tool, args, ctx, config, rules)
    except gates.Refused as exc:
        gate = exc.refusal
        logger.info("%s: stopped by a gate (%s)", tool.name, gate.code)
        refused = render_refusal(tool, gate.code, gate.message, gate.field, given)
        if gate.code == "preview_required":
            _show_preview(tool, args, ctx, run, refused)
        return "refused", refused
    with policy.checked_against(rules):  # what herdr_doctor prints as the effective policy
        return _locked_run(tool, args, ctx, config, run)


def _gates(
    tool: Tool, args: dict[str, Any], ctx: ToolContext, config: Config, rules: policy.Policy
) -> None:
    """Steps 3-6 of the module docstring; :class:`gates.Refused` when one refuses.

    ``args`` may be changed: a checked directory replaces the caller's spelling."""
    traits = tool.declared
    effect = traits.effect_for(args)
    if effect not in STARTING_EFFECTS:
        return
    gates.require_enabled(config)
    preview = bool(traits.preview and args.get(traits.preview) is True)
    _allow_cwd(tool, args, ctx, config, preview=preview)
    if traits.launch_name is not None and rules.agent_names is not None:
        label = traits.launch_name(args, ctx)
        named = policy.name_refusal(rules, label, "label")
        if named is not None:
            if label is None:  # the inherited label could not be read: fail closed
                named = policy.Denial(
                    named.code, "agentNames is set and the inherited label cannot be read"
                )
            raise gates.Refused(gates.Refusal(named.code, named.message, named.field))
    if effect in PREVIEWED_EFFECTS and not preview:
        try:
            required = ctx.preview_required
        except BooleanError as exc:
            raise gates.Refused(
                gates.Refusal("config_invalid", str(exc), PREVIEW_REQUIRED_ENV)
            ) from None
        if required:
            raise gates.Refused(
                gates.Refusal(
                    "preview_required",
                    f"{PREVIEW_REQUIRED_ENV} is on: {tool.name} "
                    + (
                        "was not run; call again with preview: true and get approval first"
                        if traits.preview
                        else "has no preview and was not run; ask the user to lift the gate"
                    )
                    + " (this gate refuses every R2 call that is not a preview)",
                    traits.preview,
                )
            )


def _show_preview(
    tool: Tool, args: Mapping[str, Any], ctx: ToolContext, run: Run, refused: dict[str, Any]
) -> None:
    """A low-level preview-gate refusal shows what would be done (``data.action``,
    ``data.target``, payloads redacted): the tool's own preview, which touches nothing."""
    field = tool.declared.preview
    if tool.declared.family != "low_level" or field is None:
        return
    shown = run(tool, {**args, field: True}, ctx)
    data = shown.get("data")
    if shown.get("ok") is True and isinstance(data, Mapping) and data.get("preview") is True:
        refused["data"].update({k: data[k] for k in ("action", "target") if k in data})


def _allow_cwd(
    tool: Tool, args: dict[str, Any], ctx: ToolContext, config: Config, *, preview: bool
) -> None:
    """``allowCwd`` on every directory the call makes work start in (module docstring)."""
    if not config.allow_cwd:
        return
    traits = tool.declared
    machine = args.get(traits.machine) if traits.machine else None
    if machine not in (None, "", LOCAL_MACHINE):
        return  # a path on another machine is resolved there, by the tool (remote_task)
    if traits.cwd is not None and isinstance(args.get(traits.cwd), str):
        args[traits.cwd] = gates.allowed_cwd(config, args[traits.cwd])
    elif traits.inherits_cwd_of is not None and traits.cwd is not None:
        if not preview:
            pane = str(args[traits.inherits_cwd_of])
            args[traits.cwd] = gates.inherited_cwd(config, ctx.client, pane)
    elif traits.launch_cwd is not None:
        where = traits.launch_cwd(args, ctx)
        if where is None:
            raise gates.Refused(
                gates.Refusal(
                    "cwd_unknown",
                    "the directory the agent would start in cannot be told, so allowCwd "
                    "cannot be checked",
                )
            )
        gates.allowed_cwd(config, where)
    if preview:
        return  # a preview runs nothing in the pane: its directory is not read
    if traits.pane is not None and isinstance(args.get(traits.pane), str):
        gates.pane_cwd_allowed(config, ctx.client, args[traits.pane])
    if traits.agent_pane is not None and isinstance(args.get(traits.agent_pane), str):
        gates.agent_pane_cwd_allowed(config, ctx.client, args[traits.agent_pane])


def _locked_run(
    tool: Tool, args: Mapping[str, Any], ctx: ToolContext, config: Config | None, run: Run
) -> tuple[str, dict[str, Any]]:
    key = target_lock.lock_key(tool, args)
    if key is None or config is None:
        return "ran", name_the_machine(tool, args, run(tool, args, ctx))
    try:
        with target_lock.target_lock(config.state_dir, key, config.target_lock_timeout_ms / 1000):
            return "ran", name_the_machine(tool, args, run(tool, args, ctx))
    except target_lock.TargetBusy as exc:
        logger.warning("%s: target busy", tool.name)
        return "refused", render_refusal(tool, "target_busy", str(exc), None, args)


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


__all__ = ["PREVIEWED_EFFECTS", "Run", "config_of", "governed_call", "policy_of"]
