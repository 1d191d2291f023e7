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

from orchestrator.tools.tool import Tool, ToolContext

__all__ = [
    "RISK_META_KEY",
    "SERVER_NAME",
    "Runner",
    "annotations_for",
    "build_server",
    "call_result",
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

#: What a model is told about the whole server when it connects (the seed's rules, in short).
INSTRUCTIONS = """\
Tools that drive Herdr, a terminal multiplexer for coding agents.
Every result is a JSON object: ok, command, exitCode, and as needed errorCode, data, stdout,
stderr. ok:false is an answer to act on, not a crash; Herdr's own error is in data.error.code.
Work in this order: list what exists (workspace/tab/pane/agent list), pick real ids from those
results (never build an id yourself), create or split (focus never moves), start an agent if
needed, prompt it, wait, then read. Risk levels: R0 only reads, R1 creates objects or types into
a terminal, R2 runs a command or starts/prompts an agent: call R2 tools only for what the user
clearly asked; preview:true shows what an R2 call would do without doing it.
On errors: server_not_running means ask the user to start Herdr (do not retry); an unknown id
means list again; a timeout means read or get before waiting longer; invalid arguments means fix
the call rather than repeating it. Never copy prompt or command text into a report.
"""

# R0 reads: nothing changes, so calling twice is harmless and the world is Herdr alone.
# R1 adds (a workspace, a tab, a split, typed text) but removes nothing; typing twice types twice.
# R2 runs arbitrary commands or agents: destructive as far as a client can know, and open-world.
_HINTS: Mapping[str, Mapping[str, bool]] = {
    "R0": {"read_only": True, "destructive": False, "idempotent": True, "open_world": False},
    "R1": {"read_only": False, "destructive": False, "idempotent": False, "open_world": False},
    "R2": {"read_only": False, "destructive": True, "idempotent": False, "open_world": True},
}

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
    words = tool.name.removeprefix("_dsh_herdr_").replace("_", " ")
    return f"Herdr {words} ({tool.risk}, {_RISK_WORDS.get(tool.risk, tool.risk)})"


def annotations_for(tool: Tool) -> types.ToolAnnotations:
    """The MCP hints for ``tool``'s risk level (see ``_HINTS`` for the reasoning)."""
    hints = _HINTS[tool.risk]
    return types.ToolAnnotations(
        title=_title(tool),
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


def call_result(result: Mapping[str, Any]) -> types.CallToolResult:
    """A tool's result dict as MCP content.

    The same object twice: as JSON text (what every client shows a model) and as structured
    content (for clients that read fields). ``isError`` mirrors ``ok: false`` so clients and
    models see at once that the call did not do what was asked; the text still carries
    ``errorCode`` and ``data.error`` to act on, per the contract's error-handling order.
    """
    body = _plain(result)
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=body.get("ok") is not True,
    )


def _registry_runner() -> Runner:
    from orchestrator.tools.registry import run_tool

    def run(name: str, arguments: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return run_tool(name, arguments, ctx)

    return run


def _direct_runner(tools: Mapping[str, Tool]) -> Runner:
    """For tools outside the registry: the same checks as ``run_tool``, against their own schema."""
    from jsonschema import Draft202012Validator

    from orchestrator.tools.result import failure

    def run(name: str, arguments: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
        tool = tools[name]
        validator = Draft202012Validator(_plain(tool.input_schema))
        problem = next(iter(validator.iter_errors(dict(arguments))), None)
        if problem is not None:
            return failure(name, "invalid_arguments", problem.message)
        try:
            return tool.handler(arguments, ctx)
        except Exception as exc:  # a handler bug answers as a result, like run_tool
            return failure(name, "internal_error", f"{type(exc).__name__}: {exc}")

    return run


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
        from orchestrator.tools.registry import ALL_TOOLS

        tools = ALL_TOOLS
        run = run or _registry_runner()
    by_name: dict[str, Tool] = dict(
        tools.items() if isinstance(tools, Mapping) else ((t.name, t) for t in tools)
    )
    runner = run or _direct_runner(by_name)
    ctx = context if context is not None else ToolContext.from_env()
    listed = types.ListToolsResult(tools=[mcp_tool(tool) for tool in by_name.values()])

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in by_name:
            # The spec's answer for a tool that does not exist: a protocol error, not a result.
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments: dict[str, Any] = params.arguments if params.arguments is not None else {}
        # Handlers block (socket round trips, CLI subprocesses, server-side waits): keep them off
        # the event loop so other requests and cancellations are still served.
        result = await anyio.to_thread.run_sync(runner, params.name, arguments, ctx)
        return call_result(result)

    return Server(
        SERVER_NAME,
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


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
    """Block serving ``server`` (default: the registry's tools) over stdio."""
    anyio.run(serve_stdio, server if server is not None else build_server())
