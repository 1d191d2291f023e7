"""orchestrator: Herdr orchestrator tools (client, low-level and agent tools, MCP server).

Built in later issues (see docs/); this release ships only the package so the distribution
layout is final.
"""

from __future__ import annotations
