"""The tool layer: the 24 low-level Herdr tools of the dsh-herdr contract and their registry.

Tool functions return plain JSON-able dicts (the result contract of :mod:`.result`) and never
import an MCP SDK: serving them is :mod:`orchestrator.mcp_server`'s job.
"""

from __future__ import annotations
