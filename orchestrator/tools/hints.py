"""The MCP behaviour hints of a tool (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
``openWorldHint``), derived from its risk level and its name.

Why apart from the MCP server: the hints are facts about a tool, documented with it (the
generated low-level-tools.md shows them) and decided once for every tool in the registry,
including tools added later; the server (:mod:`orchestrator.mcp_server`) only spells them in the
SDK's types. Nothing here imports the SDK.

* **R0** reads: nothing changes, so calling twice is harmless, and the world is Herdr alone.
* **R1** adds (a workspace, a tab, a split, typed text) but removes nothing; twice creates
  twice. An R1 tool whose name says it ends something (``close``, ``interrupt``, ``kill``,
  ``remove``, ``delete``, ``stop``: ``herdr_close_agent`` closes a pane and may remove a
  worktree, ``herdr_interrupt_agent`` aborts a turn) is destructive, and idempotent: a second
  call finds it already ended.
* **R2** runs arbitrary commands or agents: destructive as far as a client can know, and
  open-world.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from orchestrator.core.tool import ENDING_WORDS

if TYPE_CHECKING:
    from orchestrator.core.tool import Tool

_BY_RISK: Mapping[str, Mapping[str, bool]] = {
    "R0": {"read_only": True, "destructive": False, "idempotent": True, "open_world": False},
    "R1": {"read_only": False, "destructive": False, "idempotent": False, "open_world": False},
    "R2": {"read_only": False, "destructive": True, "idempotent": False, "open_world": True},
}
#: the hints' MCP names, in the order the docs list them
MCP_NAMES: Mapping[str, str] = {
    "read_only": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "open_world": "openWorldHint",
}


def hints_for(tool: Tool) -> dict[str, bool]:
    """``tool``'s hints: its risk level's, refined by its name (module docstring)."""
    hints = dict(_BY_RISK[tool.risk])
    words = tool.name.lower().split("_")
    if tool.risk == "R1" and any(word in words for word in ENDING_WORDS):
        hints.update(destructive=True, idempotent=True)
    return hints


def hint_names(tool: Tool) -> list[str]:
    """The MCP names of the hints that are true for ``tool`` (for the docs)."""
    return [MCP_NAMES[key] for key, on in hints_for(tool).items() if on]


__all__ = ["ENDING_WORDS", "MCP_NAMES", "hint_names", "hints_for"]
