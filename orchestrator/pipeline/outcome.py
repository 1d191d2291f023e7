"""Did a tool call fail? The one rule behind MCP ``isError`` and ``call``'s exit status.

Why one place: a host shows ``isError`` to the model and the user as "this did not work", and a
script reads the exit status of ``herdr-orchestrator call`` the same way. If the two disagreed,
or disagreed with the result's own words, a success would read as an error (the bug this module
replaced: every agent-tool result lacked ``ok`` and so was flagged an error). The rule has one
branch per tool family, each family's own contract:

- The low-level ``_dsh_herdr_*`` tools (seed 001): the call failed exactly when ``ok`` is not
  ``true``.
- The agent tools ``herdr_*`` (seed 000): see :func:`orchestrator.agent_tools.contract.is_failure`.
  A refusal or a failure (``status: failed``, or an ``error`` set, e.g. ``PANE_GONE``,
  ``AGENT_WORKING``) failed; every other AgentResult (``completed``, ``running``, ``blocked``,
  the ``gone`` of a close, an observation) and every page (list, inbox, read, doctor) is a
  result to read, not an error.

- The managed-agent tools ``agent_*`` (seed 002) answer ``{ok, action, text, …}`` and follow
  the low-level rule: a failure is ``ok: false`` with a structured ``error``.

A tool outside the registry (a test's, an embedder's) follows the low-level rule. The document
is docs/orchestrator/result-contract.md ("Errors and isError").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.agent_tools.contract import is_failure
from orchestrator.agent_tools.tools import AGENT_TOOLS

__all__ = ["call_failed", "is_agent_tool"]


def is_agent_tool(name: str) -> bool:
    """Whether ``name`` is one of the nine agent tools (they answer in the AgentResult family)."""
    return name in AGENT_TOOLS


def call_failed(tool: str, result: Mapping[str, Any]) -> bool:
    """Whether ``tool``'s ``result`` reports a failure (``isError``, exit status 1)."""
    if is_agent_tool(tool):
        return is_failure(result)
    return result.get("ok") is not True
