"""Pane structure methods over the socket and the `herdr` CLI: split, list, get, current,
focus, rename, close and move (reference §2, §3.4, §4, §6, §12 items 7 and 21).

Geometry and layout-tree methods live in ``test_layout.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from herdr_sim import Simulator
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    ENV_ERRORS,
    Subscribe,
    cli_error,
    cli_json,
    enter,
    envelope,
    events_since,
    failure,
    focus_events,
    kinds_since,
    pane_ids,
    process_info,
    rects,
    split,
    tab_ids,
    take,
    wait_line,
    workspace_ids,
)
from tests.waits import wait_until

# -- pane.split ------------------------------------------------------------------------------


def test_split_returns_the_new_unfocused_pane(herdr_client: HerdrClient, root: str) -> None:
    pane = herdr_client.call("pane.split", target_pane_id=root, direction="right")["pane"]
    assert pane["pane_id"] == "w1:p2"
    assert (pane["workspace_id"], pane["tab_id"]) == ("w1", "w1:t1")
    assert pane["focused"] is False
    assert pane["terminal_id"].startswith("term_")
    assert pane["terminal_id"] != herdr_client.call("pane.get", pane_id=root)["pane"]["terminal_id"]
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == root


def test_split_emits_pane_created_then_layout_updated(
    herdr_client: HerdrClient, root: str, subscribe: Subscribe
) -> None:
    sub = subscribe("pane.created", "layout.updated")
    herdr_client.call("pane.split", target_pane_id=root, direction="down")
    created, layout = take(sub, 2)
    assert created["event"] == "pane_created"
    assert created["data"]["pane"]["pane_id"] == "w1:p2"
    assert layout["event"] == "layout_updated"
    assert [p["pane_id"] for p in layout["data"]["layout"]["panes"]] == [root, "w1:p2"]


def test_split_with_focus_focuses_the_new_pane(herdr_client: HerdrClient, root: str) -> None:
    pane = herdr_client.call("pane.split", target_pane_id=root, direction="right", focus=True)[
        "pane"
    ]
    assert pane["focused"] is True
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == "w1:p2"


def test_split_without_target_splits_focused_pane_of_active_workspace(
    herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")  # w2, not focused
    right = split(herdr_client, root)
    herdr_client.call("pane.focus", pane_id=right)
    pane = herdr_client.call("pane.split", direction="down")["pane"]
    assert pane["pane_id"] == "w1:p3"
    placed = rects(herdr_client.call("pane.layout", pane_id=right)["layout"])
    assert placed["w1:p3"]["x"] == placed[right]["x"]  # stacked under the focused pane


def test_split_with_workspace_id_splits_that_workspaces_focused_pane(
    herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    pane = herdr_client.call("pane.split", workspace_id="w2", direction="right")["pane"]
    assert (pane["pane_id"], pane["tab_id"]) == ("w2:p2", "w2:t1")
    assert pane_ids(herdr_client, workspace_id="w1") == [root]


@pytest.mark.parametrize(
    ("ratio", "stored"),
    [(None, 0.5), (0.3, 0.3), (0.01, 0.1), (0.95, 0.9), (-4.0, 0.1)],
)
def test_split_ratio_defaults_to_half_and_is_clamped(
    herdr_client: HerdrClient, root: str, ratio: float | None, stored: float
) -> None:
    params: dict[str, Any] = {} if ratio is None else {"ratio": ratio}
    split(herdr_client, root, **params)
    assert herdr_client.call("pane.layout", pane_id=root)["layout"]["splits"][0]["ratio"] == stored


def test_split_cwd_follows_the_target_pane_shell(herdr_client: HerdrClient, root: str) -> None:
    enter(herdr_client, root, "cd /usr")
    wait_until(
        lambda: herdr_client.call("pane.get", pane_id=root)["pane"].get("cwd") == "/usr", what="cd"
    )
    followed = herdr_client.call("pane.split", target_pane_id=root, direction="right")["pane"]
    assert followed["cwd"] == "/usr"
    explicit = herdr_client.call("pane.split", target_pane_id=root, direction="down", cwd="/")[
        "pane"
    ]
    assert explicit["cwd"] == "/"


def test_split_env_reaches_the_process_and_herdr_vars_win(
    herdr_client: HerdrClient, root: str
) -> None:
    env = {"MY_VAR": "hello", "HERDR_PANE_ID": "bogus", "HERDR_TAB_ID": "bogus"}
    pane = split(herdr_client, root, env=env)
    enter(
        herdr_client,
        pane,
        'echo "got=$MY_VAR,$HERDR_PANE_ID,$HERDR_TAB_ID,$HERDR_WORKSPACE_ID,$HERDR_ENV"',
    )
    assert wait_line(herdr_client, pane, r"^got=") == "got=hello,w1:p2,w1:t1,w1,1"


@pytest.mark.parametrize(("env", "message"), ENV_ERRORS)
def test_split_rejects_invalid_env_without_creating_a_pane(
    herdr_client: HerdrClient, root: str, env: dict[str, str], message: str
) -> None:
    assert failure(
        herdr_client.call, "pane.split", target_pane_id=root, direction="right", env=env
    ) == (
        "invalid_env",
        message,
    )
    assert pane_ids(herdr_client) == [root]


@pytest.mark.parametrize(
    "params",
    [{"target_pane_id": "w1:p9"}, {"workspace_id": "w9"}, {"target_pane_id": "nonsense"}],
)
def test_split_of_unknown_target_is_pane_not_found(
    herdr_client: HerdrClient, root: str, params: dict[str, str]
) -> None:
    assert failure(herdr_client.call, "pane.split", direction="right", **params) == (
        "pane_not_found",
        "pane not found",
    )


def test_split_with_no_workspace_is_pane_not_found(herdr_client: HerdrClient) -> None:
    assert failure(herdr_client.call, "pane.split", direction="right") == (
        "pane_not_found",
        "pane not found",
    )


def test_split_target_is_resolved_before_env_is_checked(
    herdr_client: HerdrClient, root: str
) -> None:
    code, _ = failure(
        herdr_client.call, "pane.split", target_pane_id="w1:p9", direction="right", env={"": "x"}
    )
    assert code == "pane_not_found"


def test_split_has_no_pane_cap_unlike_layout_apply(herdr_client: HerdrClient, root: str) -> None:
    # Herdr limits only layout.apply trees to 24 panes; interactive splits go on.
    for index in range(24):
        herdr_client.call("pane.split", direction="down" if index % 2 else "right")
    assert len(pane_ids(herdr_client)) == 25
    # pane number 26 encodes as "T" (bijective base 32, no I/L/O/U)
    assert herdr_client.call("tab.create", cwd="/tmp")["root_pane"]["pane_id"] == "w1:pT"


def test_cli_split_passes_target_ratio_env_and_prints_the_pane(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    result = herdr_cli(
        "pane", "split", root, "--direction", "down", "--ratio", "0.25", "--env", "K=V"
    )
    assert cli_json(result, "cli:pane:split")["pane"]["pane_id"] == "w1:p2"
    assert herdr_client.call("pane.layout")["layout"]["splits"][0] == {
        "id": "split_0_root",
        "direction": "down",
        "ratio": 0.25,
        "rect": {"x": 26, "y": 1, "width": 94, "height": 39},
    }
    enter(herdr_client, "w1:p2", 'echo "k=$K"')
    assert wait_line(herdr_client, "w1:p2", "^k=") == "k=V"


def test_cli_split_without_target_splits_the_calling_pane(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    other = split(herdr_client, root)
    result = herdr_cli("pane", "split", "--direction", "down", env={"HERDR_PANE_ID": other})
    assert result.code == 0, result.stderr
    layout = herdr_client.call("pane.layout")["layout"]
    placed = rects(layout)
    assert placed["w1:p3"]["x"] == placed[other]["x"] == 73


def test_cli_split_current_requires_herdr_pane_id(herdr_cli: HerdrCli, root: str) -> None:
    result = herdr_cli("pane", "split", "--current", "--direction", "right")
    assert result.code == 2
    assert "--current requires HERDR_PANE_ID" in result.stderr


def test_cli_split_error_is_json_on_stderr(herdr_cli: HerdrCli, root: str) -> None:
    result = herdr_cli("pane", "split", "w1:p9", "--direction", "right")
    assert cli_error(result) == {
        "id": "cli:pane:split",
        "error": {"code": "pane_not_found", "message": "pane not found"},
    }


@pytest.mark.parametrize(
    ("assignment", "message"),
    [("=x", "env key must not be empty"), ("NOEQ", "env must use KEY=VALUE")],
)
def test_cli_split_checks_env_assignments_locally(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str, assignment: str, message: str
) -> None:
    result = herdr_cli("pane", "split", root, "--direction", "right", "--env", assignment)
    assert (result.code, result.stderr.strip()) == (2, message)
    assert pane_ids(herdr_client) == [root]


# -- pane.list / pane.get / pane.current -----------------------------------------------------


def test_list_orders_workspaces_tabs_then_layout(herdr_client: HerdrClient, root: str) -> None:
    right = split(herdr_client, root, "right")  # w1:p2
    split(herdr_client, root, "down")  # w1:p3 sits between p1 and p2 in layout order
    herdr_client.call("tab.create", workspace_id="w1", cwd="/tmp")  # w1:p4 in w1:t2
    herdr_client.call("workspace.create", cwd="/tmp")  # w2:p1
    assert pane_ids(herdr_client) == [root, "w1:p3", right, "w1:p4", "w2:p1"]
    assert pane_ids(herdr_client, workspace_id="w2") == ["w2:p1"]
    assert pane_ids(herdr_client, workspace_id="1") == [root, "w1:p3", right, "w1:p4"]


def test_list_of_unknown_workspace_fails(herdr_client: HerdrClient, root: str) -> None:
    assert failure(herdr_client.call, "pane.list", workspace_id="w9") == (
        "workspace_not_found",
        "workspace w9 not found",
    )


def test_list_with_no_workspace_is_empty(herdr_client: HerdrClient) -> None:
    assert herdr_client.call("pane.list") == {"type": "pane_list", "panes": []}


def test_cli_list_filters_by_workspace(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    listed = cli_json(herdr_cli("pane", "list", "--workspace", "w2"), "cli:pane:list")
    assert [p["pane_id"] for p in listed["panes"]] == ["w2:p1"]


@pytest.mark.parametrize("form", ["w1:p2", "w1-2", "1-2", "w_1:p2", "1:p2", "p_2"])
def test_get_accepts_every_id_form_and_answers_canonically(
    herdr_client: HerdrClient, root: str, form: str
) -> None:
    split(herdr_client, root)
    assert herdr_client.call("pane.get", pane_id=form)["pane"]["pane_id"] == "w1:p2"


@pytest.mark.parametrize("form", ["w1:p9", "w9:p1", "w1-9", "p_99", "garbage"])
def test_get_of_unknown_pane_names_it(herdr_client: HerdrClient, root: str, form: str) -> None:
    assert failure(herdr_client.call, "pane.get", pane_id=form) == (
        "pane_not_found",
        f"pane {form} not found",
    )


@pytest.mark.parametrize(
    ("method", "extra"), [("pane.focus", {}), ("pane.rename", {"label": "x"}), ("pane.close", {})]
)
def test_focus_rename_and_close_of_unknown_pane_name_it(
    herdr_client: HerdrClient, root: str, method: str, extra: dict[str, Any]
) -> None:
    assert failure(herdr_client.call, method, pane_id="w1:p9", **extra) == (
        "pane_not_found",
        "pane w1:p9 not found",
    )


def test_cli_get_prints_the_canonical_pane(herdr_cli: HerdrCli, root: str) -> None:
    result = herdr_cli("pane", "get", "w1-1")
    assert cli_json(result, "cli:pane:get")["pane"]["pane_id"] == root
    assert cli_error(herdr_cli("pane", "get", "w1:p7"))["error"] == {
        "code": "pane_not_found",
        "message": "pane w1:p7 not found",
    }


def test_current_is_the_focused_pane_or_the_caller(herdr_client: HerdrClient, root: str) -> None:
    other = split(herdr_client, root)
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == root
    assert herdr_client.call("pane.current", caller_pane_id=other)["pane"]["pane_id"] == other
    assert herdr_client.call("pane.current", caller_pane_id="w1-2") == {
        "type": "pane_current",
        "pane": herdr_client.call("pane.get", pane_id=other)["pane"],
    }


def test_current_of_unknown_caller_is_plain_pane_not_found(
    herdr_client: HerdrClient, root: str
) -> None:
    assert failure(herdr_client.call, "pane.current", caller_pane_id="w1:p9") == (
        "pane_not_found",
        "pane not found",
    )


def test_current_with_no_workspace_is_pane_not_found(herdr_client: HerdrClient) -> None:
    assert failure(herdr_client.call, "pane.current") == ("pane_not_found", "pane not found")


def test_cli_current_uses_herdr_pane_id_then_pane_flag(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    other = split(herdr_client, root)
    inside = herdr_cli("pane", "current", env={"HERDR_PANE_ID": other})
    assert inside.json["result"]["pane"]["pane_id"] == other
    flagged = herdr_cli("pane", "current", "--pane", root, env={"HERDR_PANE_ID": other})
    assert flagged.json["result"]["pane"]["pane_id"] == root
    outside = herdr_cli("pane", "current")
    assert outside.json["result"]["pane"]["pane_id"] == root
    assert cli_error(herdr_cli("pane", "current", env={"HERDR_PANE_ID": "w1:p9"}))["error"][
        "message"
    ] == ("pane not found")


# -- pane.focus ------------------------------------------------------------------------------


def test_focus_switches_workspace_and_tab(herdr_client: HerdrClient, root: str) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    hidden = herdr_client.call("tab.create", workspace_id="w2", cwd="/tmp")["root_pane"]["pane_id"]
    pane = herdr_client.call("pane.focus", pane_id=hidden)["pane"]
    assert (pane["pane_id"], pane["focused"]) == ("w2:p2", True)
    workspace = herdr_client.call("workspace.get", workspace_id="w2")["workspace"]
    assert (workspace["focused"], workspace["active_tab_id"]) == (True, "w2:t2")
    assert herdr_client.call("pane.get", pane_id=root)["pane"]["focused"] is False


def test_focus_emits_the_focus_triple_in_order(
    herdr_client: HerdrClient, root: str, subscribe: Subscribe
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    hidden = herdr_client.call("tab.create", workspace_id="w2", cwd="/tmp")["root_pane"]["pane_id"]
    sub = subscribe("workspace.focused", "tab.focused", "pane.focused")
    herdr_client.call("pane.focus", pane_id=hidden)
    assert take(sub, 3) == focus_events("w2", "w2:t2", "w2:p2")


@pytest.mark.herdr_sim_only
def test_focus_of_the_focused_pane_emits_nothing(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    mark = len(sim.events)
    assert herdr_client.call("pane.focus", pane_id="w1-1")["pane"]["pane_id"] == root
    assert kinds_since(sim, mark) == []


# -- pane.rename -----------------------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_rename_trims_and_sets_the_label_without_event(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    mark = len(sim.events)
    assert (
        herdr_client.call("pane.rename", pane_id=root, label="  build  ")["pane"]["label"]
        == "build"
    )
    assert herdr_client.call("pane.get", pane_id=root)["pane"]["label"] == "build"
    assert kinds_since(sim, mark) == []


@pytest.mark.parametrize("params", [{"label": "   "}, {"label": ""}, {"label": None}, {}])
def test_rename_with_blank_or_absent_label_clears(
    herdr_client: HerdrClient, root: str, params: dict[str, Any]
) -> None:
    herdr_client.call("pane.rename", pane_id=root, label="build")
    pane = herdr_client.call("pane.rename", pane_id=root, **params)["pane"]
    assert "label" not in pane


def test_cli_rename_joins_words_and_clear_clears(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    named = cli_json(herdr_cli("pane", "rename", root, "unit", "tests"), "cli:pane:rename")
    assert named["pane"]["label"] == "unit tests"
    cleared = herdr_cli("pane", "rename", root, "--clear")
    assert "label" not in cleared.json["result"]["pane"]
    assert "label" not in herdr_client.call("pane.get", pane_id=root)["pane"]


# -- pane.close ------------------------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_close_removes_the_pane_and_emits_closed_then_layout(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    other = split(herdr_client, root)
    mark = len(sim.events)
    assert herdr_client.call("pane.close", pane_id=other) == {"type": "ok"}
    events = events_since(sim, mark)
    assert [kind for kind, _ in events] == ["pane_closed", "layout_updated"]
    assert events[0][1] == {"type": "pane_closed", "pane_id": other, "workspace_id": "w1"}
    assert [p["pane_id"] for p in events[1][1]["layout"]["panes"]] == [root]
    assert failure(herdr_client.call, "pane.get", pane_id=other)[0] == "pane_not_found"


def test_close_over_subscription_delivers_pane_closed(
    herdr_client: HerdrClient, root: str, subscribe: Subscribe
) -> None:
    other = split(herdr_client, root)
    sub = subscribe("pane.closed")
    herdr_client.call("pane.close", pane_id=other)
    assert take(sub, 1) == [envelope("pane_closed", pane_id=other, workspace_id="w1")]


@pytest.mark.herdr_sim_only
def test_close_last_pane_of_a_non_last_tab_removes_the_tab_quietly(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    tab_pane = herdr_client.call("tab.create", workspace_id="w1", cwd="/tmp")["root_pane"][
        "pane_id"
    ]
    mark = len(sim.events)
    herdr_client.call("pane.close", pane_id=tab_pane)
    assert kinds_since(sim, mark) == ["pane_closed"]  # no tab_closed, no layout_updated
    assert tab_ids(herdr_client) == ["w1:t1"]


@pytest.mark.herdr_sim_only
def test_close_last_pane_of_last_tab_closes_the_workspace(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    snapshot = herdr_client.call("workspace.get", workspace_id="w1")["workspace"]
    mark = len(sim.events)
    herdr_client.call("pane.close", pane_id=root)
    events = events_since(sim, mark)
    assert [kind for kind, _ in events] == ["pane_closed", "workspace_closed"]
    assert events[1][1] == {"type": "workspace_closed", "workspace_id": "w1", "workspace": snapshot}
    assert herdr_client.call("workspace.list")["workspaces"] == []


def test_close_accepts_the_legacy_id_form(herdr_client: HerdrClient, root: str) -> None:
    split(herdr_client, root)
    herdr_client.call("pane.close", pane_id="w1-2")
    assert pane_ids(herdr_client) == [root]


def test_closed_pane_numbers_are_not_reused(herdr_client: HerdrClient, root: str) -> None:
    split(herdr_client, root)
    split(herdr_client, root)
    herdr_client.call("pane.close", pane_id="w1:p2")
    assert split(herdr_client, root) == "w1:p4"
    assert failure(herdr_client.call, "pane.get", pane_id="w1:p2") == (
        "pane_not_found",
        "pane w1:p2 not found",
    )


def test_cli_close_prints_ok(herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str) -> None:
    other = split(herdr_client, root)
    result = herdr_cli("pane", "close", other)
    assert result.code == 0, result.stderr
    assert result.json == {"id": "cli:pane:close", "result": {"type": "ok"}}
    assert (
        cli_error(herdr_cli("pane", "close", other))["error"]["message"]
        == f"pane {other} not found"
    )


# -- pane.move -------------------------------------------------------------------------------


@pytest.fixture
def two_tabs(herdr_client: HerdrClient, root: str) -> tuple[str, str, str]:
    """``w1:t1`` holds p1|p2, ``w1:t2`` holds p3; focus stays on p1."""
    right = split(herdr_client, root)
    other = herdr_client.call("tab.create", workspace_id="w1", cwd="/tmp")["root_pane"]["pane_id"]
    return root, right, other


@pytest.mark.herdr_sim_only
def test_move_to_another_tab_of_the_same_workspace_keeps_the_id(
    sim: Simulator, herdr_client: HerdrClient, two_tabs: tuple[str, str, str]
) -> None:
    root, right, other = two_tabs
    mark = len(sim.events)
    destination = {"type": "tab", "tab_id": "w1:t2", "split": "down", "ratio": 0.25}
    result = herdr_client.call("pane.move", pane_id=right, destination=destination)["move_result"]
    assert result["changed"] is True
    assert (result["previous_pane_id"], result["previous_tab_id"]) == (right, "w1:t1")
    assert (result["pane"]["pane_id"], result["pane"]["tab_id"]) == (right, "w1:t2")
    assert [p["pane_id"] for p in result["source_layout"]["panes"]] == [root]
    target = result["target_layout"]
    assert [p["pane_id"] for p in target["panes"]] == [other, right]
    assert target["splits"][0]["direction"] == "down"
    assert target["splits"][0]["ratio"] == 0.25
    assert result["focused_pane_id"] == other  # the target tab's focus, unchanged
    for key in ("created_tab", "created_workspace", "closed_tab_id", "closed_workspace_id"):
        assert key not in result
    assert kinds_since(sim, mark) == ["pane_moved", "layout_updated", "layout_updated"]


def test_move_next_to_a_target_pane(
    herdr_client: HerdrClient, two_tabs: tuple[str, str, str]
) -> None:
    _, right, other = two_tabs
    below = split(herdr_client, other, "down")  # w1:p4 under p3
    destination = {"type": "tab", "tab_id": "w1:t2", "target_pane_id": below, "split": "right"}
    target = herdr_client.call("pane.move", pane_id=right, destination=destination)["move_result"][
        "target_layout"
    ]
    placed = rects(target)
    assert placed[right]["y"] == placed[below]["y"] > 0
    assert placed[right]["x"] > placed[below]["x"]


def test_move_emits_pane_moved_over_subscription(
    herdr_client: HerdrClient, two_tabs: tuple[str, str, str], subscribe: Subscribe
) -> None:
    _, right, _ = two_tabs
    sub = subscribe("pane.moved", "layout.updated")
    destination = {"type": "tab", "tab_id": "w1:t2", "split": "right"}
    herdr_client.call("pane.move", pane_id=right, destination=destination)
    [moved] = take(sub, 1)
    assert moved["event"] == "pane_moved"
    assert moved["data"]["previous_pane_id"] == right
    assert moved["data"]["pane"]["tab_id"] == "w1:t2"
    assert [event["data"]["layout"]["tab_id"] for event in take(sub, 2)] == ["w1:t1", "w1:t2"]


@pytest.mark.herdr_sim_only
def test_move_of_a_tabs_only_pane_closes_that_tab(
    sim: Simulator, herdr_client: HerdrClient, two_tabs: tuple[str, str, str]
) -> None:
    _, _, other = two_tabs
    mark = len(sim.events)
    destination = {"type": "tab", "tab_id": "w1:t1", "split": "down"}
    result = herdr_client.call("pane.move", pane_id=other, destination=destination)["move_result"]
    assert result["closed_tab_id"] == "w1:t2"
    assert "source_layout" not in result
    events = events_since(sim, mark)
    assert [kind for kind, _ in events] == ["tab_closed", "pane_moved", "layout_updated"]
    assert events[0][1] == {"type": "tab_closed", "tab_id": "w1:t2", "workspace_id": "w1"}
    assert tab_ids(herdr_client) == ["w1:t1"]


@pytest.mark.herdr_sim_only
def test_move_to_a_new_tab_creates_it(
    sim: Simulator, herdr_client: HerdrClient, two_tabs: tuple[str, str, str]
) -> None:
    _, right, _ = two_tabs
    mark = len(sim.events)
    destination = {"type": "new_tab", "label": " logs "}
    result = herdr_client.call("pane.move", pane_id=right, destination=destination)["move_result"]
    tab = result["created_tab"]
    assert (tab["tab_id"], tab["label"], tab["pane_count"]) == ("w1:t3", "logs", 1)
    assert result["pane"]["pane_id"] == right
    assert "created_workspace" not in result
    events = events_since(sim, mark)
    assert [kind for kind, _ in events] == [
        "tab_created", "pane_moved", "layout_updated", "layout_updated",
    ]  # fmt: skip
    assert events[1][1]["created_tab"] == tab


def test_move_to_a_new_tab_emits_tab_created_over_subscription(
    herdr_client: HerdrClient, two_tabs: tuple[str, str, str], subscribe: Subscribe
) -> None:
    _, right, _ = two_tabs
    sub = subscribe("tab.created", "pane.moved")
    result = herdr_client.call("pane.move", pane_id=right, destination={"type": "new_tab"})[
        "move_result"
    ]
    created, moved = take(sub, 2)
    assert created == envelope("tab_created", tab=result["created_tab"])
    assert moved["event"] == "pane_moved"


def test_move_of_a_workspaces_only_pane_to_a_new_tab_keeps_the_workspace(
    herdr_client: HerdrClient, root: str
) -> None:
    # Herdr has no same_tab no-op for new_tab: the old tab goes, a new one takes the pane.
    result = herdr_client.call("pane.move", pane_id=root, destination={"type": "new_tab"})[
        "move_result"
    ]
    assert (result["changed"], result["closed_tab_id"]) == (True, "w1:t1")
    assert result["created_tab"]["tab_id"] == "w1:t2"
    assert "closed_workspace_id" not in result
    assert result["pane"]["pane_id"] == root
    assert tab_ids(herdr_client) == ["w1:t2"]


def test_move_to_a_new_workspace_renumbers_and_keeps_the_process(
    herdr_client: HerdrClient, root: str
) -> None:
    moving = split(herdr_client, root)
    before = herdr_client.call("pane.get", pane_id=moving)["pane"]
    shell = process_info(herdr_client, moving)["shell_pid"]
    destination = {"type": "new_workspace", "label": "moved", "tab_label": "only"}
    result = herdr_client.call("pane.move", pane_id=moving, destination=destination)["move_result"]
    assert result["pane"]["pane_id"] == "w2:p1"
    assert result["pane"]["terminal_id"] == before["terminal_id"]
    assert (result["created_workspace"]["workspace_id"], result["created_workspace"]["label"]) == (
        "w2",
        "moved",
    )
    assert (result["created_tab"]["tab_id"], result["created_tab"]["label"]) == ("w2:t1", "only")
    assert process_info(herdr_client, "w2:p1")["shell_pid"] == shell
    enter(herdr_client, "w2:p1", 'echo "launch=$HERDR_PANE_ID"')  # launch-time env is not rewritten
    assert wait_line(herdr_client, "w2:p1", "^launch=") == "launch=w1:p2"


def test_moved_pane_old_id_resolves_as_an_alias(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    moving = split(herdr_client, root)
    herdr_client.call("pane.move", pane_id=moving, destination={"type": "new_workspace"})
    assert herdr_client.call("pane.get", pane_id=moving)["pane"]["pane_id"] == "w2:p1"
    inside = herdr_cli("pane", "current", env={"HERDR_PANE_ID": moving})  # a stale HERDR_PANE_ID
    assert inside.json["result"]["pane"]["pane_id"] == "w2:p1"
    assert split(herdr_client, root) == "w1:p3"  # w1's numbers are still not reused


@pytest.mark.herdr_sim_only
def test_moving_a_workspaces_only_pane_away_closes_the_workspace(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")  # w2
    mark = len(sim.events)
    destination = {"type": "tab", "tab_id": "w2:t1", "split": "right"}
    result = herdr_client.call("pane.move", pane_id=root, destination=destination, focus=True)[
        "move_result"
    ]
    assert (result["closed_workspace_id"], result["closed_tab_id"]) == ("w1", "w1:t1")
    assert result["pane"]["pane_id"] == "w2:p2"
    assert result["focused_pane_id"] == "w2:p2"
    assert kinds_since(sim, mark)[:4] == [
        "tab_closed", "workspace_closed", "pane_moved", "layout_updated",
    ]  # fmt: skip
    assert workspace_ids(herdr_client) == ["w2"]


@pytest.mark.herdr_sim_only
def test_move_of_the_only_pane_to_a_new_workspace_replaces_the_workspace(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    mark = len(sim.events)
    result = herdr_client.call("pane.move", pane_id=root, destination={"type": "new_workspace"})[
        "move_result"
    ]
    assert result["pane"]["pane_id"] == "w2:p1"
    assert result["closed_workspace_id"] == "w1"
    assert result["pane"]["focused"] is True  # nothing else was left to focus
    assert kinds_since(sim, mark)[:5] == [
        "tab_closed", "workspace_closed", "workspace_created", "tab_created", "pane_moved",
    ]  # fmt: skip


def test_move_with_focus_switches_to_the_moved_pane(
    herdr_client: HerdrClient, two_tabs: tuple[str, str, str]
) -> None:
    _, right, _ = two_tabs
    destination = {"type": "tab", "tab_id": "w1:t2", "split": "right"}
    result = herdr_client.call("pane.move", pane_id=right, destination=destination, focus=True)[
        "move_result"
    ]
    assert result["pane"]["focused"] is True
    assert result["focused_pane_id"] == right
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == right


def test_move_into_its_own_tab_is_same_tab(
    herdr_client: HerdrClient, two_tabs: tuple[str, str, str]
) -> None:
    root, right, _ = two_tabs
    destination = {"type": "tab", "tab_id": "w1:t1", "split": "down"}
    result = herdr_client.call("pane.move", pane_id=right, destination=destination)["move_result"]
    assert (result["changed"], result["reason"]) == (False, "same_tab")
    assert result["source_layout"] == result["target_layout"]
    assert result["focused_pane_id"] == root
    assert herdr_client.call("pane.get", pane_id=right)["pane"]["tab_id"] == "w1:t1"


def test_move_into_a_zoomed_tab_is_zoomed_tab(
    herdr_client: HerdrClient, two_tabs: tuple[str, str, str]
) -> None:
    _, right, other = two_tabs
    split(herdr_client, other)
    herdr_client.call("pane.zoom", pane_id=other, mode="on")
    destination = {"type": "tab", "tab_id": "w1:t2", "split": "down"}
    result = herdr_client.call("pane.move", pane_id=right, destination=destination)["move_result"]
    assert (result["changed"], result["reason"]) == (False, "zoomed_tab")
    assert result["target_layout"]["tab_id"] == "w1:t2"
    assert herdr_client.call("pane.get", pane_id=right)["pane"]["tab_id"] == "w1:t1"


def test_move_out_of_a_zoomed_tab_is_zoomed_tab(
    herdr_client: HerdrClient, two_tabs: tuple[str, str, str]
) -> None:
    root, right, _ = two_tabs
    herdr_client.call("pane.zoom", pane_id=root, mode="on")
    result = herdr_client.call("pane.move", pane_id=right, destination={"type": "new_workspace"})[
        "move_result"
    ]
    assert (result["changed"], result["reason"]) == (False, "zoomed_tab")
    assert workspace_ids(herdr_client) == ["w1"]


@pytest.mark.parametrize(
    ("destination", "error"),
    [
        (
            {"type": "tab", "tab_id": "w1:t9", "split": "right"},
            ("tab_not_found", "tab w1:t9 not found"),
        ),
        (
            {"type": "tab", "tab_id": "w1:t2", "split": "right", "target_pane_id": "w1:p9"},
            ("target_pane_not_found", "target pane w1:p9 not found"),
        ),
        (
            {"type": "tab", "tab_id": "w1:t2", "split": "right", "target_pane_id": "w1:p1"},
            ("target_pane_not_found", "target pane w1:p1 is not in tab w1:t2"),
        ),
        (
            {"type": "new_tab", "workspace_id": "w9"},
            ("workspace_not_found", "workspace w9 not found"),
        ),
    ],
)
def test_move_destination_errors(
    herdr_client: HerdrClient,
    two_tabs: tuple[str, str, str],
    destination: dict[str, Any],
    error: tuple[str, str],
) -> None:
    _, right, _ = two_tabs
    assert failure(herdr_client.call, "pane.move", pane_id=right, destination=destination) == error
    assert herdr_client.call("pane.get", pane_id=right)["pane"]["tab_id"] == "w1:t1"


def test_move_of_unknown_pane_is_source_pane_not_found(
    herdr_client: HerdrClient, root: str
) -> None:
    assert failure(
        herdr_client.call, "pane.move", pane_id="w1:p9", destination={"type": "new_tab"}
    ) == (
        "pane_not_found",
        "source pane not found",
    )


def test_cli_move_to_new_workspace_focuses_by_default(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    moving = split(herdr_client, root)
    result = herdr_cli("pane", "move", moving, "--new-workspace", "--label", "side")
    moved = cli_json(result, "cli:pane:move")["move_result"]
    assert (moved["pane"]["pane_id"], moved["created_workspace"]["label"]) == ("w2:p1", "side")
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == "w2:p1"


def test_cli_move_to_tab_with_no_focus(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, two_tabs: tuple[str, str, str]
) -> None:
    root, right, _ = two_tabs
    result = herdr_cli("pane", "move", right, "--tab", "w1:t2", "--split", "down", "--no-focus")
    assert cli_json(result, "cli:pane:move")["move_result"]["pane"]["tab_id"] == "w1:t2"
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == root


def test_cli_move_errors(herdr_cli: HerdrCli, two_tabs: tuple[str, str, str]) -> None:
    _, right, _ = two_tabs
    missing_tab = herdr_cli("pane", "move", right, "--tab", "w1:t9", "--split", "right")
    assert cli_error(missing_tab)["error"] == {
        "code": "tab_not_found",
        "message": "tab w1:t9 not found",
    }
    usage = herdr_cli("pane", "move", right, "--tab", "w1:t2")  # --split is required
    assert usage.code == 2
    assert "usage: herdr pane move" in usage.stderr
