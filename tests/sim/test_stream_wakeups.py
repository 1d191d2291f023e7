"""What wakes an ``events.subscribe`` stream: only what its subscriptions can see.

Every request fires the runtime's ``state_changed``; fifty output-only streams woken by each
``pane.send_text`` of the event benchmark were half of its loop's wake-ups. An output
subscription's read depends on the pane's output, on what its pane id names and on the
pane's view (size, viewport offset), so such a stream waits on ``pane_views.changed`` instead,
which fires only when one of those moved. A stream that watches an agent status still wakes
on every state change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.methods import events as events_methods
from herdr_sim.services.runtime import Runtime
from tests.sim.test_output_subscription_reads import PROMPT, _Stream

Api = Callable[..., dict[str, Any]]


def _fired(sim: Simulator) -> tuple[int, int]:
    """(``state_changed``, ``pane_views.changed``) fire counts now."""

    def read(rt: Runtime) -> tuple[int, int]:
        return rt.state_changed.fired, rt.pane_views.changed.fired

    return sim.run_in_loop(read)


def test_a_label_changes_the_state_but_not_the_views(sim: Simulator, api: Api) -> None:
    ws = api("workspace.create")["workspace"]["workspace_id"]
    state, views = _fired(sim)
    api("workspace.rename", workspace_id=ws, label="renamed")
    after = _fired(sim)
    assert after[0] > state, "a request fires state_changed"
    assert after[1] == views, "a label names no pane and moves no view"


def test_a_split_a_scroll_and_a_close_each_change_the_views(sim: Simulator, api: Api) -> None:
    pane = api("workspace.create")["root_pane"]["pane_id"]
    api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    _, views = _fired(sim)
    other = api("pane.split", target_pane_id=pane, direction="down")["pane"]["pane_id"]
    _, split = _fired(sim)
    assert split > views, "a new pane: ids name more panes, and the tab's panes resize"
    api("pane.send_text", pane_id=pane, text="seq 1 200\n")
    api(
        "pane.wait_for_output",
        pane_id=pane,
        source="visible",
        match={"type": "regex", "value": "^200$"},
    )
    _, printed = _fired(sim)
    api("pane.scroll", pane_id=pane, offset_from_bottom=5)
    _, scrolled = _fired(sim)
    assert scrolled > printed, "the viewport moved: a visible read shows other rows"
    api("pane.close", pane_id=other)
    _, closed = _fired(sim)
    assert closed > scrolled, "a closed pane: its id names nothing now"


@pytest.mark.parametrize(
    ("subscription", "woken_by_requests"),
    [
        (
            {
                "type": "pane.output_matched",
                "source": "visible",
                "match": {"type": "substring", "value": "NEVER-SHOWN"},
            },
            False,
        ),
        ({"type": "pane.agent_status_changed"}, True),
    ],
    ids=["output", "agent-status"],
)
def test_requests_that_move_no_view_wake_only_a_stream_that_watches_a_status(
    sim: Simulator,
    api: Api,
    monkeypatch: pytest.MonkeyPatch,
    subscription: dict[str, Any],
    woken_by_requests: bool,
) -> None:
    pane = api("workspace.create")["root_pane"]["pane_id"]
    ws = api("pane.get", pane_id=pane)["pane"]["workspace_id"]
    api("pane.wait_for_output", pane_id=pane, source="visible", match=PROMPT)
    rounds: list[int] = []
    real = events_methods._wake_signals

    def counting(kinds: list[Any], active: list[Any]) -> list[Any]:
        rounds.append(1)
        return real(kinds, active)

    monkeypatch.setattr(events_methods, "_wake_signals", counting)
    stream = _Stream(str(sim.socket_path), [dict(subscription, pane_id=pane)])
    try:
        assert stream.line()["result"] == {"type": "subscription_started"}
        before = len(rounds)
        requests = 30
        for n in range(requests):
            api("workspace.rename", workspace_id=ws, label=f"label {n}")
        woken = len(rounds) - before
    finally:
        stream.sock.close()
    # The 30 renames take a few tens of ms; the stream's own 100 ms re-poll adds a round
    # or two (more on a slow machine), never one per request.
    if woken_by_requests:
        assert woken > requests // 4, f"a status stream re-polls after state changes: {woken}"
    else:
        assert woken <= requests // 4, f"an output stream was woken {woken} times by 30 renames"
