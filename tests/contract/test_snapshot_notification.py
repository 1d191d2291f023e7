"""``session.snapshot`` / ``herdr api snapshot`` and ``notification.show`` /
``herdr notification show`` (reference §3.2 SessionSnapshot, §3.7)."""

from __future__ import annotations

from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import request
from herdr_sim.services.runtime import Notification
from pytest_herdr.backends import HerdrServer
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import Raw, cli_error, cli_json, failure, invalid_request


@pytest.fixture
def busy(herdr_client: HerdrClient) -> None:
    """w1 (tabs t1, t2 with a split in t2, t2 active) and w2 (active workspace, moved first)."""
    herdr_client.call("workspace.create", cwd="/tmp")
    herdr_client.call("tab.create", workspace_id="w1", focus=True)
    herdr_client.call("pane.split", target_pane_id="w1:p2", direction="down")
    herdr_client.call("workspace.create", cwd="/tmp", focus=True)
    herdr_client.call("workspace.move", workspace_id="w2", insert_index=0)


# -- session.snapshot ---------------------------------------------------------------------------


def test_snapshot_of_a_fresh_server(herdr_client: HerdrClient) -> None:
    result = herdr_client.call("session.snapshot")
    assert result["type"] == "session_snapshot"
    assert result["snapshot"] == {
        "version": "0.9.2",
        "protocol": 22,
        "workspaces": [],
        "tabs": [],
        "panes": [],
        "layouts": [],
        "agents": [],
    }


def test_snapshot_reports_the_focused_workspace_tab_and_pane(
    herdr_client: HerdrClient, busy: None
) -> None:
    snapshot = herdr_client.call("session.snapshot")["snapshot"]
    assert snapshot["focused_workspace_id"] == "w2"
    assert snapshot["focused_tab_id"] == "w2:t1"
    assert snapshot["focused_pane_id"] == "w2:p1"
    herdr_client.call("tab.focus", tab_id="w1:t2")
    snapshot = herdr_client.call("session.snapshot")["snapshot"]
    assert (snapshot["focused_tab_id"], snapshot["focused_pane_id"]) == ("w1:t2", "w1:p2")


def test_snapshot_lists_everything_in_display_order(herdr_client: HerdrClient, busy: None) -> None:
    snapshot = herdr_client.call("session.snapshot")["snapshot"]
    assert [ws["workspace_id"] for ws in snapshot["workspaces"]] == ["w2", "w1"]
    assert [ws["number"] for ws in snapshot["workspaces"]] == [1, 2]
    assert [tab["tab_id"] for tab in snapshot["tabs"]] == ["w2:t1", "w1:t1", "w1:t2"]
    assert [pane["pane_id"] for pane in snapshot["panes"]] == ["w2:p1", "w1:p1", "w1:p2", "w1:p3"]
    assert [layout["tab_id"] for layout in snapshot["layouts"]] == ["w2:t1", "w1:t1", "w1:t2"]
    assert [p["pane_id"] for p in snapshot["layouts"][2]["panes"]] == ["w1:p2", "w1:p3"]
    assert snapshot["agents"] == []


def test_snapshot_agrees_with_the_list_methods(herdr_client: HerdrClient, busy: None) -> None:
    snapshot = herdr_client.call("session.snapshot")["snapshot"]
    assert snapshot["workspaces"] == herdr_client.call("workspace.list")["workspaces"]
    assert snapshot["tabs"] == herdr_client.call("tab.list")["tabs"]
    assert snapshot["panes"] == herdr_client.call("pane.list")["panes"]
    assert snapshot["layouts"][0] == herdr_client.call("pane.layout", pane_id="w2:p1")["layout"]


def test_snapshot_ignores_params(herdr_server: HerdrServer) -> None:
    reply = request(herdr_server.socket_path, "session.snapshot", {"extra": True}, request_id="s")
    assert reply["id"] == "s"
    assert reply["result"]["type"] == "session_snapshot"


def test_cli_api_snapshot_prints_the_snapshot(
    herdr_cli: HerdrCli, herdr_client: HerdrClient, busy: None
) -> None:
    assert cli_json(herdr_cli("api", "snapshot"), "cli:api:snapshot") == herdr_client.call(
        "session.snapshot"
    )


def test_cli_api_snapshot_of_a_fresh_server(herdr_cli: HerdrCli) -> None:
    result = herdr_cli("api", "snapshot")
    assert result.json["result"]["snapshot"]["workspaces"] == []
    assert "focused_workspace_id" not in result.json["result"]["snapshot"]


# -- notification.show ---------------------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_show_answers_disabled_and_records_it(sim: Simulator, herdr_client: HerdrClient) -> None:
    result = herdr_client.call(
        "notification.show", title="Build done", body="all green", position="top-left", sound="done"
    )
    assert result == {"type": "notification_show", "shown": False, "reason": "disabled"}
    assert sim.notifications == [
        Notification("Build done", "all green", "top-left", "done", False, "disabled")
    ]


@pytest.mark.herdr_sim_only
def test_show_defaults(sim: Simulator, herdr_client: HerdrClient) -> None:
    herdr_client.call("notification.show", title="t")
    assert sim.notifications == [Notification("t", None, None, "none", False, "disabled")]


@pytest.mark.herdr_sim_only
def test_every_call_is_recorded_in_order(sim: Simulator, herdr_client: HerdrClient) -> None:
    for title in ("one", "two", "three"):
        herdr_client.call("notification.show", title=title)
    assert [n.title for n in sim.notifications] == ["one", "two", "three"]


@pytest.mark.herdr_sim_only
@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("a\nb\tc\rd", "a b c d"),
        ("  lots   of \n\n space  ", "lots of space"),
        ("\x07bell\x1b[31m", "bell[31m"),
        ("x" * 100, "x" * 80),
        (" " + "y" * 100, "y" * 79),  # the leading space counts toward the 80 before trimming
        ("a\u00a0\u2003b", "a b"),  # every kind of whitespace collapses
        ("zero\u200bwidth", "zero\u200bwidth"),  # format characters are not controls
        ("caf\u00e9 \U0001f680", "caf\u00e9 \U0001f680"),
    ],
)
def test_title_is_sanitized_like_herdr(
    sim: Simulator, herdr_client: HerdrClient, title: str, expected: str
) -> None:
    herdr_client.call("notification.show", title=title)
    assert sim.notifications[-1].title == expected


@pytest.mark.herdr_sim_only
def test_body_is_sanitized_and_capped_at_240(sim: Simulator, herdr_client: HerdrClient) -> None:
    herdr_client.call("notification.show", title="t", body="line one\nline two " + "z" * 300)
    body = sim.notifications[-1].body
    assert body is not None
    assert body.startswith("line one line two zzz")
    assert len(body) == 240


@pytest.mark.herdr_sim_only
def test_blank_body_is_dropped(sim: Simulator, herdr_client: HerdrClient) -> None:
    herdr_client.call("notification.show", title="t", body=" \n\t ")
    assert sim.notifications[-1].body is None


@pytest.mark.herdr_sim_only
@pytest.mark.parametrize("title", ["", "   ", "\n\t", "\x00\x07\x1b"])
def test_empty_title_is_invalid_params_and_not_recorded(
    sim: Simulator, herdr_client: HerdrClient, title: str
) -> None:
    assert failure(herdr_client.call, "notification.show", title=title) == (
        "invalid_params",
        "notification title is empty",
    )
    assert sim.notifications == []


@pytest.mark.herdr_sim_only
@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({}, "missing field `title`"),
        ({"title": 3}, "invalid type"),
        ({"title": "t", "position": "middle"}, "unknown variant `middle`"),
        ({"title": "t", "sound": "loud"}, "unknown variant `loud`"),
    ],
)
def test_malformed_params_are_invalid_request(
    sim: Simulator, raw: Raw, params: dict[str, Any], needle: str
) -> None:
    assert needle in invalid_request(raw("notification.show", **params))
    assert sim.notifications == []


@pytest.mark.herdr_sim_only
def test_cli_notification_show(sim: Simulator, herdr_cli: HerdrCli) -> None:
    result = herdr_cli(
        "notification",
        "show",
        "Deploy\tfinished",
        "--body",
        "ok",
        "--position",
        "bottom-right",
        "--sound",
        "request",
    )
    assert result.code == 0, result.stderr
    assert result.json == {
        "id": "cli:notification:show",
        "result": {"type": "notification_show", "shown": False, "reason": "disabled"},
    }
    assert sim.notifications == [
        Notification("Deploy finished", "ok", "bottom-right", "request", False, "disabled")
    ]


@pytest.mark.herdr_sim_only
def test_cli_notification_show_blank_title_is_the_servers_error(
    sim: Simulator, herdr_cli: HerdrCli
) -> None:
    assert cli_error(herdr_cli("notification", "show", " \t ")) == {
        "id": "cli:notification:show",
        "error": {"code": "invalid_params", "message": "notification title is empty"},
    }
    assert sim.notifications == []
