"""What the controller says about an agent is true: a delivered or closed agent is never
listed ``lost`` nor the subject of a "still lost" attention, and ``agent_close`` of one that
no longer runs says what became of it.

End to end on the simulator with fake pi children (the controller outside Herdr, so
``agent_list`` is the pull path and kept attention shows in it).
"""

from __future__ import annotations

from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.managed import supervisor
from orchestrator.managed.background import ControllerBackground
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import wait_until

pytestmark = FAST_AGENTS

herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world


def _delivering_list(world: ManagedWorld, label: str) -> dict[str, Any]:
    """The ``agent_list`` answer that delivered ``label``'s result."""

    def delivering() -> dict[str, Any] | None:
        listed = world.ok("agent_list")
        kinds = [(d["kind"], d["agent"]) for d in listed["deliveries"]]
        return listed if ("result", label) in kinds else None

    return wait_until(delivering, 15, interval=0.05, what=f"the result of {label}")


def test_the_list_that_delivers_a_result_does_not_list_the_agent_lost(
    world: ManagedWorld,
) -> None:
    world.scenario(Scenario().reply("scouted"))
    world.ok("agent_delegate", definition="scout", task="look", label="scout1")
    listed = _delivering_list(world, "scout1")
    assert [a for a in listed["agents"] if a.get("agent") == "scout1"] == []
    assert listed["attention"] == []
    assert "lost" not in listed["text"]


def test_agent_close_after_delivery_says_it_was_delivered(world: ManagedWorld) -> None:
    world.scenario(Scenario().reply("done"))
    started = world.ok("agent_delegate", definition="scout", task="look", label="longscan")
    _delivering_list(world, "longscan")
    error = world.refused("agent_close", "target_not_found", agent="longscan")
    assert error["message"] == (
        "Agent longscan is not running: it delivered its result and was cleaned up "
        "(pane closed, mailbox removed)"
    )
    assert error["details"] == {"status": "delivered"}
    assert started["session_path"] in error["nextAction"]


def test_a_delivered_agent_whose_cleanup_failed_is_settling_not_lost(
    world: ManagedWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pane closed after delivery but the mailbox could not be removed: the result was
    delivered, so the agent is ``settling`` (closable to finish the cleanup) and no health
    scan calls it lost."""

    def refuse(_path: object) -> None:
        raise OSError("mailbox busy")

    monkeypatch.setattr(supervisor, "remove_mailbox", refuse)
    world.scenario(Scenario().reply("half cleaned"))
    world.ok("agent_delegate", definition="scout", task="look", label="half")
    _delivering_list(world, "half")
    record = world.agent("half")
    assert record is not None
    assert record["state"] == "settling", record
    assert "mailbox busy" in record["cleanup_error"]
    assert "agent_close" in record["available_tools"]
    background = ControllerBackground(world.service)
    background.monitor.run_once()
    assert background.kept_attention() == []
    monkeypatch.undo()
    # agent_close's reconcile finishes the cleanup first, then says it was delivered
    error = world.refused("agent_close", "target_not_found", agent="half")
    assert error["details"] == {"status": "delivered"}
    assert world.agent("half") is None


def test_kept_lost_attention_goes_once_the_agent_is_closed(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="scout", task="x", label="victim")
    world.wait_state("victim", "working")
    world.client.pane_close(started["pane_id"])
    world.wait_state("victim", "lost")
    background = ControllerBackground(world.service)
    world.service.attention_source = background.kept_attention
    attention = background.monitor.run_once()
    assert attention is not None and attention.reason == "lost"
    assert [a["reason"] for a in world.ok("agent_list")["attention"]] == ["lost"]
    world.ok("agent_close", agent="victim")
    listed = world.ok("agent_list")
    assert listed["attention"] == []
    assert "still lost" not in listed["text"]


def test_every_record_with_activity_evidence_carries_stale_and_inactive_ms(
    world: ManagedWorld,
) -> None:
    world.scenario(Scenario().hang())
    world.ok("agent_delegate", definition="scout", task="x", label="busy")
    record = world.wait_state("busy", "working")
    assert record["stale"] is False
    assert isinstance(record["inactive_ms"], int) and record["inactive_ms"] >= 0
    assert isinstance(record["last_activity_at"], float)


def test_a_result_delivery_carries_its_elapsed_time_and_token_usage(world: ManagedWorld) -> None:
    world.scenario(Scenario().reply("counted"))
    started = world.ok("agent_delegate", definition="scout", task="count", label="counter")
    delivery = world.wait_delivery("result", "counter")
    assert isinstance(delivery["elapsed_ms"], int) and delivery["elapsed_ms"] >= 0
    # the fake pi records usage of 10 in / 5 out per assistant message, as pi does
    assert delivery["tokens"]["input"] > 0 and delivery["tokens"]["output"] > 0
    assert delivery["tokens"]["total"] == delivery["tokens"]["input"] + delivery["tokens"]["output"]
    assert started["session_path"]
