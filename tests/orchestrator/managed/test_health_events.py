"""Health attention on the simulator: Herdr lifecycle events make a scan due before the 30 s
fallback, the subscription reconnects, and attention reaches a fake pi owner only while idle.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from orchestrator.managed.attention import AgentObservation
from orchestrator.managed.clock import ManualClock
from orchestrator.managed.health import (
    RESUBSCRIBED_EVENT,
    Capture,
    HealthMonitor,
    LifecycleEvents,
)
from orchestrator.managed.owner import PaneOwner, PullOwner
from pytest_herdr.agents import FakeAgents
from pytest_herdr.backends import HerdrServer
from pytest_herdr.client import HerdrClient as PytestHerdrClient
from pytest_herdr.handles import Pane
from tests.orchestrator.managed.test_health import Agents
from tests.orchestrator.support import FAST_AGENTS, client, received, user_texts
from tests.waits import SCALE, wait_until

pytestmark = FAST_AGENTS


def no_capture(run_id: str) -> Capture | None:
    return None


def test_closing_a_pane_triggers_a_scan_before_the_fallback_interval(
    herdr_server: HerdrServer, herdr_client: PytestHerdrClient, herdr_pane: Pane
) -> None:
    clock = ManualClock(start=0.0)
    agents = Agents()
    health = HealthMonitor(clock=clock, observe=agents, owner=PullOwner(), capture=no_capture)
    events = LifecycleEvents(herdr_server.socket_path, read_timeout_s=0.05)
    health.start(events)
    try:
        wait_until(lambda: health.scans == 1, what="the first scan")
        wait_until(lambda: events.subscriptions == 1, what="the lifecycle subscription")
        clock.wait_for_waiters(1)
        pane = herdr_client.call(
            "pane.split", target_pane_id=herdr_pane.pane_id, direction="right"
        )["pane"]
        herdr_client.call("pane.close", pane_id=pane["pane_id"])
        wait_until(lambda: health.scans == 2, what="the scan the pane.closed event asked for")
        assert clock.now() == 0.0  # no clock time passed: not the 30 s fallback
    finally:
        assert health.stop(timeout=5 * SCALE)
    assert not health.running


def _simulator(root: Path, socket: Path) -> Simulator:
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return Simulator(socket_path=socket, base_env=env, runtime_dir=root / "rt", agent_home=home)


@pytest.fixture
def lifecycle(short_dir: Path) -> Iterator[tuple[LifecycleEvents, list[dict[str, Any]]]]:
    """LifecycleEvents on ``short_dir/h.sock`` (no server yet), read on a thread."""
    events = LifecycleEvents(
        short_dir / "h.sock", first_backoff_s=0.02, max_backoff_s=0.1, read_timeout_s=0.05
    )
    seen: list[dict[str, Any]] = []

    def read() -> None:
        for event in events:
            seen.append(event)  # noqa: PERF402 - one at a time: the test watches it grow

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        yield events, seen
    finally:
        events.close()
        reader.join(5 * SCALE)
        assert not reader.is_alive()


def test_the_subscription_connects_late_and_reconnects_after_a_restart(
    short_dir: Path, lifecycle: tuple[LifecycleEvents, list[dict[str, Any]]]
) -> None:
    events, seen = lifecycle
    socket = short_dir / "h.sock"

    def subscribed(n: int) -> Callable[[], bool]:
        return lambda: events.subscriptions == n

    def closed_events(n: int) -> Callable[[], bool]:
        return lambda: sum(e["event"] == "pane_closed" for e in seen) == n

    for round_ in (1, 2):  # the server appears late; then it restarts at the same path
        sim = _simulator(short_dir / f"s{round_}", socket)
        sim.start()
        try:
            wait_until(subscribed(round_), what=f"subscription {round_}")
            created = sim.call("workspace.create", {"cwd": str(short_dir)})["result"]
            sim.call("pane.close", {"pane_id": created["root_pane"]["pane_id"]})
            wait_until(closed_events(round_), what="the pane_closed event")
        finally:
            sim.stop()
    assert [e["event"] for e in seen if e["event"] == RESUBSCRIBED_EVENT] == [RESUBSCRIBED_EVENT]
    # the reconnect announces itself before the events of the new connection
    assert seen.index({"event": RESUBSCRIBED_EVENT, "data": {}}) < max(
        i for i, e in enumerate(seen) if e["event"] == "pane_closed"
    )


def test_attention_reaches_a_fake_pi_owner_only_while_it_is_idle(
    herdr_server: HerdrServer, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    scenario = herdr_fake_agent.scenario().hang().then().reply("on it")
    lead = herdr_fake_agent.start("pi", scenario, name="lead")
    lead.prompt("plan the work", wait=False)
    lead.wait("working")
    owner = PaneOwner(client(herdr_server, "socket"), lead.pane.pane_id, tmp_path / "spool")
    clock = ManualClock(start=0.0)
    child = AgentObservation(
        run_id="r1",
        label="scout",
        state="blocked",
        active_request_id="q1",
        runtime_blocked=True,
        available_tools=("agent_inspect", "agent_close"),
    )
    health = HealthMonitor(clock=clock, observe=Agents(child), owner=owner, capture=no_capture)
    wire = received(herdr_server)
    assert health.run_once() is None  # the owner is working: nothing is typed
    assert wire.calls("agent.prompt") == []
    assert user_texts(lead) == ["plan the work"]
    lead.send_keys("Escape")
    lead.wait("idle", "done")
    attention = health.run_once()
    assert attention is not None and attention.reason == "blocked"
    texts = wait_until(lambda: user_texts(lead)[1:], what="the attention in the owner's prompt")
    [pointer] = texts
    assert pointer.startswith("Agent attention · agent=scout · reason=blocked [full message: ")
    [spooled] = list((tmp_path / "spool").iterdir())
    body = spooled.read_text(encoding="utf-8")
    assert "Available tools: agent_inspect, agent_close" in body
    assert "Next reminder if unresolved: ~5m 0s" in body
