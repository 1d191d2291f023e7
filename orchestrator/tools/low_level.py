"""The 24 low-level tools of the dsh-herdr contract (seed 001), with its names and risks.

Each tool turns its arguments into one client operation (:mod:`orchestrator.client.cli_map`
owns the argv), runs it, and reports the exchange in the result contract
(:mod:`.result`). The rules the contract sets for every tool live here:

* ids are the caller's, never guessed (the schemas require them);
* creates and splits always pass ``--no-focus`` (``focus: false`` on the wire);
* timeouts are milliseconds; waits get a bounded default so no call hangs forever;
* R2 tools (``pane_run``, ``agent_start``, ``agent_prompt``) accept ``preview: true``,
  which runs nothing and returns ``data.preview``, ``data.action`` and a redacted
  ``data.target``. ``pane_send_text`` is R1 only while its text holds no line break or other
  control character (TAB aside): a CR or LF submits the line like ``pane_run`` does, so such
  a text runs (its declared effect, :func:`_send_text_effect`);
* each tool's declaration (:class:`~orchestrator.core.tool.Traits`) names what it does and
  which fields name a directory, a pane, an agent: the runner
  (:mod:`orchestrator.pipeline.call_guard`) applies the configuration gates (``enabled``,
  ``allowCwd``) and the preview gate from it before a handler runs, so no handler here
  checks one; a create's ``env`` may not choose code (:mod:`.env_policy`), which the
  handlers check (it is an argument rule, not a gate);
* ``server_not_running`` is reported once, never retried; a mutation whose exchange broke
  is reported (``transport_error`` with ``data.maybeApplied``), never sent again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from orchestrator.client import cli_map
from orchestrator.client.errors import TransportError
from orchestrator.client.protocol import AGENT_LABELS, AGENT_STATUSES
from orchestrator.client.protocol.startup import MAX_TIMEOUT_MS, SETTLE_MS
from orchestrator.client.untrusted_text import C1, control_pattern
from orchestrator.core.result import (
    command_text,
    failure,
    from_exchange,
    from_transport_error,
    redacted,
)
from orchestrator.core.text_rules import AGENT_NAME_PATTERN, NO_NUL
from orchestrator.core.tool import PREVIEW_REQUIRED_ENV, Effect, Risk, Tool, ToolContext, Traits
from orchestrator.tools.env_policy import env_problem

Args = Mapping[str, Any]

#: Agent kinds: Herdr's own canonical labels (``agent_label`` in Herdr's ``src/detect/mod.rs``),
#: kept in one table, :mod:`orchestrator.client.protocol` (whose docstring records seed 001's typos,
#: ``wen`` and ``ocr``, and why ``qwen`` is the kind they stand for).
AGENT_KINDS: tuple[str, ...] = AGENT_LABELS
#: Herdr's bounds on ``agent start --timeout`` (``src/app/agents.rs``: more than the 3 s
#: settle delay, at most ``MAX_AGENT_START_TIMEOUT``; else ``invalid_agent_timeout``).
AGENT_START_MIN_MS = SETTLE_MS + 1
AGENT_START_MAX_MS = MAX_TIMEOUT_MS
READ_SOURCES = ("visible", "recent", "recent-unwrapped", "detection")
_SOURCE: dict[str, Any] = {
    "enum": list(READ_SOURCES),
    "description": "What to read: visible (the screen), recent (recent output, soft-wrapped; "
    "the default), recent-unwrapped (best for logs), detection (agent-detection buffer)",
}
#: Default server-side wait bounds (ms) when the caller gives none: Herdr's own waits have
#: no default and would block forever.
DEFAULT_OUTPUT_WAIT_MS = 30_000
DEFAULT_AGENT_WAIT_MS = 120_000

# -- schema helpers ----------------------------------------------------------------------------


def _str(description: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": 1,
        "pattern": NO_NUL,
        "description": description,
        **extra,
    }


def _ms(description: str, minimum: int = 1, maximum: int = 3_600_000) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": minimum,
        "maximum": maximum,
        "description": f"{description} (milliseconds)",
    }


_WORKSPACE = _str("Workspace id from the latest workspace_list/create result, e.g. w1.")
_TAB = _str("Tab id from the latest tab_list/create result, e.g. w1:t1.")
_PANE = _str("Pane id from the latest pane_list/get/create/split result, e.g. w1:p1.")
_AGENT = _str("Agent name (from agent_start) or the pane id hosting the agent.")
_CWD = _str(
    "Working directory for the new shell; a relative path is made absolute against this "
    "tool server's working directory (Herdr would resolve it against its own)."
)
_LABEL = _str("Optional display label.")
_ENV = {
    "type": "object",
    "description": "Extra environment variables for the new shell (NAME: value).",
    "propertyNames": {"pattern": "^[^=\\u0000]+$"},
    "additionalProperties": {"type": "string", "pattern": NO_NUL},
}
_LINES = {
    "type": "integer",
    "minimum": 1,
    "maximum": 1000,
    "description": "How many of the last lines to read.",
}
_PREVIEW = {
    "type": "boolean",
    "description": "true: run nothing; return what would be done (action and a redacted "
    "target) so a human can approve it.",
}
_UNTIL = {
    "type": "array",
    "items": {"enum": list(AGENT_STATUSES)},
    "uniqueItems": True,
    "minItems": 1,
    "description": "Statuses that end the wait (default: idle, done, blocked).",
}


def _schema(required: Sequence[str] = (), **properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


# -- running -----------------------------------------------------------------------------------


def _run(
    ctx: ToolContext,
    operation: str,
    params: Mapping[str, Any],
    *,
    secrets: Sequence[str] = (),
) -> dict[str, Any]:
    op = cli_map.operation(operation)
    clean = cli_map.normalise_params({k: v for k, v in params.items() if v is not None})
    argv = ["herdr", *op.cli_argv(clean)]
    try:
        exchange = ctx.client.execute(operation, clean)
    except TransportError as exc:
        return from_transport_error(argv, exc, secrets)
    return from_exchange(exchange, secrets, text_output=op.output == "text")


def _env(args: Args) -> dict[str, str] | None:
    env = args.get("env")
    return dict(env) if env else None


def _command(operation: str, params: Mapping[str, Any], secrets: Sequence[str] = ()) -> str:
    op = cli_map.operation(operation)
    clean = cli_map.normalise_params({k: v for k, v in params.items() if v is not None})
    return command_text(["herdr", *op.cli_argv(clean)], secrets)


def _preview(
    args: Args,
    operation: str,
    params: Mapping[str, Any],
    action: str,
    target: Mapping[str, Any],
    secrets: Sequence[str],
) -> dict[str, Any] | None:
    """The preview answer of an R2 call with ``preview: true`` (nothing touches Herdr), else
    None. The gates (kill switch, preview gate, ``allowCwd``) ran before, in the runner."""
    if args.get("preview") is not True:
        return None
    return {
        "ok": True,
        "command": _command(operation, params, secrets),
        "exitCode": None,
        "data": {"preview": True, "action": action, "target": dict(target)},
    }  # fmt: skip


def _env_refused(args: Args, operation: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
    """A create's or split's ``env`` that would choose code (:mod:`.env_policy`), refused."""
    problem = env_problem(args.get("env"))
    if problem is None:
        return None
    command = _command(operation, params)
    return failure(command, "invalid_arguments", problem, data={"field": "env"})


# -- handlers ----------------------------------------------------------------------------------


def _workspace_list(args: Args, ctx: ToolContext) -> dict[str, Any]:
    return _run(ctx, "workspace.list", {})


def _workspace_get(args: Args, ctx: ToolContext) -> dict[str, Any]:
    return _run(ctx, "workspace.get", {"workspace_id": args["workspace"]})


def _workspace_create(args: Args, ctx: ToolContext) -> dict[str, Any]:
    params = {"cwd": args["cwd"], "label": args.get("label"), "env": _env(args), "focus": False}
    guard = _env_refused(args, "workspace.create", params)
    return guard or _run(ctx, "workspace.create", params)


def _tab_list(args: Args, ctx: ToolContext) -> dict[str, Any]:
    return _run(ctx, "tab.list", {"workspace_id": args.get("workspace")})


def _tab_get(args: Args, ctx: ToolContext) -> dict[str, Any]:
    return _run(ctx, "tab.get", {"tab_id": args["tab"]})


def _tab_create(args: Args, ctx: ToolContext) -> dict[str, Any]:
    params = {
        "workspace_id": args["workspace"],
        "cwd": args["cwd"],
        "label": args.get("label"),
        "env": _env(args),
        "focus": False,
    }
    guard = _env_refused(args, "tab.create", params)
    return guard or _run(ctx, "tab.create", params)


def _pane_list(args: Args, ctx: ToolContext) -> dict[str, Any]:
    return _run(ctx, "pane.list", {"workspace_id": args.get("workspace")})


def _by_pane(operation: str) -> Callable[[Args, ToolContext], dict[str, Any]]:
    def handler(args: Args, ctx: ToolContext) -> dict[str, Any]:
        return _run(ctx, operation, {"pane_id": args["pane"]})

    return handler


def _pane_read(args: Args, ctx: ToolContext) -> dict[str, Any]:
    params = {
        "pane_id": args["pane"],
        "source": args.get("source", "recent"),
        "lines": args.get("lines"),
    }
    return _run(ctx, "pane.read", params)


def _pane_split(args: Args, ctx: ToolContext) -> dict[str, Any]:
    params = {
        "target_pane_id": args["pane"],
        "direction": args["direction"],
        "ratio": args.get("ratio"),
        "cwd": args.get("cwd"),
        "env": _env(args),
        "focus": False,
    }
    guard = _env_refused(args, "pane.split", params)
    return guard or _run(ctx, "pane.split", params)


def _pane_run(args: Args, ctx: ToolContext) -> dict[str, Any]:
    command = str(args["command"])
    params = {"pane_id": args["pane"], "command": command}
    target = {"pane": args["pane"], "command": redacted(command)}
    guard = _preview(args, "pane.run", params, "pane.run", target, [command])
    return guard or _run(ctx, "pane.run", params, secrets=[command])


def _pane_wait_output(args: Args, ctx: ToolContext) -> dict[str, Any]:
    kind = "regex" if args.get("regex") else "substring"
    params = {
        "pane_id": args["pane"],
        "source": args.get("source", "recent"),
        "lines": args.get("lines"),
        "match": {"type": kind, "value": args["pattern"]},
        "timeout_ms": args.get("timeout", DEFAULT_OUTPUT_WAIT_MS),
    }
    return _run(ctx, "pane.wait_for_output", params)


#: Characters that can submit a line in a terminal program: Enter is CR or LF, readline also
#: runs the line on C-o or C-x C-e, and a user may bind any control key (ESC starts key
#: sequences). So every C0 control character except TAB makes a text R2 (DEL and C1 do not).
_SUBMITS = control_pattern(keep="\t" + C1)


def _send_text_effect(args: Args) -> Effect:
    """A text holding a line break (or another control character but TAB) executes what was
    typed: it runs, like ``pane_run`` (R2: the kill switch, preview gate and ``allowCwd``)."""
    return "run" if _SUBMITS.search(str(args.get("text", ""))) else "type"


def _pane_send_text(args: Args, ctx: ToolContext) -> dict[str, Any]:
    text = str(args["text"])
    params = {"pane_id": args["pane"], "text": text}
    submits = _send_text_effect(args) == "run"
    target = {"pane": args["pane"], "text": redacted(text), "submits": submits}
    guard = _preview(args, "pane.send_text", params, "pane.send_text", target, [text])
    return guard or _run(ctx, "pane.send_text", params, secrets=[text])


def _agent_list(args: Args, ctx: ToolContext) -> dict[str, Any]:
    return _run(ctx, "agent.list", {})


def _agent_get(args: Args, ctx: ToolContext) -> dict[str, Any]:
    return _run(ctx, "agent.get", {"target": args["agent"]})


def _agent_read(args: Args, ctx: ToolContext) -> dict[str, Any]:
    params = {"target": args["agent"], "source": "recent-unwrapped", "lines": args.get("lines")}
    result = _run(ctx, "agent.read", params)
    if result.get("errorCode") != "agent_not_idle" or params["lines"] is None:
        return result
    # Herdr cannot capture the alternate-screen history of a busy agent ("Wait and retry, or
    # use --source visible"): read the visible screen instead, and say so in the result.
    reason = str(((result.get("data") or {}).get("error") or {}).get("message", ""))
    visible = _run(ctx, "agent.read", {**params, "source": "visible"})
    if visible["ok"] and isinstance(visible.get("data"), dict):
        visible["data"]["fallback"] = {"source": "visible", "reason": reason}
    return visible


def _agent_start(args: Args, ctx: ToolContext) -> dict[str, Any]:
    native = [str(a) for a in args.get("args", [])]
    params = {
        "name": args["name"],
        "kind": args["kind"],
        "pane_id": args["pane"],
        "args": native or None,
        "timeout_ms": args.get("timeout"),
    }
    target = {
        "name": args["name"],
        "kind": args["kind"],
        "pane": args["pane"],
        "args": f"<redacted: {len(native)} args>",
    }
    guard = _preview(args, "agent.start", params, "agent.start", target, native)
    return guard or _run(ctx, "agent.start", params, secrets=native)


def _agent_wait(args: Args, ctx: ToolContext) -> dict[str, Any]:
    params = {
        "target": args["agent"],
        "until": args.get("until"),
        "timeout_ms": args.get("timeout", DEFAULT_AGENT_WAIT_MS),
    }
    return _run(ctx, "agent.wait", params)


def _agent_prompt(args: Args, ctx: ToolContext) -> dict[str, Any]:
    prompt = str(args["prompt"])
    params: dict[str, Any] = {"target": args["agent"], "text": prompt}
    if args.get("wait", True):
        wait: dict[str, Any] = {"timeout_ms": args.get("timeout", DEFAULT_AGENT_WAIT_MS)}
        if args.get("until"):
            wait["until"] = list(args["until"])
        params["wait"] = wait
    target = {"agent": args["agent"], "prompt": redacted(prompt)}
    guard = _preview(args, "agent.prompt", params, "agent.prompt", target, [prompt])
    return guard or _run(ctx, "agent.prompt", params, secrets=[prompt])


def _agent_explain(args: Args, ctx: ToolContext) -> dict[str, Any]:
    return _run(ctx, "agent.explain", {"target": args["agent"]})


def _doctor(args: Args, ctx: ToolContext) -> dict[str, Any]:
    from orchestrator.tools.doctor import doctor

    return doctor(ctx, _run)


# -- the table ---------------------------------------------------------------------------------


def _tool(
    name: str, risk: Risk, description: str, schema: dict[str, Any], handler: Any, traits: Traits
) -> Tool:
    return Tool(f"_dsh_herdr_{name}", risk, description, schema, handler, traits)


LOW_LEVEL_TOOLS: tuple[Tool, ...] = (
    _tool(
        "workspace_list",
        "R0",
        "List Herdr workspaces (`herdr workspace list`). Start here: use only ids returned "
        "by Herdr, never guess them.",
        _schema(),
        _workspace_list,
        Traits(),
    ),
    _tool(
        "workspace_get",
        "R0",
        "Get one workspace (`herdr workspace get`) to confirm it exists and see its tabs "
        "and panes counts.",
        _schema(["workspace"], workspace=_WORKSPACE),
        _workspace_get,
        Traits(),
    ),
    _tool(
        "workspace_create",
        "R1",
        "Create an isolated workspace for a task in `cwd` without taking the user's focus "
        "(`herdr workspace create --no-focus`). Save the returned workspace, tab and "
        "root_pane ids.",
        _schema(["cwd"], cwd=_CWD, label=_LABEL, env=_ENV),
        _workspace_create,
        Traits(effect="create", cwd="cwd"),
    ),
    _tool(
        "tab_list",
        "R0",
        "List tabs (`herdr tab list`), optionally of one workspace.",
        _schema(workspace=_WORKSPACE),
        _tab_list,
        Traits(),
    ),
    _tool(
        "tab_get",
        "R0",
        "Get one tab (`herdr tab get`).",
        _schema(["tab"], tab=_TAB),
        _tab_get,
        Traits(),
    ),
    _tool(
        "tab_create",
        "R1",
        "Create a tab in an existing workspace (confirm it with workspace_get first) without "
        "taking focus (`herdr tab create --no-focus`). Returns the tab and its root pane.",
        _schema(["workspace", "cwd"], workspace=_WORKSPACE, cwd=_CWD, label=_LABEL, env=_ENV),
        _tab_create,
        Traits(effect="create", cwd="cwd"),
    ),
    _tool(
        "pane_list",
        "R0",
        "List panes (`herdr pane list`), optionally of one workspace.",
        _schema(workspace=_WORKSPACE),
        _pane_list,
        Traits(),
    ),
    _tool(
        "pane_get",
        "R0",
        "Get one pane (`herdr pane get`): ids, cwd, agent and agent_status.",
        _schema(["pane"], pane=_PANE),
        _by_pane("pane.get"),
        Traits(),
    ),
    _tool(
        "pane_layout",
        "R0",
        "Layout geometry of the pane's tab (`herdr pane layout`): rects and splits.",
        _schema(["pane"], pane=_PANE),
        _by_pane("pane.layout"),
        Traits(),
    ),
    _tool(
        "pane_process_info",
        "R0",
        "Processes of a pane (`herdr pane process-info`): check the shell is idle (alone in "
        "the foreground) before pane_run or agent_start.",
        _schema(["pane"], pane=_PANE),
        _by_pane("pane.process_info"),
        Traits(),
    ),
    _tool(
        "pane_edges",
        "R0",
        "Which edges of the tab area a pane touches (`herdr pane edges`).",
        _schema(["pane"], pane=_PANE),
        _by_pane("pane.edges"),
        Traits(),
    ),
    _tool(
        "pane_read",
        "R0",
        "Read a pane's text (`herdr pane read`). source: visible (the screen), recent "
        "(recent output, soft-wrapped), recent-unwrapped (best for logs and agent results), "
        "detection (agent-detection buffer). The text is in `stdout`.",
        _schema(["pane"], pane=_PANE, source=_SOURCE, lines=_LINES),
        _pane_read,
        Traits(),
    ),
    _tool(
        "pane_split",
        "R1",
        "Split a pane right or down (`herdr pane split --no-focus`); focus stays where it "
        "was. Returns the NEW pane; use its id.",
        _schema(
            ["pane", "direction"],
            pane=_PANE,
            direction={
                "enum": ["right", "down"],
                "description": "right: the new pane beside this one; down: below it",
            },
            ratio={
                "type": "number",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1,
                "description": "Share of the space kept by the original pane; Herdr clamps "
                "it to 0.1-0.9 (0.05 splits as 0.1).",
            },
            cwd=_CWD,
            env=_ENV,
        ),
        _pane_split,
        Traits(effect="create", cwd="cwd", inherits_cwd_of="pane"),
    ),
    _tool(
        "pane_run",
        "R2",
        "Run a shell command in a pane and press Enter (`herdr pane run`); it runs in that "
        "terminal, not locally. Only for commands the user asked for, in a pane that is an "
        "idle shell; one command at a time; then use pane_wait_output or pane_read. "
        "preview: true shows what would run without running it.",
        _schema(
            ["pane", "command"],
            pane=_PANE,
            command=_str("The shell command line to type."),
            preview=_PREVIEW,
        ),
        _pane_run,
        Traits(effect="run", pane="pane", preview="preview", lock=("pane",)),
    ),
    _tool(
        "pane_wait_output",
        "R0",
        "Wait until a line of the pane's output contains `pattern` (or matches it as a "
        "regex with regex: true) (`herdr pane wait-output`). Times out after `timeout` ms "
        f"(default {DEFAULT_OUTPUT_WAIT_MS}); on timeout read the pane before waiting again.",
        _schema(
            ["pane", "pattern"],
            pane=_PANE,
            pattern=_str("Text to find (or a regex, one line at a time)."),
            regex={
                "type": "boolean",
                "description": "Treat pattern as a regex in Rust's `regex` dialect (no "
                "look-around, no backreferences; invalid ones fail invalid_regex).",
            },
            source=_SOURCE,
            lines=_LINES,
            timeout=_ms("How long to wait"),
        ),
        _pane_wait_output,
        Traits(),
    ),
    _tool(
        "pane_send_text",
        "R1",
        "Type raw text into a pane WITHOUT pressing Enter (`herdr pane send-text`); use "
        "pane_run when Enter is needed. A text holding a line break (or another control "
        "character but TAB) submits it, so it counts as R2: preview and gates apply.",
        _schema(
            ["pane", "text"],
            pane=_PANE,
            text=_str("The text to type."),
            preview={
                **_PREVIEW,
                "description": "true: type nothing; return what would be typed. Needed under "
                f"{PREVIEW_REQUIRED_ENV} when the text holds a line break (that makes it R2).",
            },
        ),
        _pane_send_text,
        Traits(
            effect="type",
            effect_of=_send_text_effect,
            pane="pane",
            preview="preview",
            lock=("pane",),
        ),
    ),
    _tool(
        "agent_list",
        "R0",
        "List the agents Herdr recognises (`herdr agent list`), with their status.",
        _schema(),
        _agent_list,
        Traits(),
    ),
    _tool(
        "agent_get",
        "R0",
        "Get one agent by its unique name or pane id (`herdr agent get`).",
        _schema(["agent"], agent=_AGENT),
        _agent_get,
        Traits(targets=("agent",)),
    ),
    _tool(
        "agent_read",
        "R0",
        "Read an agent's recent output, unwrapped (`herdr agent read --source "
        "recent-unwrapped`). The text is in `stdout`. When Herdr cannot read `lines` of a "
        "busy full-screen agent (agent_not_idle), the visible screen is read instead and "
        "`data.fallback` says so.",
        _schema(["agent"], agent=_AGENT, lines=_LINES),
        _agent_read,
        Traits(targets=("agent",)),
    ),
    _tool(
        "agent_start",
        "R2",
        "Start a coding agent of `kind` named `name` in an idle shell pane (`herdr agent "
        "start`) and wait until it is ready for prompts. Only when the user asked for it. "
        "`args` are passed to the agent's executable. preview: true shows what would start.",
        _schema(
            ["name", "kind", "pane"],
            name=_str(
                "New unique agent name: a lowercase letter, then lowercase letters, digits, "
                "'-' or '_' (at most 32).",
                pattern=AGENT_NAME_PATTERN,
            ),
            kind={"enum": list(AGENT_KINDS), "description": "Which agent to start."},
            pane=_PANE,
            args={
                "type": "array",
                "items": {"type": "string", "pattern": NO_NUL},
                "description": "Native arguments for the agent executable.",
            },
            timeout=_ms(
                "How long to wait for readiness (Herdr's bounds: more than 3000, at most "
                "300000; default 30000)",
                minimum=AGENT_START_MIN_MS,
                maximum=AGENT_START_MAX_MS,
            ),
            preview=_PREVIEW,
        ),
        _agent_start,
        Traits(
            effect="start",
            kind="kind",
            name="name",
            pane="pane",
            preview="preview",
            agent_args=("args",),
        ),
    ),
    _tool(
        "agent_wait",
        "R0",
        "Wait until an agent reaches a status (`herdr agent wait`; default idle, done or "
        f"blocked). Times out after `timeout` ms (default {DEFAULT_AGENT_WAIT_MS}).",
        _schema(["agent"], agent=_AGENT, until=_UNTIL, timeout=_ms("How long to wait")),
        _agent_wait,
        Traits(targets=("agent",)),
    ),
    _tool(
        "agent_prompt",
        "R2",
        "Send a task to an agent and wait until it settles (`herdr agent prompt --wait`). "
        "Only for tasks the user asked for; afterwards read the result with agent_read. "
        "preview: true shows what would be sent without sending it.",
        _schema(
            ["agent", "prompt"],
            agent=_AGENT,
            prompt=_str("The task text."),
            wait={"type": "boolean", "description": "Wait for the agent to settle (default)."},
            until=_UNTIL,
            timeout=_ms("How long to wait for the agent to settle"),
            preview=_PREVIEW,
        ),
        _agent_prompt,
        Traits(
            effect="prompt",
            agent_pane="agent",
            targets=("agent",),
            preview="preview",
            lock=("agent",),
        ),
    ),
    _tool(
        "agent_explain",
        "R0",
        "Explain how Herdr detected an agent's state (`herdr agent explain --json`).",
        _schema(["agent"], agent=_AGENT),
        _agent_explain,
        Traits(targets=("agent",)),
    ),
    _tool(
        "doctor",
        "R0",
        "Health check: server version and protocol, sessions, workspaces and agents. Run it "
        "first when anything fails with server_not_running or protocol_mismatch.",
        _schema(),
        _doctor,
        Traits(),
    ),
)
