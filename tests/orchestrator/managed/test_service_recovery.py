"""Crash windows, foreign records and health attention of the controller, on the simulator.

A server may die at any step; these tests leave the durable state as a crash at that step
would and check what a new controller makes of it: nothing delivered twice, an interrupted
launch visible and closable, a record of another controller never actionable, and the
background health monitor keeping attention for the pull path.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.managed import projection
from orchestrator.managed.background import ControllerBackground, health_observations
from orchestrator.managed.clock import ManualClock
from orchestrator.managed.mailbox import Box, Kind, Mailbox
from orchestrator.managed.store import Generation
from orchestrator.managed.tools import BACKGROUND_KEY, enable_background
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.managed.test_tools import offline_ctx
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import wait_until

pytestmark = FAST_AGENTS


#: the fixtures of a managed world (a simulator whose fake pis play the world's scenario)
herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world


def test_a_crash_mid_delivery_never_delivers_again(world: ManagedWorld) -> None:
    """The record says "delivering" (the server died before "delivered"): a new controller
    marks it delivered with ``delivery_uncertain`` and cleans up; it delivers nothing."""
    world.scenario(Scenario().reply("maybe seen"))
    started = world.ok("agent_delegate", definition="scout", task="x", label="crash")
    service = world.service
    mailbox = Mailbox(service.store.root, started["workspace_id"], "crash")
    wait_until(
        lambda: any(m.kind is Kind.RESULT for m in mailbox.pending(Box.TO_OWNER)),
        10,
        what="the result record",
    )
    with service.store.locked():
        record = service.store.load(started["run_id"])
        record = service.supervisor._persist(record, mailbox.pending(Box.TO_OWNER)[0])
        service.store.update(record, extra={"delivering": record.result_request_id})
    world.restart()
    listed = world.ok("agent_list")
    assert listed["deliveries"] == []
    assert world.agent("crash") is None
    after = world.service.store.load(started["run_id"])
    assert after.status == "delivered" and after.extra["delivery_uncertain"] is True
    assert world.service.results.is_delivered(started["request_id"])


def test_an_interrupted_launch_without_a_pane_is_closed_with_evidence(
    world: ManagedWorld,
) -> None:
    """A ``starting`` record no process launches any more (here: none recorded) is resolved
    by the next controller's first pass: closed with what was found, its label free."""
    service = world.service
    now = time.time()
    run_id = str(uuid.uuid4())
    service.store.save(
        Generation(
            run_id=run_id,
            label="halfway",
            definition="scout",
            owner_session_id=service.controller_id,
            workspace_id="w9",
            cwd=str(world.root),
            mailbox=str(Mailbox(service.store.root, "w9", "halfway").path),
            status="starting",
            created_at=now,
            updated_at=now,
            agent_name="halfway_0000000000000000",
        )
    )
    world.restart()
    assert world.agent("halfway") is None
    resolved = world.service.store.load(run_id)
    assert resolved.status == "failed"
    assert resolved.diagnostic == (
        "launch interrupted (the launch never created a pane); its task was never posted"
    )
    error = world.refused("agent_close", "target_not_found", agent="halfway")
    assert error["details"] == {"status": "failed"}


def test_another_controllers_record_is_never_actionable(world: ManagedWorld) -> None:
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="scout", task="x", label="theirs")
    service = world.service
    record = service.store.load(started["run_id"])
    service.store.update(record, owner_session_id=str(uuid.uuid4()))
    assert world.agent("theirs") is None  # not in this controller's projection
    error = world.refused("agent_close", "target_not_found", agent="theirs")
    assert error["message"] == "Agent belongs to another owner session"
    world.refused("agent_steer", "target_not_found", agent="theirs", message="x")


def test_transcript_before_the_session_file_exists_is_busy_with_guidance(
    world: ManagedWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pi names its session file before it writes it: meanwhile agent_transcript is not
    listed, and a call is ``agent_busy`` saying this is expected and not to poll."""
    world.scenario(Scenario().hang())
    world.ok("agent_delegate", definition="scout", task="x", label="early")
    monkeypatch.setattr(projection, "session_materialized", lambda _path: False)
    record = world.wait_state("early", "working")
    assert "agent_transcript" not in record["available_tools"]
    error = world.refused("agent_transcript", "agent_busy", agent="early")
    assert "Do not poll" in error["nextAction"]


def test_health_attention_for_a_lost_agent_is_kept_for_the_pull_path(
    world: ManagedWorld,
) -> None:
    world.scenario(Scenario().hang())
    started = world.ok("agent_delegate", definition="scout", task="x", label="lostling")
    world.wait_state("lostling", "working")
    service = world.service
    clock = ManualClock()
    background = ControllerBackground(service, clock=clock)
    (observed,) = health_observations(service, clock)
    assert observed.state == "working" and observed.inspect_authorized
    world.client.pane_close(started["pane_id"])
    wait_until(lambda: health_observations(service, clock)[0].lost, 10, what="lost")
    attention = background.monitor.run_once()
    assert attention is not None and attention.reason == "lost"
    listed = world.ok("agent_list")
    assert [a["reason"] for a in listed["attention"]] == ["lost"]
    assert "lostling" in listed["attention"][0]["text"]
    background.stop()


def test_a_restarted_mcp_server_starts_its_background_when_agents_exist(
    world: ManagedWorld,
) -> None:
    """``herdr-orchestrator mcp`` (``enable_background``) builds the controller at once when
    managed state exists, so results are delivered without waiting for a tool call."""
    world.scenario(Scenario().hang())
    world.ok("agent_delegate", definition="scout", task="x", label="bg")
    world.restart()
    assert BACKGROUND_KEY not in world.ctx.derived
    enable_background(world.ctx)
    background = world.ctx.derived[BACKGROUND_KEY]
    try:
        assert isinstance(background, ControllerBackground)
        assert background.service is world.service
        assert background.monitor.running
    finally:
        assert isinstance(background, ControllerBackground)
        background.stop()
    assert not background.monitor.running


def test_a_server_without_managed_state_starts_no_background(tmp_path: Path) -> None:
    ctx = offline_ctx(tmp_path)
    enable_background(ctx)
    assert ctx.derived[BACKGROUND_KEY] is True  # started by the first managed call
    assert not (tmp_path / "state" / "managed").exists()
