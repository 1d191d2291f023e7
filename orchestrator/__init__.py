"""orchestrator: hand work to coding agents in Herdr and get back results you can trust.

``client`` talks to Herdr (socket, CLI, or both); ``tools`` holds the 24 low-level
``_dsh_herdr_*`` tools of seed 001 and the registry; ``agent_tools`` the nine ``herdr_*``
agent tools of seed 000 (spawn, harvest, message, list, interrupt, inbox, read, close,
doctor), which answer AgentResults; ``mcp_server`` serves all 33 over MCP and ``cli`` is the
``herdr-orchestrator`` command. Start with docs/orchestrator/agent-tools.md; MCP hosts:
docs/orchestrator/mcp.md.
"""

from __future__ import annotations
