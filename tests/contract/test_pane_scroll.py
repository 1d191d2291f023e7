"""``PaneInfo.scroll``, ``pane.scroll`` and ``pane.scroll_changed`` on the wire.

Herdr fills ``scroll`` for every pane with a live terminal (``pane_info`` in
``src/app/creation.rs``, from ``scroll_metrics`` in ``src/pane/terminal.rs``); a
``pane.scroll_changed`` subscription compares the pane's scroll snapshot on each poll and
emits ``{pane_id, workspace_id, scroll}`` when it changed (``ActiveScrollChangedSubscription``
in ``src/api/subscriptions.rs``). ``pane.scroll`` (protocol 22's ``PaneScrollParams``) moves the
viewport to an offset clamped to the history (``ghostty_set_scroll_offset_from_bottom``) and
answers the pane (``pane_info``, what ``herdr-client``'s live integration tests against a real
Herdr assert) with its metrics after the move.
"""

from __future__ import annotations

from typing import Any

from pytest_herdr.client import HerdrClient
from tests.contract.helpers import Raw, Subscribe, enter, get, split, take, wait_line
from tests.contract_check import violations


def _seq(herdr_client: HerdrClient, pane: str, last: int) -> None:
    enter(herdr_client, pane, f"seq 1 {last}")
    wait_line(herdr_client, pane, f"^{last}$")


def _read(herdr_client: HerdrClient, pane: str, source: str, lines: int | None = None) -> str:
    params: dict[str, Any] = {"pane_id": pane, "source": source}
    if lines is not None:
        params["lines"] = lines
    text: str = herdr_client.call("pane.read", **params)["read"]["text"]
    return text


def _scroll(herdr_client: HerdrClient, pane: str, offset: int) -> dict[str, Any]:
    info: dict[str, Any] = herdr_client.call(
        "pane.scroll", pane_id=pane, offset_from_bottom=offset
    )["pane"]
    return info


def test_pane_info_carries_scroll_wherever_it_appears(
    herdr_client: HerdrClient, raw: Raw, first_workspace: dict[str, Any], pane: str
) -> None:
    rows = first_workspace["root_pane"]["scroll"]["viewport_rows"]
    assert first_workspace["root_pane"]["scroll"] == {
        "offset_from_bottom": 0,
        "max_offset_from_bottom": 0,
        "viewport_rows": rows,
    }
    other = split(herdr_client, pane)
    for method, params in (
        ("pane.get", {"pane_id": pane}),
        ("pane.list", {}),
        ("pane.scroll", {"pane_id": other, "offset_from_bottom": 0}),
    ):
        reply = raw(method, **params)
        assert violations("response", reply, method) == []
        result = reply["result"]
        panes = result["panes"] if "panes" in result else [result["pane"]]
        assert all(set(info["scroll"]) == {"offset_from_bottom", "max_offset_from_bottom",
                                           "viewport_rows"} for info in panes)  # fmt: skip


def test_the_history_an_archiving_client_reads_is_all_there(
    herdr_client: HerdrClient, pane: str
) -> None:
    """``--lines max_offset_from_bottom + viewport_rows`` reads the pane's whole history."""
    _seq(herdr_client, pane, 150)
    scroll = get(herdr_client, pane)["scroll"]
    assert scroll["offset_from_bottom"] == 0
    assert scroll["max_offset_from_bottom"] > 0
    lines = scroll["max_offset_from_bottom"] + scroll["viewport_rows"]
    text = _read(herdr_client, pane, "recent", lines)
    numbers = [line for line in text.splitlines() if line.isdigit()]
    assert numbers == [str(n) for n in range(1, 151)]


def test_scroll_moves_the_viewport_and_the_visible_read_follows_it(
    herdr_client: HerdrClient, pane: str
) -> None:
    _seq(herdr_client, pane, 150)
    bottom = _read(herdr_client, pane, "visible")
    recent = _read(herdr_client, pane, "recent", 5)
    most = get(herdr_client, pane)["scroll"]["max_offset_from_bottom"]

    moved = _scroll(herdr_client, pane, 10)
    assert moved["pane_id"] == pane
    assert moved["scroll"]["offset_from_bottom"] == 10
    assert get(herdr_client, pane)["scroll"] == moved["scroll"]
    visible = _read(herdr_client, pane, "visible")
    assert visible != bottom
    assert "150" not in visible.splitlines()
    # the other sources read the bottom whatever the viewport shows
    assert _read(herdr_client, pane, "recent", 5) == recent

    assert _scroll(herdr_client, pane, most + 1000)["scroll"]["offset_from_bottom"] == most
    assert _scroll(herdr_client, pane, 0)["scroll"]["offset_from_bottom"] == 0
    assert _read(herdr_client, pane, "visible") == bottom


def test_scroll_of_an_unknown_pane_is_pane_not_found(raw: Raw, pane: str) -> None:
    reply = raw("pane.scroll", pane_id="w9:p9", offset_from_bottom=3)
    assert reply["error"]["code"] == "pane_not_found"


def test_scroll_changed_follows_output_scrolls_and_resizes(
    herdr_client: HerdrClient, subscribe: Subscribe, pane: str
) -> None:
    sub = subscribe({"type": "pane.scroll_changed", "pane_id": pane})
    _seq(herdr_client, pane, 150)
    grown = take(sub, 1)[0]
    assert violations("event", grown) == []
    assert grown["event"] == "pane.scroll_changed"
    assert (grown["data"]["pane_id"], grown["data"]["workspace_id"]) == (pane, "w1")
    assert grown["data"]["scroll"]["max_offset_from_bottom"] > 0

    settled = get(herdr_client, pane)["scroll"]
    moved = _scroll(herdr_client, pane, 7)["scroll"]
    event = take(sub, 1)[0]
    while event["data"]["scroll"] != moved:  # output still landing before the scroll
        assert event["data"]["scroll"]["offset_from_bottom"] == 0, (settled, event)
        event = take(sub, 1)[0]

    split(herdr_client, pane, "down")
    resized = take(sub, 1)[0]["data"]["scroll"]
    assert resized["viewport_rows"] < moved["viewport_rows"]
    assert resized == get(herdr_client, pane)["scroll"]
