"""``events.subscribe`` delivers as Herdr's subscription loop does.

Herdr (``src/api/server.rs`` ``stream_subscriptions``, ``src/api/subscriptions.rs``): every
subscription of a stream is its own active subscription with its own cursor into the event
hub, and each round polls them once, in request order, one event each at most. So several
filtered status subscriptions on one pane each deliver, a lifecycle kind listed twice is
delivered twice, and within a round events come in request order, not in the order they
happened.
"""

from __future__ import annotations

from typing import Any

import pytest

from herdr_sim import Simulator
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import Subscribe, kinds, kinds_since, take


def _status(pane: str, wanted: str) -> dict[str, Any]:
    return {"type": "pane.agent_status_changed", "pane_id": pane, "agent_status": wanted}


def _report(herdr_client: HerdrClient, pane: str, state: str) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=pane, source="custom:hermes", agent="hermes", state=state
    )


@pytest.mark.herdr_sim_only
@pytest.mark.herdr(agent_detection=False)
def test_several_filtered_status_subscriptions_on_one_pane_each_deliver(
    herdr_client: HerdrClient, subscribe: Subscribe, root: str
) -> None:
    """A "working or blocked" watcher: each filter has its own subscription and cursor
    (``ActiveAgentStatusChangedSubscription``), so neither hides the other."""
    sub = subscribe(_status(root, "working"), _status(root, "blocked"))
    _report(herdr_client, root, "working")
    [working] = take(sub, 1)
    _report(herdr_client, root, "blocked")
    [blocked] = take(sub, 1)
    assert working["event"] == blocked["event"] == "pane.agent_status_changed"
    assert (working["data"]["pane_id"], working["data"]["agent_status"]) == (root, "working")
    assert (blocked["data"]["pane_id"], blocked["data"]["agent_status"]) == (root, "blocked")


def test_a_lifecycle_kind_listed_twice_is_delivered_twice(
    herdr_client: HerdrClient, subscribe: Subscribe, ws: str
) -> None:
    """Two ``tab.created`` subscriptions are two cursors: the one event comes twice."""
    sub = subscribe("tab.created", "tab.created")
    herdr_client.call("tab.create", workspace_id=ws)
    herdr_client.call("tab.create", workspace_id=ws)
    first, second = take(sub, 2)
    assert first == second
    assert (first["event"], first["data"]["tab"]["tab_id"]) == ("tab_created", "w1:t2")


@pytest.mark.herdr_sim_only
def test_a_round_delivers_in_request_order_not_in_the_order_events_happened(
    sim: Simulator, herdr_client: HerdrClient, subscribe: Subscribe, ws: str
) -> None:
    """``tab.create`` emits ``tab_created`` before ``pane_created``; a stream that lists
    ``pane.created`` first polls it first and delivers ``pane_created`` first."""
    sub = subscribe("pane.created", "tab.created")
    mark = len(sim.events)
    herdr_client.call("tab.create", workspace_id=ws)
    happened = [kind for kind in kinds_since(sim, mark) if kind in ("tab_created", "pane_created")]
    assert happened == ["tab_created", "pane_created"]
    assert kinds(take(sub, 2)) == ["pane_created", "tab_created"]
