"""Serve the orchestrator's tools over MCP (stdio), on the official MCP SDK's low-level server.

The low-level ``Server`` is used rather than the decorator-based one because it lets each tool's
JSON Schema reach clients verbatim: ``additionalProperties: false``, the enums and the required
fields are what the registry wrote, not a schema re-derived from Python signatures.

This is the only module (with the ``mcp`` subcommand of :mod:`orchestrator.cli`) that imports the
SDK; the tools themselves return plain dicts and never see MCP. How a tool and its result are
presented to a client (annotations, ``isError``, structured content) is documented in
docs/orchestrator/mcp.md.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from orchestrator.agent_tools.contract import compact
from orchestrator.core import policy
from orchestrator.core.caller import Caller, calling_as
from orchestrator.core.tool import Tool, ToolContext
from orchestrator.pipeline import call_guard
from orchestrator.pipeline.outcome import call_failed
from orchestrator.tools.hints import hints_for

__all__ = [
    "RISK_META_KEY",
    "SERVER_NAME",
    "CallPools",
    "Runner",
    "annotations_for",
    "build_server",
    "call_result",
    "hints_for",
    "may_block",
    "mcp_caller",
    "mcp_tool",
    "serve_stdio",
]

#: The name the server gives in its ``serverInfo``.
SERVER_NAME = "herdr-orchestrator"

#: The ``_meta`` key of a listed tool that carries its contract risk level (R0, R1, R2) as is,
#: for clients that want the seed's level rather than the MCP hints derived from it.
RISK_META_KEY = "pytest-herdr/risk"

#: Runs one tool call: ``(name, arguments, context) -> result dict``; never raises for a bad call.
Runner = Callable[[str, Mapping[str, Any], ToolContext], dict[str, Any]]

#: What a model is told about the whole server when it connects: which family of tools to use
#: for what, how to read their results, which of the look-alike tools to prefer, the risk rules.
INSTRUCTIONS = """\
Tools that drive Herdr, a terminal multiplexer for coding agents. Two families:

1. Agent tools (herdr_*): hand a task to another coding agent and get back a checked result. Use
these to delegate. herdr_spawn_agent starts an agent (kind pi by default) in its own pane with
your task and, with wait:true (default), returns when it settles. herdr_get_agent_result
harvests a task later (after wait:false or a timeout). herdr_message_agent sends a follow-up
(NOTE), REVIEW_FINDINGS, ACCEPT, REJECT, or the user's ANSWER to a blocked agent. herdr_inbox
reads what children report; herdr_read_agent pages a pi agent's transcript;
herdr_interrupt_agent and herdr_close_agent stop and clean up; herdr_list_agents shows every
agent; herdr_doctor checks the setup. Target a task by its taskId, agent name or pane id.
They answer an AgentResult. Read `header` first. `status`: completed (done: review it), running
(still working: wait), blocked (the agent asks `question`), failed (see `error`), gone (its pane
closed), idle (an agent you did not spawn; observation only). `nextAction` says what to do:
review = read finalMessage, resultText and diff, then ACCEPT, REJECT or REVIEW_FINDINGS with
herdr_message_agent; wait = call herdr_get_agent_result later; ask_user = ask the user the
agent's question and send their reply with herdr_message_agent kind=ANSWER (never answer it
yourself); inspect = read error and evidence before deciding; retry = fix the request
(error.field names the parameter) or wait for capacity; none = nothing to do.
2. Low-level tools (_dsh_herdr_*): one Herdr command each (workspaces, tabs, panes, raw agent
start/prompt/wait/read). Use them for your own panes and commands, not to delegate. They answer
{ok, command, exitCode, errorCode?, data?, stdout?, stderr?}; Herdr's own error is in
data.error.code. List first and use only ids Herdr returned; never build an id.
3. Managed-agent tools (agent_*): pi children you coordinate over time. agent_list
shows your agents with `state` and `available_tools` (call only what it lists) and the
definition roster; agent_delegate starts one assignment from a definition, agent_continue a new
one from a saved session; agent_steer, agent_interrupt, agent_reply (to an ask_owner question),
agent_close, agent_inspect, agent_transcript act on one agent by its label. Results and
questions are delivered once: into your pane when you run in Herdr, else in agent_list's
`deliveries`. They answer {ok, action, text, …}; a failure is {ok:false, error:{category,
message, operation, rollbackOccurred, retryAttempted, nextAction}}.

Look-alikes: herdr_doctor checks everything the agent tools need (Herdr included): prefer it to
_dsh_herdr_doctor, which checks only the Herdr connection. herdr_list_agents marks the agents
you spawned (owned, taskId): prefer it to _dsh_herdr_agent_list. For your tasks' output use
herdr_get_agent_result or herdr_read_agent (the agent's own messages), not _dsh_herdr_agent_read
(raw screen text).

isError is set only for failures and refusals (ok:false; an AgentResult with status failed or
an error); completed, running, blocked and the pages are results to act on. Risk: R0 only
reads, R1 creates or types, R2 runs a command or starts/prompts an agent: call R2 tools only
for what the user clearly asked; low-level R2 tools take preview:true to show what they would
do. server_not_running means ask the user to start Herdr (do not retry); an unknown id means
list again; invalid arguments means fix the call. Never copy prompt or command text into a
report.
"""

LOW_LEVEL_PREFIX = "_dsh_herdr_"
AGENT_PREFIX = "herdr_"
MANAGED_PREFIX = "agent_"

_RISK_WORDS: Mapping[str, str] = {
    "R0": "read-only",
    "R1": "creates or types",
    "R2": "runs commands or agents",
}


def _plain(value: Any) -> Any:
    """A JSON-ready deep copy: mappings become dicts and tuples lists (schemas may be frozen)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _title(tool: Tool) -> str:
    """``Herdr pane read (R0, read-only)``, ``Agents: spawn agent (R2, …)``: family and risk."""
    risk = f"({tool.risk}, {_RISK_WORDS.get(tool.risk, tool.risk)})"
    if tool.name.startswith(LOW_LEVEL_PREFIX):
        return f"Herdr {tool.name.removeprefix(LOW_LEVEL_PREFIX).replace('_', ' ')} {risk}"
    if tool.name.startswith(AGENT_PREFIX):
        return f"Agents: {tool.name.removeprefix(AGENT_PREFIX).replace('_', ' ')} {risk}"
    if tool.name.startswith(MANAGED_PREFIX):
        return f"Managed agents: {tool.name.removeprefix(MANAGED_PREFIX)} {risk}"
    return f"{tool.name.replace('_', ' ')} {risk}"


def annotations_for(tool: Tool) -> types.ToolAnnotations:
    """The MCP hints for ``tool``'s risk level and name (:func:`hints_for`)."""
    hints = hints_for(tool)
    # No annotations.title: the tool's own ``title`` says it, and every listed byte is paid for
    # by the model on every turn (bench/tool_list.py).
    return types.ToolAnnotations(
        read_only_hint=hints["read_only"],
        destructive_hint=hints["destructive"],
        idempotent_hint=hints["idempotent"],
        open_world_hint=hints["open_world"],
    )


def mcp_tool(tool: Tool) -> types.Tool:
    """``tool`` as ``tools/list`` shows it: its schema and description unchanged."""
    return types.Tool(
        name=tool.name,
        title=_title(tool),
        description=tool.description,
        input_schema=_plain(tool.input_schema),
        annotations=annotations_for(tool),
        _meta={RISK_META_KEY: tool.risk},
    )


def call_result(result: Mapping[str, Any], tool: str = "") -> types.CallToolResult:
    """``tool``'s result dict as MCP content.

    The same object twice: as JSON text (what every client shows a model) and as structured
    content (for clients that read fields), in its compact wire form (an AgentResult's ``task``
    keeps only what the top level does not already say: :func:`contract.compact`). ``isError``
    follows the tool family's contract (:func:`orchestrator.pipeline.outcome.call_failed`): set
    for ``ok: false`` and for an agent tool's refusal or failure, never for a result to read
    (``completed``, ``running``, ``blocked``, a page), so a host never shows a success as an
    error. The text still carries the error code to act on.
    """
    body = compact(_plain(result))
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=call_failed(tool, body),
    )


def _registry_runner() -> Runner:
    from orchestrator.pipeline.registry import run_tool

    def run(name: str, arguments: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return run_tool(name, arguments, ctx)

    return run


def _direct_runner(tools: Mapping[str, Tool]) -> Runner:
    """For tools outside the registry: ``run_tool``'s own path (the policy, the target's lock
    and the audit log; schema check, whole-number floats made integers, a handler bug
    answered as a result) over their own schema."""
    from orchestrator.pipeline.call_guard import governed_call
    from orchestrator.pipeline.registry import run_given

    def run(name: str, arguments: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return governed_call(tools[name], arguments, ctx, run_given, tools)

    return run


#: Tools that can block for long whatever their arguments (waits on an agent or on output, a
#: spawn's queue and settle, a message's or an interrupt's settle); ``herdr_inbox`` and
#: ``herdr_get_agent_result`` block when their ``wait`` argument asks for it.
LONG_CALLS: frozenset[str] = frozenset(
    {
        "_dsh_herdr_pane_wait_output",
        "_dsh_herdr_agent_start",
        "_dsh_herdr_agent_wait",
        "_dsh_herdr_agent_prompt",
        "herdr_spawn_agent",
        "herdr_message_agent",
        "herdr_interrupt_agent",
        "herdr_close_agent",
        # managed agents: a launch waits up to 30 s for the child; the others may wait on
        # the controller's lifecycle lock while a launch holds it
        "agent_delegate",
        "agent_continue",
        "agent_steer",
        "agent_interrupt",
        "agent_reply",
        "agent_close",
        "agent_list",
    }
)
#: ``tool → default of its wait argument`` for tools that block only when asked to.
WAIT_ARGUMENT: Mapping[str, bool] = {"herdr_inbox": False, "herdr_get_agent_result": True}
#: Threads for quick calls (reads, creates, a wait:false inbox): they return in milliseconds.
QUICK_THREADS = 32
#: Threads for calls that may block for minutes. Mostly asleep on a socket or a file, so many
#: are cheap; beyond this bound further long calls queue, and quick calls are still served.
LONG_THREADS = 256


def may_block(name: str, arguments: Mapping[str, Any]) -> bool:
    """Whether a call of ``name`` with ``arguments`` may wait for long (seconds to minutes)."""
    if name in LONG_CALLS:
        return True
    if name in WAIT_ARGUMENT:
        return arguments.get("wait", WAIT_ARGUMENT[name]) is not False
    return False


class CallPools:
    """Two bounded pools of worker threads: one for quick calls, one for calls that may block.

    Why: a long wait holds its thread for its whole timeout. Sharing one pool (anyio's default
    limiter of 40, which the SDK's stdio transport also uses to read and write) let forty
    ``herdr_inbox wait:true`` calls starve every other request, ``tools/list`` included. The
    limiters are created on first use, inside the server's event loop.
    """

    def __init__(self, quick: int = QUICK_THREADS, long: int = LONG_THREADS) -> None:
        self._sizes = (quick, long)
        self._limiters: tuple[anyio.CapacityLimiter, anyio.CapacityLimiter] | None = None

    def for_call(self, name: str, arguments: Mapping[str, Any]) -> anyio.CapacityLimiter:
        """The limiter a call of ``name`` runs under."""
        if self._limiters is None:
            quick, long = self._sizes
            self._limiters = (anyio.CapacityLimiter(quick), anyio.CapacityLimiter(long))
        return self._limiters[1 if may_block(name, arguments) else 0]


def build_server(
    tools: Iterable[Tool] | Mapping[str, Tool] | None = None,
    *,
    context: ToolContext | None = None,
    run: Runner | None = None,
) -> Server[Any]:
    """An MCP server exposing ``tools`` (default: the registry's, run by its ``run_tool``).

    ``context`` is shared by every call (its Herdr client is built once, on the first call that
    needs it); by default it is configured from this process's environment. ``run`` replaces the
    runner; without it, tools other than the registry's are validated against their schema here
    and their handler is called directly.
    """
    if tools is None:
        from orchestrator.pipeline.registry import ALL_TOOLS

        tools = ALL_TOOLS
        run = run or _registry_runner()
    by_name: dict[str, Tool] = dict(
        tools.items() if isinstance(tools, Mapping) else ((t.name, t) for t in tools)
    )
    runner = run or _direct_runner(by_name)
    ctx = context if context is not None else ToolContext.from_env()
    shown = {name: mcp_tool(tool) for name, tool in by_name.items()}
    pools = CallPools()

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        # the policy decides what is offered (read per listing: the configuration may change)
        rules = call_guard.policy_of(ctx, by_name)
        return types.ListToolsResult(
            tools=[shown[name] for name, tool in by_name.items() if policy.listed(rules, tool)]
        )

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in by_name:
            # The spec's answer for a tool that does not exist: a protocol error, not a result.
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments: dict[str, Any] = params.arguments if params.arguments is not None else {}
        # Handlers block (socket round trips, CLI subprocesses, server-side waits): keep them off
        # the event loop so other requests and cancellations are still served, and off anyio's
        # default thread limiter, which the SDK's stdio transport needs to read stdin and write
        # stdout: forty long waits on it once froze even tools/list.
        limiter = pools.for_call(params.name, arguments)
        with calling_as(mcp_caller(_ctx)):  # the policy's and the audit log's caller
            result = await anyio.to_thread.run_sync(
                runner, params.name, arguments, ctx, limiter=limiter
            )
        return call_result(result, params.name)

    return Server(
        SERVER_NAME,
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def mcp_caller(request: ServerRequestContext[Any]) -> Caller:
    """The MCP client behind ``request``, as its ``initialize`` named itself."""
    params = request.session.client_params
    info = params.client_info if params is not None else None
    if info is None:
        return Caller("mcp")
    return Caller("mcp", info.name, info.version)


def _version() -> str:
    try:
        return metadata.version("pytest-herdr")
    except metadata.PackageNotFoundError:  # running from a source tree without an install
        return "0"


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on this process's stdin/stdout until the client closes stdin."""
    async with stdio_server() as (read_stream, write_stream):
        # stdout is the wire: a stray print from tool code (even buffered, flushed at exit when
        # the SDK has given fd 1 back) must land on stderr, never inside the protocol.
        with contextlib.redirect_stdout(sys.stderr):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(server: Server[Any] | None = None) -> None:
    """Block serving ``server`` (default: the registry's tools) over stdio.

    The default server also runs the managed-agent controller's background work (result
    delivery and health attention, :mod:`orchestrator.managed.background`): this process
    lives as long as the host session, which is what pushing to an idle owner needs."""
    if server is None:
        from orchestrator.managed.tools import enable_background

        context = ToolContext.from_env()
        enable_background(context)
        server = build_server(context=context)
    anyio.run(serve_stdio, server)
