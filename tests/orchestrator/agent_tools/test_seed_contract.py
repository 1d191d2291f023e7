"""The nine agent tools as seed 000 names them: their parameters, required ones, defaults and
caps, read from each tool's input schema (what an MCP client sees) and checked against the
seed's tables, so a schema edit that drifts from the contract fails here."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.agent_tools.tools import AGENT_TOOLS
from orchestrator.pipeline.registry import ALL_TOOLS

#: tool → (required, {parameter: default or None when the seed gives none}); seed 000's tables
SEED: dict[str, tuple[set[str], dict[str, Any]]] = {
    "herdr_spawn_agent": (
        {"prompt"},
        {"prompt": None, "kind": "pi", "model": None, "thinking": None, "name": None,
         "cwd": None, "role": "worker", "wait": True, "timeout_ms": 900_000,
         "agent_args": None, "client_task_id": None, "isolated": False, "machine": None},
    ),
    "herdr_get_agent_result": (
        {"target"},
        {"target": None, "wait": None, "timeout_ms": 600_000, "lines": 80, "machine": None},
    ),
    "herdr_message_agent": (
        {"target", "message"},
        {"target": None, "message": None, "machine": None, "kind": None, "round": 1,
         "wait": False, "timeout_ms": 600_000},
    ),
    "herdr_list_agents": (set(), {"owned_only": False, "machine": None}),
    "herdr_interrupt_agent": ({"target"}, {"target": None}),
    "herdr_inbox": (
        set(),
        {"target": None, "wait": False, "timeout_ms": 30_000, "consume": True, "limit": 50},
    ),
    "herdr_read_agent": ({"target"}, {"target": None, "from": 0, "limit": 20}),
    "herdr_close_agent": (
        {"target"},
        {"target": None, "force": False, "remove_worktree": False},
    ),
    "herdr_doctor": (set(), {}),
}  # fmt: skip
#: Parameters added to the seed's by a later contract: the R2 tools' ``preview`` (seed 001's
#: preview gate, issue 10 §3: spawn and message start or prompt agents).
EXTENSIONS: dict[str, dict[str, Any]] = {
    "herdr_spawn_agent": {"preview": False},
    "herdr_message_agent": {"preview": False},
}


def test_the_nine_tools_in_the_seeds_order_after_the_low_level_ones() -> None:
    assert list(AGENT_TOOLS) == list(SEED)
    # after the 24 low-level tools; the nine managed-agent tools (seed 002) follow them
    assert list(ALL_TOOLS)[24:33] == list(SEED)


@pytest.mark.parametrize("name", list(SEED))
def test_parameters_required_and_defaults_are_the_seeds(name: str) -> None:
    required, seed_params = SEED[name]
    params = {**seed_params, **EXTENSIONS.get(name, {})}
    schema = AGENT_TOOLS[name].input_schema
    assert schema["additionalProperties"] is False
    assert set(schema.get("required", [])) == required
    assert set(schema["properties"]) == set(params)
    for param, default in params.items():
        if default is not None:
            assert schema["properties"][param].get("default") == default, param


def test_message_kinds_are_the_seeds_headers() -> None:
    # (the limits' caps clamp rather than refuse: test_inbox_tool and test_read_agent pin them)
    kinds = AGENT_TOOLS["herdr_message_agent"].input_schema["properties"]["kind"]
    assert set(kinds["enum"]) == {"NOTE", "REVIEW_FINDINGS", "ACCEPT", "REJECT", "ANSWER"}
