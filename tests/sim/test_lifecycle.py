"""The lifecycle event builders: one per event kind, Herdr's optional fields left out."""

from __future__ import annotations

import typing

from herdr_sim.methods.events import EVENT_KINDS, LIFECYCLE
from herdr_sim.services import lifecycle
from herdr_sim.services.events import EventHub


def test_one_builder_per_event_kind_and_every_kind_is_a_protocol_event() -> None:
    kinds = set(typing.get_args(lifecycle.EventKind))
    builders = {name for name in lifecycle.__all__ if name not in ("Event", "EventKind")}
    assert builders == kinds
    subscribable = {name.replace(".", "_") for name in LIFECYCLE} | set(EVENT_KINDS)
    assert kinds - subscribable == {"pane_agent_status_changed"}


def test_optional_fields_are_left_out_until_they_apply() -> None:
    assert lifecycle.pane_agent_detected("p", "w").data == {"pane_id": "p", "workspace_id": "w"}
    released = lifecycle.pane_agent_detected(
        "p", "w", agent="pi", released=True, final_status="idle"
    )
    assert list(released.data) == ["pane_id", "workspace_id", "agent", "released", "final_status"]
    assert lifecycle.workspace_closed("w").data == {"workspace_id": "w"}
    status = lifecycle.pane_agent_status_changed("p", "w", "idle", title=None, state_labels={})
    assert status.data == {"pane_id": "p", "workspace_id": "w", "agent_status": "idle"}
    moved = lifecycle.pane_moved({"previous_pane_id": "a"}, {"pane_id": "b"}, closed_tab_id="t")
    assert moved.data == {"previous_pane_id": "a", "pane": {"pane_id": "b"}, "closed_tab_id": "t"}


def test_the_hub_wraps_an_event_in_herdrs_envelope() -> None:
    hub = EventHub()
    seen: list[dict[str, typing.Any]] = []
    hub.add_listener(seen.append)
    hub.publish(lifecycle.tab_focused("t", "w"))
    assert seen == [
        {
            "event": "tab_focused",
            "data": {"type": "tab_focused", "tab_id": "t", "workspace_id": "w"},
        }
    ]


def test_the_hub_numbers_its_events_and_keeps_the_last_512() -> None:
    """Herdr's ``EventHub`` (``src/api/event_hub.rs``): every event gets the next sequence
    number, the last ``MAX_EVENTS`` (512) are kept, and a reader asks for those after its own
    cursor."""
    hub = EventHub()
    assert (hub.current_sequence, hub.events_after(0)) == (0, [])
    for number in range(600):
        hub.publish(lifecycle.workspace_focused(f"w{number}"))
    assert hub.current_sequence == 600
    kept = hub.events_after(0)
    assert [sequence for sequence, _ in kept] == list(range(89, 601))
    assert [envelope["data"]["workspace_id"] for _, envelope in hub.events_after(598)] == [
        "w598",
        "w599",
    ]
    assert hub.events_after(600) == []
