"""``workspace.*`` over the socket and through ``herdr workspace …``, against Herdr's rules.

Covers reference §2 (ids, positions, lenient forms), §3.3 (behaviour), §4 (error codes and
messages), §6 (events) and checklist items 2, 7 and 21 of §12.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from herdr_sim.client import Subscription
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    ENV_ERRORS,
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
    take,
    wait_output,
    workspace_ids,
)
from tests.waits import wait_until

LIFECYCLE = [
    "workspace.created",
    "workspace.renamed",
    "workspace.moved",
    "workspace.closed",
    "workspace.focused",
    "tab.created",
    "tab.focused",
    "pane.created",
    "pane.focused",
    "layout.updated",
]


@pytest.fixture
def lifecycle(subscribe: Subscribe) -> Subscription:
    """A subscription to every workspace/tab/pane lifecycle event used here."""
    return subscribe(*LIFECYCLE)


@pytest.fixture
def three(herdr_client: HerdrClient) -> list[str]:
    """Three workspaces in /tmp; ``w1`` is active."""
    return [
        herdr_client.call("workspace.create", cwd="/tmp")["workspace"]["workspace_id"]
        for _ in range(3)
    ]


# -- creation (checklist 2) -------------------------------------------------------------------


def test_fresh_server_lists_no_workspaces(herdr_client: HerdrClient) -> None:
    assert herdr_client.call("workspace.list") == {"type": "workspace_list", "workspaces": []}


def test_first_create_matches_herdr_checklist(herdr_client: HerdrClient) -> None:
    created = herdr_client.call("workspace.create", cwd="/tmp", focus=True)
    assert created["type"] == "workspace_created"
    ws, tab, pane = created["workspace"], created["tab"], created["root_pane"]
    assert ws["workspace_id"] == "w1"
    assert ws["number"] == 1
    assert ws["focused"] is True
    assert (ws["tab_count"], ws["pane_count"]) == (1, 1)
    assert tab["tab_id"] == ws["active_tab_id"] == "w1:t1"
    assert (tab["number"], tab["label"], tab["focused"]) == (1, "1", True)
    assert pane["pane_id"] == "w1:p1"
    assert pane["terminal_id"].startswith("term_")
    assert pane["terminal_id"] != pane["pane_id"]
    assert (pane["tab_id"], pane["focused"], pane["cwd"]) == ("w1:t1", True, "/tmp")
    assert ws["label"] == "tmp"


def test_first_workspace_becomes_active_without_focus(herdr_client: HerdrClient) -> None:
    first = herdr_client.call("workspace.create", cwd="/tmp")["workspace"]
    second = herdr_client.call("workspace.create", cwd="/tmp")["workspace"]
    assert first["focused"] is True
    assert second["focused"] is False
    assert [ws["focused"] for ws in herdr_client.call("workspace.list")["workspaces"]] == [
        True,
        False,
    ]


def test_focus_true_makes_the_new_workspace_active(herdr_client: HerdrClient) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    created = herdr_client.call("workspace.create", cwd="/tmp", focus=True)
    assert created["workspace"]["focused"] and created["root_pane"]["focused"]
    assert [ws["focused"] for ws in herdr_client.call("workspace.list")["workspaces"]] == [
        False,
        True,
    ]


def test_ids_are_stable_and_never_reused(herdr_client: HerdrClient) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    herdr_client.call("workspace.create", cwd="/tmp")
    herdr_client.call("workspace.close", workspace_id="w2")
    assert herdr_client.call("workspace.create", cwd="/tmp")["workspace"]["workspace_id"] == "w3"
    herdr_client.call("workspace.close", workspace_id="w1")
    assert workspace_ids(herdr_client) == ["w3"]
    assert (
        herdr_client.call("workspace.get", workspace_id="w3")["workspace"]["workspace_id"] == "w3"
    )


def test_number_is_the_display_position(herdr_client: HerdrClient, three: list[str]) -> None:
    herdr_client.call("workspace.close", workspace_id="w1")
    listed = herdr_client.call("workspace.list")["workspaces"]
    assert [(ws["workspace_id"], ws["number"]) for ws in listed] == [("w2", 1), ("w3", 2)]


def test_custom_label_is_kept_verbatim(herdr_client: HerdrClient) -> None:
    assert herdr_client.call("workspace.create", cwd="/tmp", label="  my ws ")["workspace"][
        "label"
    ] == ("  my ws ")


# -- automatic labels and cwd -------------------------------------------------------------------


def test_auto_label_is_the_cwd_basename(herdr_client: HerdrClient, short_dir: Path) -> None:
    cwd = short_dir / "proj-a"
    cwd.mkdir()
    assert herdr_client.call("workspace.create", cwd=str(cwd))["workspace"]["label"] == "proj-a"


def test_auto_label_is_the_git_repo_name(herdr_client: HerdrClient, short_dir: Path) -> None:
    nested = short_dir / "myrepo" / "src" / "deep"
    nested.mkdir(parents=True)
    (short_dir / "myrepo" / ".git").mkdir()
    (short_dir / "myrepo" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert herdr_client.call("workspace.create", cwd=str(nested))["workspace"]["label"] == "myrepo"


def test_git_marker_without_head_is_not_a_repo(herdr_client: HerdrClient, short_dir: Path) -> None:
    nested = short_dir / "fake" / "inner"
    nested.mkdir(parents=True)
    (short_dir / "fake" / ".git").mkdir()
    assert herdr_client.call("workspace.create", cwd=str(nested))["workspace"]["label"] == "inner"


def test_auto_label_follows_the_root_panes_current_cwd(
    herdr_client: HerdrClient, short_dir: Path
) -> None:
    # Herdr's src/workspace.rs display_name_from: the label of the first tab's root pane's
    # cwd now (resolved_identity_cwd_from), not of the cwd the workspace was created in
    cwd = short_dir / "proj-b"
    cwd.mkdir()
    created = herdr_client.call("workspace.create", cwd=str(cwd))
    assert created["workspace"]["label"] == "proj-b"
    root = created["root_pane"]["pane_id"]
    wait_output(herdr_client.call, root, regex=r"^\$")
    enter(herdr_client, root, "cd /var")

    def label() -> str:
        info = herdr_client.call("workspace.get", workspace_id="w1")["workspace"]
        return str(info["label"])

    wait_until(lambda: label() == "var", what="the label to follow the cd")
    herdr_client.call("workspace.rename", workspace_id="w1", label="mine")
    enter(herdr_client, root, "cd /tmp")
    assert label() == "mine"  # a custom label stays


def test_auto_label_is_tilde_for_home(herdr_client: HerdrClient, home: Path) -> None:
    assert herdr_client.call("workspace.create", cwd=str(home))["workspace"]["label"] == "~"


def test_default_cwd_is_home_when_nothing_is_focused(herdr_client: HerdrClient, home: Path) -> None:
    created = herdr_client.call("workspace.create")
    assert created["root_pane"]["cwd"] == str(home)
    assert created["workspace"]["label"] == "~"


def test_default_cwd_follows_the_focused_pane(herdr_client: HerdrClient, short_dir: Path) -> None:
    target = short_dir / "moved-here"
    target.mkdir()
    pane = herdr_client.call("workspace.create", cwd="/tmp")["root_pane"]["pane_id"]
    enter(herdr_client, pane, f"cd {target}")
    wait_until(
        lambda: herdr_client.call("pane.get", pane_id=pane)["pane"].get("cwd") == str(target),
        what="the shell to change directory",
    )
    created = herdr_client.call("workspace.create")
    assert created["root_pane"]["cwd"] == str(target)
    assert created["workspace"]["label"] == "moved-here"


def test_source_workspace_supplies_the_follow_cwd(
    herdr_client: HerdrClient, short_dir: Path
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    herdr_client.call("workspace.create", cwd=str(short_dir), focus=True)
    created = herdr_client.call("workspace.create", source_workspace_id="w1")
    assert created["root_pane"]["cwd"] == "/tmp"


def test_missing_cwd_still_creates_and_starts_in_home(
    herdr_client: HerdrClient, short_dir: Path, home: Path
) -> None:
    created = herdr_client.call("workspace.create", cwd=str(short_dir / "not-there"))
    assert created["workspace"]["label"] == "not-there"
    assert created["root_pane"]["cwd"] == str(home)


def test_env_reaches_the_pane_and_herdr_variables_win(herdr_client: HerdrClient) -> None:
    pane = herdr_client.call(
        "workspace.create", cwd="/tmp", env={"HS_MARK": "v1", "HERDR_PANE_ID": "bogus"}
    )["root_pane"]["pane_id"]
    command = 'test -S "$HERDR_SOCKET_PATH" && echo mark=$HS_MARK/$HERDR_PANE_ID/sock-ok'
    enter(herdr_client, pane, command)
    matched = wait_output(herdr_client.call, pane, text="mark=v1/w1:p1/sock-ok", timeout_ms=5000)
    assert matched["matched_line"].strip() == "mark=v1/w1:p1/sock-ok"


@pytest.mark.parametrize(("env", "message"), ENV_ERRORS)
def test_invalid_env_creates_nothing(
    herdr_client: HerdrClient, env: dict[str, str], message: str
) -> None:
    assert failure(herdr_client.call, "workspace.create", cwd="/tmp", env=env) == (
        "invalid_env",
        message,
    )
    assert workspace_ids(herdr_client) == []
    assert herdr_client.call("workspace.create", cwd="/tmp")["workspace"]["workspace_id"] == "w1"


# -- get / focus / rename ------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["w2", "2", "w_2"])
def test_get_accepts_id_and_position_forms(
    herdr_client: HerdrClient, three: list[str], form: str
) -> None:
    workspace = herdr_client.call("workspace.get", workspace_id=form)["workspace"]
    assert (workspace["workspace_id"], workspace["number"]) == ("w2", 2)


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("workspace.get", {}),
        ("workspace.focus", {}),
        ("workspace.rename", {"label": "x"}),
        ("workspace.move", {"insert_index": 0}),
        ("workspace.close", {}),
        ("workspace.report_metadata", {"source": "s", "tokens": {"a": "1"}}),
    ],
)
@pytest.mark.parametrize("target", ["w9", "9", "w_9", "nope"])
def test_unknown_workspace_is_workspace_not_found(
    herdr_client: HerdrClient, method: str, extra: dict[str, Any], target: str
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    assert failure(herdr_client.call, method, workspace_id=target, **extra) == (
        "workspace_not_found",
        f"workspace {target} not found",
    )


def test_focus_switches_the_active_workspace(herdr_client: HerdrClient, three: list[str]) -> None:
    focused = herdr_client.call("workspace.focus", workspace_id="w3")["workspace"]
    assert (focused["workspace_id"], focused["focused"]) == ("w3", True)
    assert [ws["focused"] for ws in herdr_client.call("workspace.list")["workspaces"]] == [
        False,
        False,
        True,
    ]
    assert herdr_client.call("pane.get", pane_id="w3:p1")["pane"]["focused"] is True
    assert herdr_client.call("pane.get", pane_id="w1:p1")["pane"]["focused"] is False


def test_focus_emits_the_focus_triple(
    herdr_client: HerdrClient, three: list[str], lifecycle: Subscription
) -> None:
    herdr_client.call("workspace.focus", workspace_id="2")
    assert take(lifecycle, 3) == focus_events("w2", "w2:t1", "w2:p1")


def test_focusing_the_active_workspace_emits_nothing(
    herdr_client: HerdrClient, three: list[str], lifecycle: Subscription
) -> None:
    herdr_client.call("workspace.focus", workspace_id="w1")
    herdr_client.call("workspace.rename", workspace_id="w1", label="sentinel")
    assert kinds(take(lifecycle, 1)) == ["workspace_renamed"]


def test_rename_sets_the_label_and_emits_renamed(
    herdr_client: HerdrClient, lifecycle: Subscription
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    take(lifecycle, 7)
    renamed = herdr_client.call("workspace.rename", workspace_id="1", label="  build box ")
    assert renamed["type"] == "workspace_info"
    assert renamed["workspace"]["label"] == "  build box "
    assert (
        herdr_client.call("workspace.get", workspace_id="w1")["workspace"]["label"]
        == "  build box "
    )
    assert take(lifecycle, 1) == [
        envelope("workspace_renamed", workspace_id="w1", label="  build box ")
    ]


def test_rename_to_empty_is_a_name_not_a_clear(herdr_client: HerdrClient) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    assert (
        herdr_client.call("workspace.rename", workspace_id="w1", label="")["workspace"]["label"]
        == ""
    )


# -- move ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("workspace_id", "insert_index", "order"),
    [
        ("w1", 2, ["w2", "w1", "w3"]),
        ("w1", 3, ["w2", "w3", "w1"]),
        ("w3", 0, ["w3", "w1", "w2"]),
        ("w3", 1, ["w1", "w3", "w2"]),
        ("w2", 0, ["w2", "w1", "w3"]),
    ],
)
def test_move_inserts_before_the_slot_of_the_original_list(
    herdr_client: HerdrClient,
    three: list[str],
    workspace_id: str,
    insert_index: int,
    order: list[str],
) -> None:
    moved = herdr_client.call(
        "workspace.move", workspace_id=workspace_id, insert_index=insert_index
    )
    assert moved["type"] == "workspace_list"
    assert [ws["workspace_id"] for ws in moved["workspaces"]] == order
    assert [ws["number"] for ws in moved["workspaces"]] == [1, 2, 3]
    assert workspace_ids(herdr_client) == order


def test_move_emits_moved_with_the_requested_index(
    herdr_client: HerdrClient, three: list[str], lifecycle: Subscription
) -> None:
    moved = herdr_client.call("workspace.move", workspace_id="w1", insert_index=3)
    assert take(lifecycle, 1) == [
        envelope(
            "workspace_moved", workspace_id="w1", insert_index=3, workspaces=moved["workspaces"]
        )
    ]


@pytest.mark.parametrize("insert_index", [0, 1])
def test_move_to_its_own_slot_changes_nothing_and_emits_nothing(
    herdr_client: HerdrClient, three: list[str], lifecycle: Subscription, insert_index: int
) -> None:
    moved = herdr_client.call("workspace.move", workspace_id="w1", insert_index=insert_index)
    assert [ws["workspace_id"] for ws in moved["workspaces"]] == ["w1", "w2", "w3"]
    herdr_client.call("workspace.rename", workspace_id="w2", label="sentinel")
    assert kinds(take(lifecycle, 1)) == ["workspace_renamed"]


def test_move_keeps_the_active_workspace(herdr_client: HerdrClient, three: list[str]) -> None:
    herdr_client.call("workspace.focus", workspace_id="w2")
    herdr_client.call("workspace.move", workspace_id="w2", insert_index=0)
    listed = herdr_client.call("workspace.list")["workspaces"]
    assert (listed[0]["workspace_id"], listed[0]["focused"]) == ("w2", True)


def test_move_that_shifts_the_active_index_re_emits_the_focus_events(
    herdr_client: HerdrClient, three: list[str], lifecycle: Subscription
) -> None:
    # Herdr's src/app/api.rs sync_focus_events keys its last focus by the active
    # workspace's index: w1 moving from 0 to 2 is a focus change, with its three events
    moved = herdr_client.call("workspace.move", workspace_id="w1", insert_index=3)
    assert take(lifecycle, 4) == [
        envelope(
            "workspace_moved", workspace_id="w1", insert_index=3, workspaces=moved["workspaces"]
        ),
        *focus_events("w1", "w1:t1", "w1:p1"),
    ]


def test_move_that_keeps_the_active_index_emits_no_focus_events(
    herdr_client: HerdrClient, three: list[str], lifecycle: Subscription
) -> None:
    herdr_client.call("workspace.move", workspace_id="w3", insert_index=1)  # w1 stays first
    herdr_client.call("workspace.rename", workspace_id="w2", label="sentinel")
    assert kinds(take(lifecycle, 2)) == ["workspace_moved", "workspace_renamed"]


def test_move_past_the_end_is_workspace_move_failed(
    herdr_client: HerdrClient, three: list[str]
) -> None:
    assert failure(herdr_client.call, "workspace.move", workspace_id="w1", insert_index=4) == (
        "workspace_move_failed",
        "insert_index 4 is out of bounds",
    )
    assert workspace_ids(herdr_client) == ["w1", "w2", "w3"]


# -- close (checklist 7) ---------------------------------------------------------------------------


def test_close_by_position_form(herdr_client: HerdrClient, three: list[str]) -> None:
    assert herdr_client.call("workspace.close", workspace_id="1") == {"type": "ok"}
    assert workspace_ids(herdr_client) == ["w2", "w3"]


def test_close_emits_closed_with_the_final_snapshot(
    herdr_client: HerdrClient, lifecycle: Subscription
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp", label="doomed")
    herdr_client.call("tab.create", workspace_id="w1")
    before = herdr_client.call("workspace.get", workspace_id="w1")["workspace"]
    take(lifecycle, 7 + 3)
    herdr_client.call("workspace.close", workspace_id="w1")
    assert take(lifecycle, 1) == [envelope("workspace_closed", workspace_id="w1", workspace=before)]
    assert before["tab_count"] == 2 and before["label"] == "doomed"
    assert failure(herdr_client.call, "pane.get", pane_id="w1:p1")[0] == "pane_not_found"


def test_closing_the_active_workspace_activates_the_one_at_its_position(
    herdr_client: HerdrClient, three: list[str]
) -> None:
    herdr_client.call("workspace.focus", workspace_id="w2")
    herdr_client.call("workspace.close", workspace_id="w2")
    assert herdr_client.call("workspace.get", workspace_id="w3")["workspace"]["focused"] is True
    herdr_client.call("workspace.close", workspace_id="w3")
    assert herdr_client.call("workspace.get", workspace_id="w1")["workspace"]["focused"] is True


def test_closing_another_workspace_keeps_focus(herdr_client: HerdrClient, three: list[str]) -> None:
    herdr_client.call("workspace.focus", workspace_id="w3")
    herdr_client.call("workspace.close", workspace_id="w1")
    listed = herdr_client.call("workspace.list")["workspaces"]
    assert [(ws["workspace_id"], ws["focused"]) for ws in listed] == [("w2", False), ("w3", True)]


def test_closing_the_last_workspace_leaves_nothing_focused(herdr_client: HerdrClient) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    herdr_client.call("workspace.close", workspace_id="w1", close_group=True)
    snapshot = herdr_client.call("session.snapshot")["snapshot"]
    assert snapshot["workspaces"] == []
    assert "focused_workspace_id" not in snapshot
    assert failure(herdr_client.call, "tab.create") == (
        "workspace_not_found",
        "no active workspace",
    )


# -- events ----------------------------------------------------------------------------------------


def test_first_create_emits_created_events_then_the_focus_triple(
    herdr_client: HerdrClient, lifecycle: Subscription
) -> None:
    # One stream delivers in its subscriptions' request order within a poll round (Herdr's
    # src/api/server.rs), so the kinds are compared as a set; the hub's order is the recorder's.
    created = herdr_client.call("workspace.create", cwd="/tmp")
    events = {event["event"]: event for event in take(lifecycle, 7)}
    assert sorted(events) == sorted(
        [
            "workspace_created",
            "tab_created",
            "pane_created",
            "layout_updated",
            "workspace_focused",
            "tab_focused",
            "pane_focused",
        ]
    )
    assert events["workspace_created"]["data"] == {
        "type": "workspace_created",
        "workspace": created["workspace"],
    }
    assert events["tab_created"]["data"] == {"type": "tab_created", "tab": created["tab"]}
    assert events["pane_created"]["data"]["pane"]["pane_id"] == "w1:p1"
    layout = events["layout_updated"]["data"]["layout"]
    assert (layout["workspace_id"], layout["tab_id"], layout["focused_pane_id"]) == (
        "w1",
        "w1:t1",
        "w1:p1",
    )
    assert events["pane_focused"]["data"] == {
        "type": "pane_focused",
        "pane_id": "w1:p1",
        "workspace_id": "w1",
    }


def test_unfocused_create_emits_no_focus_events(
    herdr_client: HerdrClient, lifecycle: Subscription
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    take(lifecycle, 7)
    herdr_client.call("workspace.create", cwd="/tmp")
    herdr_client.call("workspace.rename", workspace_id="w1", label="sentinel")
    assert kinds(take(lifecycle, 5)) == [
        "workspace_created",
        "tab_created",
        "pane_created",
        "layout_updated",
        "workspace_renamed",
    ]


def test_focused_create_emits_the_triple_for_the_new_workspace(
    herdr_client: HerdrClient, lifecycle: Subscription
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    take(lifecycle, 7)
    herdr_client.call("workspace.create", cwd="/tmp", focus=True)
    focus = [event for event in take(lifecycle, 7) if event["event"].endswith("_focused")]
    assert sorted(kinds(focus)) == ["pane_focused", "tab_focused", "workspace_focused"]
    assert {event["data"]["workspace_id"] for event in focus} == {"w2"}


# -- bad params ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "needle"),
    [
        ("workspace.create", {"focus": "yes"}, "invalid type"),
        ("workspace.create", {"env": {"A": 1}}, "invalid type"),
        ("workspace.get", {}, "missing field `workspace_id`"),
        ("workspace.rename", {"workspace_id": "w1"}, "missing field `label`"),
        ("workspace.move", {"workspace_id": "w1"}, "missing field `insert_index`"),
        ("workspace.move", {"workspace_id": "w1", "insert_index": -1}, "invalid value"),
        ("workspace.close", {"workspace_id": 1}, "invalid type"),
    ],
)
def test_malformed_params_are_invalid_request_with_empty_id(
    raw: Raw, method: str, params: dict[str, Any], needle: str
) -> None:
    assert needle in invalid_request(raw(method, **params))


# -- the herdr CLI, end to end ---------------------------------------------------------------------


def test_cli_create_list_get_focus_rename_close(
    herdr_cli: HerdrCli, herdr_client: HerdrClient
) -> None:
    created = cli_json(
        herdr_cli("workspace", "create", "--cwd", "/tmp", "--label", "cli ws"),
        "cli:workspace:create",
    )
    assert created["workspace"]["label"] == "cli ws"
    assert created["root_pane"]["pane_id"] == "w1:p1"
    herdr_cli("workspace", "create", "--cwd", "/tmp", "--no-focus")

    listed = cli_json(herdr_cli("workspace", "list"), "cli:workspace:list")
    assert [ws["workspace_id"] for ws in listed["workspaces"]] == ["w1", "w2"]
    assert herdr_cli("workspace", "get", "2").json["result"]["workspace"]["workspace_id"] == "w2"

    focused = herdr_cli("workspace", "focus", "w2")
    assert focused.json["result"]["workspace"]["focused"] is True

    renamed = herdr_cli("workspace", "rename", "w2", "two", "words")
    assert renamed.json["id"] == "cli:workspace:rename"
    assert renamed.json["result"]["workspace"]["label"] == "two words"

    closed = herdr_cli("workspace", "close", "1")
    assert (closed.code, closed.json) == (
        0,
        {"id": "cli:workspace:close", "result": {"type": "ok"}},
    )
    assert workspace_ids(herdr_client) == ["w2"]


def test_cli_create_focus_flag_and_env(herdr_cli: HerdrCli, herdr_client: HerdrClient) -> None:
    herdr_cli("workspace", "create", "--cwd", "/tmp")
    created = herdr_cli("workspace", "create", "--cwd", "/tmp", "--focus", "--env", "HS_CLI=yes")
    assert created.json["result"]["workspace"]["focused"] is True
    pane = created.json["result"]["root_pane"]["pane_id"]
    enter(herdr_client, pane, "echo got=$HS_CLI")
    wait_output(herdr_client.call, pane, text="got=yes", timeout_ms=5000)


def test_cli_unknown_workspace_prints_the_error_on_stderr(herdr_cli: HerdrCli) -> None:
    assert cli_error(herdr_cli("workspace", "get", "w9")) == {
        "id": "cli:workspace:get",
        "error": {"code": "workspace_not_found", "message": "workspace w9 not found"},
    }
