"""Tests of the orchestrator package: client, tools, MCP server and command."""

from __future__ import annotations
