"""What a pane's shell exiting emits: ``pane_exited``, then ``layout_updated`` when its tab
keeps other panes — never ``pane_closed``, ``tab_closed`` or ``workspace_closed``.

Herdr: ``src/app/api.rs`` (``handle_internal_event`` for ``PaneDied`` and its test
``pane_exit_emits_layout_updated_when_tab_survives``) and ``handle_pane_died`` in
``src/app/actions.rs``, which removes the pane, an emptied tab and an emptied workspace
without any close event. A client that waits for ``pane_closed`` after an agent exits hangs
on Herdr, so the simulator must not send one either.

Absence is proven with a sync point: each stream also subscribes to ``workspace.created``,
listed last, and a new workspace's ``layout_updated`` and ``workspace_created`` must be the
next two events; a close event emitted before them would be delivered before the
``workspace_created`` (each subscription polls its own cursor, in request order).
"""

from __future__ import annotations

from typing import Any

from pytest_herdr.client import HerdrClient
from tests.contract.helpers import Subscribe, envelope, split, take, wait_line

WATCH = [
    "pane.exited",
    "layout.updated",
    "pane.closed",
    "tab.closed",
    "workspace.closed",
    "workspace.created",
]


def _exit(herdr_client: HerdrClient, pane: str) -> None:
    wait_line(herdr_client, pane, r"^\$")
    herdr_client.call("pane.send_text", pane_id=pane, text="exit\r")


def _next_is_the_sync_point(herdr_client: HerdrClient, sub: Any) -> None:
    created = herdr_client.call("workspace.create", cwd="/tmp")
    layout, event = take(sub, 2)
    assert layout["event"] == "layout_updated", layout
    assert layout["data"]["layout"]["workspace_id"] == created["workspace"]["workspace_id"]
    assert event["event"] == "workspace_created", event
    assert event["data"]["workspace"] == created["workspace"]


def test_exit_with_a_surviving_tab_emits_pane_exited_then_layout_updated(
    herdr_client: HerdrClient, subscribe: Subscribe, pane: str
) -> None:
    """Herdr's ``pane_exit_emits_layout_updated_when_tab_survives``: pane_exited before
    layout_updated, whose layout is the tab with its one remaining pane."""
    other = split(herdr_client, pane)
    wait_line(herdr_client, other, r"^\$")
    sub = subscribe(*WATCH)
    _exit(herdr_client, other)
    exited, layout = take(sub, 2)
    assert exited == envelope("pane_exited", pane_id=other, workspace_id="w1")
    assert layout["event"] == "layout_updated"
    snapshot = layout["data"]["layout"]
    assert snapshot["tab_id"] == "w1:t1"
    assert [entry["pane_id"] for entry in snapshot["panes"]] == [pane]
    _next_is_the_sync_point(herdr_client, sub)
    assert [p["pane_id"] for p in herdr_client.call("pane.list", workspace_id="w1")["panes"]] == [
        pane
    ]


def test_exit_of_a_workspaces_last_pane_emits_only_pane_exited(
    herdr_client: HerdrClient, subscribe: Subscribe, pane: str
) -> None:
    """The workspace goes with its last pane, silently (no ``workspace_closed``)."""
    sub = subscribe(*WATCH)
    _exit(herdr_client, pane)
    assert take(sub, 1) == [envelope("pane_exited", pane_id=pane, workspace_id="w1")]
    _next_is_the_sync_point(herdr_client, sub)
    listed = herdr_client.call("workspace.list")["workspaces"]
    assert [ws["workspace_id"] for ws in listed] == ["w2"]


def test_exit_of_a_tabs_last_pane_emits_only_pane_exited(
    herdr_client: HerdrClient, subscribe: Subscribe, pane: str
) -> None:
    """A tab emptied by an exit is removed without ``tab_closed`` (or a layout)."""
    created = herdr_client.call("tab.create", workspace_id="w1")
    tab_pane = created["root_pane"]["pane_id"]
    sub = subscribe(*WATCH)
    _exit(herdr_client, tab_pane)
    assert take(sub, 1) == [envelope("pane_exited", pane_id=tab_pane, workspace_id="w1")]
    _next_is_the_sync_point(herdr_client, sub)
    tabs = herdr_client.call("tab.list", workspace_id="w1")["tabs"]
    assert [tab["tab_id"] for tab in tabs] == ["w1:t1"]
