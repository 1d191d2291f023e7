"""``tab.*`` over the socket and through ``herdr tab …``, against Herdr's rules.

Stable tab numbers versus position labels (reference §2.2), the lenient id forms (§2.3),
behaviour (§3.3), error codes and messages (§4), events (§6) and checklist items 7 and 21.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from herdr_sim.client import Subscription
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    Raw,
    Subscribe,
    cli_error,
    cli_json,
    enter,
    envelope,
    failure,
    focus_events,
    invalid_request,
    kinds,
    tab_ids,
    take,
    wait_output,
)

LIFECYCLE = [
    "workspace.closed",
    "workspace.focused",
    "tab.created",
    "tab.closed",
    "tab.renamed",
    "tab.moved",
    "tab.focused",
    "pane.created",
    "pane.focused",
    "layout.updated",
]


def tabs(herdr_client: HerdrClient, workspace_id: str = "w1") -> list[tuple[str, int, str]]:
    """(tab_id, number, label) of a workspace's tabs in order."""
    listed = herdr_client.call("tab.list", workspace_id=workspace_id)["tabs"]
    return [(tab["tab_id"], tab["number"], tab["label"]) for tab in listed]


def active_tab(herdr_client: HerdrClient, workspace_id: str = "w1") -> str:
    """The workspace's active tab id."""
    tab_id: str = herdr_client.call("workspace.get", workspace_id=workspace_id)["workspace"][
        "active_tab_id"
    ]
    return tab_id


@pytest.fixture
def three_tabs(herdr_client: HerdrClient, ws: str) -> list[str]:
    """``w1`` with tabs t1, t2, t3 (t1 active)."""
    created = [herdr_client.call("tab.create", workspace_id=ws)["tab"]["tab_id"] for _ in range(2)]
    return ["w1:t1", *created]


@pytest.fixture
def lifecycle(ws: str, subscribe: Subscribe) -> Subscription:
    """A tab/pane lifecycle subscription opened after ``w1`` exists."""
    return subscribe(*LIFECYCLE)


# -- create ----------------------------------------------------------------------------------------


def test_create_adds_an_unfocused_tab_with_the_next_pane_number(
    herdr_client: HerdrClient, ws: str
) -> None:
    created = herdr_client.call("tab.create", workspace_id=ws)
    assert created["type"] == "tab_created"
    tab, pane = created["tab"], created["root_pane"]
    assert tab == {
        "tab_id": "w1:t2",
        "workspace_id": "w1",
        "number": 2,
        "label": "2",
        "focused": False,
        "pane_count": 1,
        "agent_status": "unknown",
    }
    assert (pane["pane_id"], pane["tab_id"], pane["focused"]) == ("w1:p2", "w1:t2", False)
    assert active_tab(herdr_client) == "w1:t1"
    assert herdr_client.call("workspace.get", workspace_id=ws)["workspace"]["tab_count"] == 2


def test_create_without_workspace_uses_the_active_one(herdr_client: HerdrClient, ws: str) -> None:
    herdr_client.call("workspace.create", cwd="/tmp", focus=True)
    assert herdr_client.call("tab.create")["tab"]["tab_id"] == "w2:t2"


def test_create_with_focus_switches_tab_and_workspace(herdr_client: HerdrClient, ws: str) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    created = herdr_client.call("tab.create", workspace_id="w2", focus=True)
    assert created["tab"]["focused"] and created["root_pane"]["focused"]
    workspace = herdr_client.call("workspace.get", workspace_id="w2")["workspace"]
    assert (workspace["focused"], workspace["active_tab_id"]) == (True, "w2:t2")
    assert herdr_client.call("workspace.get", workspace_id="w1")["workspace"]["focused"] is False


def test_create_with_a_label_keeps_it_verbatim(herdr_client: HerdrClient, ws: str) -> None:
    assert (
        herdr_client.call("tab.create", workspace_id=ws, label=" logs ")["tab"]["label"] == " logs "
    )


def test_create_follows_the_target_workspaces_focused_pane(
    herdr_client: HerdrClient, ws: str, short_dir: Path
) -> None:
    herdr_client.call("workspace.create", cwd=str(short_dir))
    created = herdr_client.call("tab.create", workspace_id="w2")
    assert created["root_pane"]["cwd"] == str(short_dir)


def test_create_with_cwd(herdr_client: HerdrClient, ws: str, short_dir: Path) -> None:
    assert herdr_client.call("tab.create", cwd=str(short_dir))["root_pane"]["cwd"] == str(short_dir)


def test_create_with_a_missing_cwd_starts_in_home(
    herdr_client: HerdrClient, ws: str, short_dir: Path, home: Path
) -> None:
    created = herdr_client.call("tab.create", cwd=str(short_dir / "gone"))
    assert created["root_pane"]["cwd"] == str(home)


def test_create_passes_env_to_the_new_pane(herdr_client: HerdrClient, ws: str) -> None:
    pane = herdr_client.call("tab.create", env={"HS_TAB": "t-env"})["root_pane"]["pane_id"]
    enter(herdr_client, pane, "echo tab=$HS_TAB/$HERDR_TAB_ID")
    wait_output(herdr_client.call, pane, text="tab=t-env/w1:t2", timeout_ms=5000)


def test_create_without_any_workspace_is_no_active_workspace(herdr_client: HerdrClient) -> None:
    assert failure(herdr_client.call, "tab.create") == (
        "workspace_not_found",
        "no active workspace",
    )


def test_create_in_an_unknown_workspace(herdr_client: HerdrClient, ws: str) -> None:
    assert failure(herdr_client.call, "tab.create", workspace_id="w9") == (
        "workspace_not_found",
        "workspace w9 not found",
    )


def test_create_at_a_missing_position_fails_at_spawn_like_herdr(
    herdr_client: HerdrClient, ws: str
) -> None:
    # Herdr turns a position into an index first and finds it missing only when spawning.
    assert failure(herdr_client.call, "tab.create", workspace_id="5") == (
        "tab_create_failed",
        "workspace disappeared",
    )
    assert tabs(herdr_client) == [("w1:t1", 1, "1")]


def test_create_checks_the_workspace_before_env(herdr_client: HerdrClient, ws: str) -> None:
    assert failure(herdr_client.call, "tab.create", workspace_id="w9", env={"": "x"})[0] == (
        "workspace_not_found"
    )
    assert failure(herdr_client.call, "tab.create", workspace_id="w1", env={"A=B": "x"}) == (
        "invalid_env",
        "env key A=B must not contain '='",
    )
    assert tabs(herdr_client) == [("w1:t1", 1, "1")]


# -- stable numbers vs position labels (checklist 21) ----------------------------------------------


def test_default_labels_follow_position_and_numbers_stay(
    herdr_client: HerdrClient, three_tabs: list[str]
) -> None:
    herdr_client.call("tab.close", tab_id="w1:t1")
    assert tabs(herdr_client) == [("w1:t2", 2, "1"), ("w1:t3", 3, "2")]


def test_tab_numbers_are_never_reused(herdr_client: HerdrClient, three_tabs: list[str]) -> None:
    herdr_client.call("tab.close", tab_id="w1:t3")
    assert herdr_client.call("tab.create")["tab"]["tab_id"] == "w1:t4"
    assert failure(herdr_client.call, "tab.get", tab_id="w1:t3") == (
        "tab_not_found",
        "tab w1:t3 not found",
    )


def test_tab_numbers_are_per_workspace(herdr_client: HerdrClient, three_tabs: list[str]) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    assert herdr_client.call("tab.create", workspace_id="w2")["tab"]["tab_id"] == "w2:t2"


def test_pane_numbers_are_shared_by_the_tabs_of_a_workspace(
    herdr_client: HerdrClient, ws: str
) -> None:
    herdr_client.call("pane.split", target_pane_id="w1:p1", direction="right")
    assert herdr_client.call("tab.create")["root_pane"]["pane_id"] == "w1:p3"


# -- list / get ----------------------------------------------------------------------------------


def test_list_without_workspace_lists_every_tab_in_order(
    herdr_client: HerdrClient, three_tabs: list[str]
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    listed = herdr_client.call("tab.list")
    assert listed["type"] == "tab_list"
    assert [tab["tab_id"] for tab in listed["tabs"]] == ["w1:t1", "w1:t2", "w1:t3", "w2:t1"]
    assert [tab["focused"] for tab in listed["tabs"]] == [True, False, False, False]


def test_list_of_one_workspace(herdr_client: HerdrClient, three_tabs: list[str]) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    assert [tab["tab_id"] for tab in herdr_client.call("tab.list", workspace_id="2")["tabs"]] == [
        "w2:t1"
    ]


def test_list_of_an_unknown_workspace(herdr_client: HerdrClient, ws: str) -> None:
    assert failure(herdr_client.call, "tab.list", workspace_id="w7") == (
        "workspace_not_found",
        "workspace w7 not found",
    )


@pytest.mark.parametrize("form", ["w1:t2", "w1:2", "1:2", "w_1:2", "t_w1_2", "t_1_2"])
def test_get_accepts_stable_and_position_forms(
    herdr_client: HerdrClient, three_tabs: list[str], form: str
) -> None:
    tab = herdr_client.call("tab.get", tab_id=form)
    assert tab["type"] == "tab_info"
    assert tab["tab"]["tab_id"] == "w1:t2"


def test_position_forms_follow_position_not_number(
    herdr_client: HerdrClient, three_tabs: list[str]
) -> None:
    herdr_client.call("tab.close", tab_id="w1:t1")
    assert herdr_client.call("tab.get", tab_id="w1:1")["tab"]["tab_id"] == "w1:t2"
    assert herdr_client.call("tab.get", tab_id="t_w1_2")["tab"]["tab_id"] == "w1:t3"


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("tab.get", {}),
        ("tab.focus", {}),
        ("tab.rename", {"label": "x"}),
        ("tab.move", {"insert_index": 0}),
        ("tab.close", {}),
    ],
)
@pytest.mark.parametrize("target", ["w1:t9", "w1:9", "w9:t1", "t_w1_9", "w1", "junk"])
def test_unknown_tab_is_tab_not_found(
    herdr_client: HerdrClient, ws: str, method: str, extra: dict[str, Any], target: str
) -> None:
    assert failure(herdr_client.call, method, tab_id=target, **extra) == (
        "tab_not_found",
        f"tab {target} not found",
    )


# -- focus / rename --------------------------------------------------------------------------------


def test_focus_switches_the_active_tab(herdr_client: HerdrClient, three_tabs: list[str]) -> None:
    focused = herdr_client.call("tab.focus", tab_id="w1:t3")
    assert focused["type"] == "tab_info"
    assert focused["tab"]["focused"] is True
    assert active_tab(herdr_client) == "w1:t3"
    assert herdr_client.call("pane.get", pane_id="w1:p3")["pane"]["focused"] is True
    assert herdr_client.call("tab.get", tab_id="w1:t1")["tab"]["focused"] is False


def test_focus_in_another_workspace_activates_it(herdr_client: HerdrClient, ws: str) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    herdr_client.call("tab.create", workspace_id="w2")
    herdr_client.call("tab.focus", tab_id="w2:t2")
    snapshot = herdr_client.call("session.snapshot")["snapshot"]
    assert (snapshot["focused_workspace_id"], snapshot["focused_tab_id"]) == ("w2", "w2:t2")
    assert snapshot["focused_pane_id"] == "w2:p2"


def test_focus_emits_the_focus_triple(
    herdr_client: HerdrClient, three_tabs: list[str], lifecycle: Subscription
) -> None:
    herdr_client.call("tab.focus", tab_id="w1:t2")
    assert take(lifecycle, 3) == focus_events("w1", "w1:t2", "w1:p2")


def test_rename_sets_the_label_and_emits_renamed(
    herdr_client: HerdrClient, three_tabs: list[str], lifecycle: Subscription
) -> None:
    renamed = herdr_client.call("tab.rename", tab_id="w1:2", label="  build ")
    assert renamed["type"] == "tab_info"
    assert renamed["tab"]["label"] == "  build "
    assert renamed["tab"]["number"] == 2
    assert take(lifecycle, 1) == [
        envelope("tab_renamed", tab_id="w1:t2", workspace_id="w1", label="  build ")
    ]


def test_custom_label_survives_moves_while_default_labels_follow(
    herdr_client: HerdrClient, three_tabs: list[str]
) -> None:
    herdr_client.call("tab.rename", tab_id="w1:t3", label="logs")
    herdr_client.call("tab.move", tab_id="w1:t3", insert_index=0)
    assert tabs(herdr_client) == [("w1:t3", 3, "logs"), ("w1:t1", 1, "2"), ("w1:t2", 2, "3")]


# -- move ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tab_id", "insert_index", "order"),
    [
        ("w1:t1", 2, ["w1:t2", "w1:t1", "w1:t3"]),
        ("w1:t1", 3, ["w1:t2", "w1:t3", "w1:t1"]),
        ("w1:t3", 0, ["w1:t3", "w1:t1", "w1:t2"]),
        ("w1:t3", 1, ["w1:t1", "w1:t3", "w1:t2"]),
    ],
)
def test_move_inserts_before_the_slot_of_the_original_list(
    herdr_client: HerdrClient,
    three_tabs: list[str],
    tab_id: str,
    insert_index: int,
    order: list[str],
) -> None:
    moved = herdr_client.call("tab.move", tab_id=tab_id, insert_index=insert_index)
    assert moved["type"] == "tab_list"
    assert [tab["tab_id"] for tab in moved["tabs"]] == order
    assert [tab["label"] for tab in moved["tabs"]] == ["1", "2", "3"]
    assert tab_ids(herdr_client) == order


def test_move_emits_moved_with_the_requested_index(
    herdr_client: HerdrClient, three_tabs: list[str], lifecycle: Subscription
) -> None:
    moved = herdr_client.call("tab.move", tab_id="w1:t1", insert_index=3)
    assert take(lifecycle, 1) == [
        envelope("tab_moved", tab_id="w1:t1", workspace_id="w1", insert_index=3, tabs=moved["tabs"])
    ]


@pytest.mark.parametrize("insert_index", [1, 2])
def test_move_to_its_own_slot_emits_nothing(
    herdr_client: HerdrClient, three_tabs: list[str], lifecycle: Subscription, insert_index: int
) -> None:
    moved = herdr_client.call("tab.move", tab_id="w1:t2", insert_index=insert_index)
    assert [tab["tab_id"] for tab in moved["tabs"]] == ["w1:t1", "w1:t2", "w1:t3"]
    herdr_client.call("tab.rename", tab_id="w1:t1", label="sentinel")
    assert kinds(take(lifecycle, 1)) == ["tab_renamed"]


def test_move_keeps_the_active_tab(herdr_client: HerdrClient, three_tabs: list[str]) -> None:
    herdr_client.call("tab.focus", tab_id="w1:t2")
    herdr_client.call("tab.move", tab_id="w1:t2", insert_index=3)
    assert active_tab(herdr_client) == "w1:t2"
    assert herdr_client.call("tab.get", tab_id="w1:t2")["tab"]["focused"] is True


def test_move_past_the_end_is_tab_move_failed(
    herdr_client: HerdrClient, three_tabs: list[str]
) -> None:
    assert failure(herdr_client.call, "tab.move", tab_id="w1:t1", insert_index=4) == (
        "tab_move_failed",
        "insert_index 4 is out of bounds",
    )


# -- close (checklist 7) ---------------------------------------------------------------------------


def test_close_by_position_form(herdr_client: HerdrClient, three_tabs: list[str]) -> None:
    assert herdr_client.call("tab.close", tab_id="w1:2") == {"type": "ok"}
    assert tab_ids(herdr_client) == ["w1:t1", "w1:t3"]
    assert failure(herdr_client.call, "pane.get", pane_id="w1:p2")[0] == "pane_not_found"


def test_close_emits_tab_closed_only(
    herdr_client: HerdrClient, three_tabs: list[str], lifecycle: Subscription
) -> None:
    herdr_client.call("tab.close", tab_id="w1:t2")
    herdr_client.call("tab.rename", tab_id="w1:t1", label="sentinel")
    events = take(lifecycle, 2)
    assert events[0] == envelope("tab_closed", tab_id="w1:t2", workspace_id="w1")
    assert kinds(events)[1] == "tab_renamed"


def test_closing_the_last_tab_closes_the_workspace(
    herdr_client: HerdrClient, ws: str, lifecycle: Subscription
) -> None:
    before = herdr_client.call("workspace.get", workspace_id=ws)["workspace"]
    herdr_client.call("tab.close", tab_id="w1:t1")
    # delivered in the subscriptions' request order (workspace.closed is listed first)
    assert take(lifecycle, 2) == [
        envelope("workspace_closed", workspace_id="w1", workspace=before),
        envelope("tab_closed", tab_id="w1:t1", workspace_id="w1"),
    ]
    assert herdr_client.call("workspace.list")["workspaces"] == []


@pytest.mark.parametrize(
    ("active", "closed", "expected"),
    [
        ("w1:t2", "w1:t2", "w1:t1"),  # the active tab closes: the one before it takes over
        ("w1:t3", "w1:t3", "w1:t2"),
        ("w1:t1", "w1:t1", "w1:t2"),  # the first tab has nothing before it
        ("w1:t3", "w1:t1", "w1:t3"),  # closing another tab keeps the active one
        ("w1:t1", "w1:t3", "w1:t1"),
    ],
)
def test_active_tab_after_close(
    herdr_client: HerdrClient, three_tabs: list[str], active: str, closed: str, expected: str
) -> None:
    herdr_client.call("tab.focus", tab_id=active)
    herdr_client.call("tab.close", tab_id=closed)
    assert active_tab(herdr_client) == expected
    assert herdr_client.call("tab.get", tab_id=expected)["tab"]["focused"] is True


# -- events on create ------------------------------------------------------------------------------


def test_create_emits_tab_pane_and_layout(
    herdr_client: HerdrClient, ws: str, lifecycle: Subscription
) -> None:
    created = herdr_client.call("tab.create")
    herdr_client.call("tab.rename", tab_id="w1:t1", label="sentinel")
    events = take(lifecycle, 4)
    assert kinds(events) == ["tab_created", "pane_created", "layout_updated", "tab_renamed"]
    assert events[0]["data"] == {"type": "tab_created", "tab": created["tab"]}
    assert events[1]["data"]["pane"]["pane_id"] == "w1:p2"
    layout = events[2]["data"]["layout"]
    assert (layout["tab_id"], layout["focused_pane_id"]) == ("w1:t2", "w1:p2")


def test_focused_create_adds_the_focus_triple(
    herdr_client: HerdrClient, ws: str, lifecycle: Subscription
) -> None:
    herdr_client.call("tab.create", focus=True)
    events = {event["event"]: event for event in take(lifecycle, 6)}
    assert sorted(events) == sorted(
        [
            "tab_created",
            "pane_created",
            "layout_updated",
            "workspace_focused",
            "tab_focused",
            "pane_focused",
        ]
    )
    assert events["tab_focused"]["data"]["tab_id"] == "w1:t2"


# -- bad params ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "needle"),
    [
        ("tab.create", {"focus": 1}, "invalid type"),
        ("tab.create", {"label": 5}, "invalid type"),
        ("tab.get", {}, "missing field `tab_id`"),
        ("tab.rename", {"tab_id": "w1:t1"}, "missing field `label`"),
        ("tab.move", {"tab_id": "w1:t1"}, "missing field `insert_index`"),
        ("tab.move", {"tab_id": "w1:t1", "insert_index": "0"}, "invalid type"),
        ("tab.list", {"workspace_id": 1}, "invalid type"),
    ],
)
def test_malformed_params_are_invalid_request_with_empty_id(
    raw: Raw, method: str, params: dict[str, Any], needle: str
) -> None:
    assert needle in invalid_request(raw(method, **params))


# -- the herdr CLI, end to end ---------------------------------------------------------------------


def test_cli_create_list_get_focus_rename_close(
    herdr_cli: HerdrCli, herdr_client: HerdrClient, ws: str
) -> None:
    created = cli_json(
        herdr_cli("tab", "create", "--workspace", "w1", "--label", "cli", "--cwd", "/tmp"),
        "cli:tab:create",
    )
    assert created["tab"]["label"] == "cli"
    assert created["root_pane"]["pane_id"] == "w1:p2"

    listed = cli_json(herdr_cli("tab", "list", "--workspace", "1"), "cli:tab:list")
    assert [tab["tab_id"] for tab in listed["tabs"]] == ["w1:t1", "w1:t2"]
    assert herdr_cli("tab", "get", "w1:2").json["result"]["tab"]["tab_id"] == "w1:t2"

    focused = herdr_cli("tab", "focus", "w1:t2")
    assert focused.json["result"]["tab"]["focused"] is True

    renamed = herdr_cli("tab", "rename", "w1:t2", "two", "words")
    assert renamed.json["id"] == "cli:tab:rename"
    assert renamed.json["result"]["tab"]["label"] == "two words"

    closed = herdr_cli("tab", "close", "w1:1")
    assert (closed.code, closed.json) == (0, {"id": "cli:tab:close", "result": {"type": "ok"}})
    assert tabs(herdr_client) == [("w1:t2", 2, "two words")]


def test_cli_create_focus_uses_the_active_workspace(herdr_cli: HerdrCli, ws: str) -> None:
    created = herdr_cli("tab", "create", "--focus")
    assert created.json["result"]["tab"]["tab_id"] == "w1:t2"
    assert created.json["result"]["tab"]["focused"] is True


def test_cli_errors_are_the_servers_on_stderr(herdr_cli: HerdrCli) -> None:
    assert cli_error(herdr_cli("tab", "create")) == {
        "id": "cli:tab:create",
        "error": {"code": "workspace_not_found", "message": "no active workspace"},
    }
    assert cli_error(herdr_cli("tab", "get", "w1:t9")) == {
        "id": "cli:tab:get",
        "error": {"code": "tab_not_found", "message": "tab w1:t9 not found"},
    }
