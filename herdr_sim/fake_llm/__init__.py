"""A scripted fake LLM server for running real coding agents offline in tests.

Real agents (pi, Claude Code, Codex, opencode) talk to a provider over HTTP; pointing them at
this server instead makes every model answer a test's decision and every request the agent
sent a thing a test can assert on. It speaks OpenAI chat completions, OpenAI Responses and
Anthropic messages, whole or streamed. See docs/simulator/real-agents.md.
"""

from __future__ import annotations

from .script import Match, Script, ScriptError, ToolCall, Turn
from .server import FakeLLM, RecordedRequest

__all__ = ["FakeLLM", "Match", "RecordedRequest", "Script", "ScriptError", "ToolCall", "Turn"]
