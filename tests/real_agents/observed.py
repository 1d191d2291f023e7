"""What the real-agent tests read back, shared by test_claude, test_codex, test_opencode and
test_pi: the pane's agent statuses from the server's events, a JSONL file's entries, and
Herdr's own screen-detection manifests the agents are detected with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_herdr.real_agents import RealAgent
from tests.contract_check import contracts_dir

__all__ = ["MANIFESTS", "SEEN", "entries", "statuses"]

#: Herdr's own screen-detection manifests, read in place
MANIFESTS = contracts_dir() / "agent-detection"
#: Seconds a scripted answer of a screen-detected agent takes, so its working screen is up
#: long enough for detection to see it: a turn over before the next look is idle to idle,
#: which `agent prompt --wait` reports as `agent_prompt_stalled` (as Herdr would).
SEEN = 1.0


def statuses(agent: RealAgent) -> list[str]:
    """The pane's agent statuses as the server's events told them, in order."""
    assert agent.server.events is not None
    return [
        e.data.get("agent_status", "")
        for e in agent.server.events.of("pane.agent_status_changed")
        if e.data.get("pane_id") == agent.pane.pane_id
    ]


def entries(path: Path) -> list[dict[str, Any]]:
    """Every JSON line of ``path`` (a session file, a rollout), in order."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
