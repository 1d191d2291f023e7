"""Unit tests of the agent tools foundations (orchestrator.agent_tools)."""

from __future__ import annotations
