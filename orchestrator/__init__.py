"""orchestrator: hand work to coding agents in Herdr and get back results you can trust.

The public face (``__all__``; docs/architecture.md lists the public modules):

* the client — :class:`HerdrClient`, :class:`AsyncHerdrClient` (more in
  :mod:`orchestrator.client`: the wire clients and the error families);
* the tools — :data:`ALL_TOOLS` (the 24 low-level ``_dsh_herdr_*`` tools of seed 001, then
  the nine ``herdr_*`` agent tools of seed 000, which answer AgentResults), :func:`run_tool`
  (the one entry point: schema check, then the handler), :class:`Tool`,
  :class:`ToolContext` and the agent tools' :class:`AgentToolsContext`;
* the MCP server — :func:`build_server`, :func:`run_stdio` (``herdr-orchestrator mcp``).

Start with docs/orchestrator/agent-tools.md; MCP hosts: docs/orchestrator/mcp.md. Names
resolve on first use, so ``import orchestrator`` costs next to nothing. Logging: a
:class:`logging.NullHandler` on the ``orchestrator`` logger (:mod:`orchestrator.logs`).
"""

from __future__ import annotations

from orchestrator.client._lazy import lazy_getattr

# `typing` and `logging` cost the simulator's `herdr` CLI its start-up (it imports the base
# layer, orchestrator.client, and so runs this module); mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .agent_tools.context import AgentToolsContext
    from .client.aio import AsyncHerdrClient
    from .client.sync import HerdrClient
    from .core.tool import Tool, ToolContext
    from .mcp_server import build_server, run_stdio
    from .pipeline.registry import ALL_TOOLS, run_tool

# a library never prints on its own: the NullHandler on the ``orchestrator`` logger is
# installed by orchestrator.logs, which every module that logs imports

_LAZY = {
    "HerdrClient": "client.sync",
    "AsyncHerdrClient": "client.aio",
    "ALL_TOOLS": "pipeline.registry",
    "run_tool": "pipeline.registry",
    "Tool": "core.tool",
    "ToolContext": "core.tool",
    "AgentToolsContext": "agent_tools.context",
    "build_server": "mcp_server",
    "run_stdio": "mcp_server",
}

__all__ = [
    "ALL_TOOLS",
    "AgentToolsContext",
    "AsyncHerdrClient",
    "HerdrClient",
    "Tool",
    "ToolContext",
    "build_server",
    "run_stdio",
    "run_tool",
]

__getattr__ = lazy_getattr(__name__, _LAZY)
