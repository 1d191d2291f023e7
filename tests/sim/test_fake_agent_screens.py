"""Each fake kind's idle, working and blocked screens, classified by the detection engine.

The engine (``herdr_sim.detection``) runs Herdr's own manifests, unmodified, from the shared
contracts directory, on the detection snapshot and terminal title of the fake's pty.
pi's manifest has no blocked rule: a blocked pi is reported over the socket, and its
screen must then merely not look busy (the known-agent idle fallback).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from herdr_sim.fake_agent import Scenario
from tests.sim.test_fake_agent import Running, World, world
from tests.waits import wait_until

detect = pytest.importorskip("herdr_sim.detection.engine")

__all__ = ["world"]

MANIFESTS = Path(__file__).resolve().parents[3] / "shared" / "contracts" / "agent-detection"

#: Text that is on screen in each state, per kind (to know when to classify).
MARKERS = {
    "pi": ("─" * 20, "Working...", "? Proceed?"),
    "claude": ("❯", "esc to interrupt", "Do you want to proceed?"),
    "codex": ("›", "esc to interrupt", "Allow command?"),
    "opencode": ("╹▀▀▀", "esc interrupt", "Permission required"),
}
BLOCKED = {"pi": "idle", "claude": "blocked", "codex": "blocked", "opencode": "blocked"}


def classify(agent: Running, kind: str) -> str:
    manifests = detect.load_manifests(MANIFESTS)
    with agent.lock:
        screen = agent.term.read("detection")[0]
        title = agent.term.title or ""
    state: str = manifests.detect(kind, screen, osc_title=title).state
    return state


@pytest.mark.parametrize("kind", ["pi", "claude", "codex", "opencode"])
def test_screens_classify_as_the_intended_state(world: World, kind: str) -> None:
    idle, working, blocked = MARKERS[kind]
    scenario = Scenario().wait(1000).ask("Proceed?").reply("done")
    agent = world.start(kind, "--scenario", world.scenario(scenario), herdr=False)
    agent.wait_screen(idle)
    assert classify(agent, kind) == "idle"
    agent.prompt("go")
    agent.wait_screen(working)
    # the marker can be on screen a moment before the rest of the working screen is drawn
    wait_until(lambda: classify(agent, kind) == "working", 1, 0.02, f"{kind} working")
    agent.wait_screen(blocked)
    wait_until(lambda: classify(agent, kind) == BLOCKED[kind], 1, 0.02, f"{kind} blocked")
    agent.prompt("yes")
    agent.wait_screen("done")
    wait_until(lambda: classify(agent, kind) == "idle", 1, 0.02, f"{kind} idle again")
