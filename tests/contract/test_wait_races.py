"""Waits never miss a transition that lands between a client's read and its wait.

An orchestrator lists its agents, sees ``working``, then asks to wait for ``idle``; the turn
may end at any moment around that second request: before it is sent, while the server
parses it, or while the wait registers. Herdr answers at once when the status already
matches (``agent.wait``, ``events.wait``) and sends an initial event to a filtered
subscription whose status already matches, so no ordering loses the turn's end. These tests
race the transition against the wait on purpose, from another thread with a seeded jitter,
many times per kind of wait (reference §5.8, §6.3, §6.5; issue 3's acceptance).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from herdr_sim import Simulator, testing
from herdr_sim.client import Subscription
from herdr_sim.model.agents import AgentState
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import hang_up, reply_after
from tests.waits import SCALE

pytestmark = [pytest.mark.herdr_sim_only, pytest.mark.herdr(agent_detection=False)]

ROUNDS = 25
#: the turn ends within this many seconds of the client's list request
JITTER = 0.004


def detect(sim: Simulator, pane: str, screen: AgentState) -> None:
    """Process detection sees ``pi`` with ``screen`` (the seam the live loop drives)."""
    testing.set_detection(sim, pane, ("pi", screen))


@pytest.fixture
def pi(sim: Simulator, root: str) -> str:
    """The root pane (active tab) hosting a detected ``pi``, ready (idle)."""
    detect(sim, root, "idle")
    return root


Outcome = tuple[str, str]


def raced(
    sim: Simulator, pane: str, seed: int, read_then_wait: Callable[[], Outcome]
) -> Iterator[Outcome]:
    """Run ``ROUNDS`` turns; in each the turn ends (working → idle) from another thread at a
    seeded random moment while ``read_then_wait`` reads the status and then waits for idle.
    Yields (status the read saw, status the wait answered)."""
    rng = random.Random(seed)
    for _ in range(ROUNDS):
        detect(sim, pane, "working")
        delay = rng.uniform(0, JITTER)

        def end_turn(delay: float = delay) -> None:
            time.sleep(delay)  # the race itself: a jittered moment, not a wait for state
            detect(sim, pane, "idle")

        ender = threading.Thread(target=end_turn)
        ender.start()
        try:
            yield read_then_wait()
        finally:
            ender.join(timeout=5 * SCALE)


def agent_status(herdr_client: HerdrClient) -> str:
    """The first agent's status from ``agent.list`` (what an orchestrator polls)."""
    status: str = herdr_client.call("agent.list")["agents"][0]["agent_status"]
    return status


def test_agent_wait_never_misses_a_raced_turn_end(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    def read_then_wait() -> Outcome:
        before = agent_status(herdr_client)
        after = herdr_client.call("agent.wait", target=pi, timeout_ms=int(3000 * SCALE))
        return before, after["agent"]["agent_status"]

    outcomes = list(raced(sim, pi, 1, read_then_wait))
    assert all(after == "idle" for _, after in outcomes)
    # the race was real: some reads saw the turn still running, some saw it over
    assert {before for before, _ in outcomes} >= {"working"}


def test_events_wait_never_misses_a_raced_turn_end(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    match = {"event": "pane_agent_status_changed", "pane_id": pi, "agent_status": "idle"}

    def read_then_wait() -> Outcome:
        before = agent_status(herdr_client)
        after = herdr_client.call("events.wait", match_event=match, timeout_ms=int(3000 * SCALE))
        assert after["type"] == "wait_matched"
        return before, after["event"]["data"]["agent_status"]

    outcomes = list(raced(sim, pi, 2, read_then_wait))
    assert all(after == "idle" for _, after in outcomes)
    assert {before for before, _ in outcomes} >= {"working"}


def test_a_filtered_subscription_never_misses_a_raced_turn_end(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    wanted = [{"type": "pane.agent_status_changed", "pane_id": pi, "agent_status": "idle"}]

    def read_then_subscribe() -> Outcome:
        before = agent_status(herdr_client)
        sub = Subscription(sim.socket_path, wanted, timeout=10 * SCALE)
        try:
            event: dict[str, Any] = sub.next(timeout=3 * SCALE)
        finally:
            hang_up(sim, sub)
        return before, event["data"]["agent_status"]

    outcomes = list(raced(sim, pi, 3, read_then_subscribe))
    assert all(after == "idle" for _, after in outcomes)
    assert {before for before, _ in outcomes} >= {"working"}


def test_a_wait_started_mid_turn_sees_the_end_once_the_request_is_held(
    sim: Simulator, herdr_client: HerdrClient, pi: str
) -> None:
    # the other ordering, made exact: the turn ends only once the server holds the wait
    detect(sim, pi, "working")
    match = {"event": "pane_agent_status_changed", "pane_id": pi, "agent_status": "idle"}
    result = reply_after(
        sim,
        lambda: herdr_client.call("events.wait", match_event=match, timeout_ms=int(3000 * SCALE)),
        lambda: detect(sim, pi, "idle"),
    )
    assert result["event"]["data"]["agent_status"] == "idle"
