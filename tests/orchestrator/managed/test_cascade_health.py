"""Health attention for a delegating child's own agents reaches that child, the direct owner.

The lead (this test, outside Herdr) delegates ``boss`` (definition ``helper``), which
delegates ``leaf`` through the tools (see ``test_delegating.py``). The lead's background
keeps one health monitor per direct owner of its cascade: its own (its direct agents) and
one for boss (a pane owner on boss's pane, observing only boss's agents). These tests start
two fake pi children and several ``orchestrator call`` processes, so they take a few
seconds.
"""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

from orchestrator.managed.background import ControllerBackground, health_observations
from orchestrator.managed.clock import ManualClock
from tests.orchestrator.managed import managed_world
from tests.orchestrator.managed.managed_world import ManagedWorld
from tests.orchestrator.managed.test_delegating import (
    release,
    start_boss_with_a_gated_leaf,
    user_texts,
)
from tests.orchestrator.support import FAST_AGENTS
from tests.waits import wait_until

pytestmark = FAST_AGENTS

LOST_LEAF = "Agent lost · agent=leaf"


class Events:
    """A lifecycle event stream the test feeds (``close`` ends it, as Herdr's would)."""

    def __init__(self) -> None:
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def push(self) -> None:
        self._queue.put({"event": "pane.closed", "data": {}})

    def close(self) -> None:
        self._queue.put(None)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while (event := self._queue.get()) is not None:
            yield event


#: the fixtures of a managed world (a simulator whose fake pis play the world's scenario)
herdr_pane_env = managed_world.herdr_pane_env
world = managed_world.world


def test_a_lost_leaf_under_a_delegating_child_is_reported_to_the_child_once(
    world: ManagedWorld,
) -> None:
    """boss's leaf loses its pane: the lost attention is typed into boss's pane (boss is
    idle, waiting for the leaf) once; the lead's monitor and the lead's pull path never
    carry it."""
    boss = start_boss_with_a_gated_leaf(world)
    leaf = wait_until(
        lambda: (found := world.agent("leaf")) and found.get("pane_id") and found,
        20,
        interval=0.1,
        what="the leaf listed in its pane",
    )
    path = world.wait_state("boss", "blocked", timeout=20)["pi_session_path"]
    service = world.service
    clock = ManualClock()
    background = ControllerBackground(service, clock=clock)
    try:
        background.sync_cascade()
        assert list(background.cascade_monitors) == [boss["run_id"]]
        monitor = background.cascade_monitors[boss["run_id"]]
        world.client.pane_close(leaf["pane_id"])
        wait_until(
            lambda: any(o.lost for o in health_observations(service, clock, boss["session_id"])),
            10,
            what="the leaf observed lost",
        )
        assert [o.label for o in health_observations(service, clock)] == ["boss"]
        assert background.monitor.run_once() is None  # the lead's scan: nothing about leaf
        attention = monitor.run_once()
        assert attention is not None
        assert (attention.reason, attention.label) == ("lost", "leaf")
        assert monitor.undelivered() == []  # boss took it
        typed = wait_until(
            lambda: [t for t in user_texts(path) if LOST_LEAF in t] or None,
            10,
            what="the lost attention in boss's session",
        )
        assert len(typed) == 1
        background.sync_cascade()  # the lost leaf is still boss's: the same monitor
        assert background.cascade_monitors == {boss["run_id"]: monitor}
        monitor.run_once()
        background.monitor.run_once()
        assert background.kept_attention() == []
        assert world.ok("agent_list").get("attention", []) == []  # the lead's pull path
        assert [t for t in user_texts(path) if LOST_LEAF in t] == typed  # not twice
    finally:
        background.stop()


def test_a_delegating_childs_monitor_is_retired_once_its_agents_are_done(
    world: ManagedWorld,
) -> None:
    """The running background creates boss's monitor (its scan thread runs) while boss has
    its leaf, a lifecycle event wakes it as it wakes the lead's (a scan long before the 30 s
    fallback), and it is stopped and dropped once the leaf's result is delivered and boss
    finishes."""
    boss = start_boss_with_a_gated_leaf(world)
    wait_until(lambda: world.agent("leaf"), 20, interval=0.1, what="the leaf listed")
    world.wait_state("boss", "blocked", timeout=20)  # idle in Herdr: its monitor scans
    events = Events()
    background = ControllerBackground(world.service, interval_s=0.05)
    background.start(events)
    try:
        monitor = wait_until(
            lambda: background.cascade_monitors.get(boss["run_id"]), 10, what="boss's monitor"
        )
        wait_until(lambda: monitor.running and monitor.scans >= 1, 10, what="its first scan")
        lead_scans, boss_scans = background.monitor.scans, monitor.scans
        events.push()
        wait_until(
            lambda: monitor.scans > boss_scans and background.monitor.scans > lead_scans,
            10,
            what="both monitors woken by the event",
        )
        release(world, "leafgo")
        world.wait_delivery("result", "boss", timeout=20)
        wait_until(lambda: not background.cascade_monitors, 10, what="boss's monitor retired")
        assert not monitor.running
        assert background.monitor.running  # the lead's own stays
    finally:
        background.stop()
    assert not background.monitor.running
