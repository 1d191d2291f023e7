"""Tab geometry over the socket and the `herdr` CLI: pane.layout, neighbor, edges,
focus_direction, resize, zoom, swap, the layout.* tree methods, and pty sizes that follow
the layout (reference §3.1, §3.4, §4).

Herdr's CLI has no ``layout`` group, so layout.export/apply/set_split_ratio are socket-only.
"""

from __future__ import annotations

from typing import Any

import pytest

from herdr_sim import Simulator, testing
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    cli_json,
    enter,
    failure,
    kinds_since,
    rects,
    split,
    wait_line,
)

#: the pane area of Herdr's 120×40 headless frame: a 26-column sidebar on the left and the tab
#: bar on the top row take the rest (``compute_view_internal``, ``src/ui.rs``)
AREA = {"x": 26, "y": 1, "width": 94, "height": 39}


# -- helpers --------------------------------------------------------------------------------


@pytest.fixture
def pair(herdr_client: HerdrClient, root: str) -> tuple[str, str]:
    """``w1:p1`` | ``w1:p2`` side by side at 0.5; focus on p1."""
    return root, split(herdr_client, root)


def root_ratio(herdr_client: HerdrClient, **target: Any) -> float:
    """The ratio of the root split of a tab."""
    ratio: float = herdr_client.call("pane.layout", **target)["layout"]["splits"][0]["ratio"]
    return ratio


def pty_size(herdr_client: HerdrClient, pane: str, tag: str) -> str:
    """``stty size`` ("rows cols") as the pane's shell sees it, tagged to tell runs apart."""
    enter(herdr_client, pane, f'echo "{tag}=$(stty size)"')
    return wait_line(herdr_client, pane, f"^{tag}=[0-9]").removeprefix(f"{tag}=")


def model_size(sim: Simulator, pane: str) -> str:
    """The content size the simulator's layout model gives the pane, as ``stty`` prints it."""

    cols, rows = testing.layout_size(sim, pane)
    return f"{rows} {cols}"


def pane_leaf(**fields: Any) -> dict[str, Any]:
    """A LayoutNode pane leaf."""
    return {"type": "pane", **fields}


def split_node(direction: str, ratio: float, first: Any, second: Any) -> dict[str, Any]:
    """A LayoutNode split."""
    return {
        "type": "split",
        "direction": direction,
        "ratio": ratio,
        "first": first,
        "second": second,
    }


def chain(splits: int) -> dict[str, Any]:
    """A tree nested ``splits`` deep along its first children (depth ``splits + 1``)."""
    node = pane_leaf()
    for _ in range(splits):
        node = split_node("down", 0.5, node, pane_leaf())
    return node


def balanced(leaves: int) -> dict[str, Any]:
    """A shallow tree with ``leaves`` panes."""
    if leaves == 1:
        return pane_leaf()
    half = leaves // 2
    return split_node("right", 0.5, balanced(half), balanced(leaves - half))


# -- pane.layout -----------------------------------------------------------------------------


def test_layout_of_a_single_pane_fills_the_area(herdr_client: HerdrClient, root: str) -> None:
    assert herdr_client.call("pane.layout") == {
        "type": "pane_layout",
        "layout": {
            "workspace_id": "w1",
            "tab_id": "w1:t1",
            "zoomed": False,
            "area": AREA,
            "focused_pane_id": root,
            "panes": [{"pane_id": root, "focused": True, "rect": AREA}],
            "splits": [],
        },
    }


def test_layout_rects_and_split_ids_follow_the_tree(
    herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, right = pair
    below = split(herdr_client, right, "down", ratio=0.25)
    layout = herdr_client.call("pane.layout", pane_id=below)["layout"]
    assert [p["pane_id"] for p in layout["panes"]] == [root, right, below]
    assert rects(layout) == {
        root: {"x": 26, "y": 1, "width": 47, "height": 39},
        right: {"x": 73, "y": 1, "width": 47, "height": 10},
        below: {"x": 73, "y": 11, "width": 47, "height": 29},
    }
    assert layout["splits"] == [
        {"id": "split_0_root", "direction": "right", "ratio": 0.5, "rect": AREA},
        {
            "id": "split_1_1",
            "direction": "down",
            "ratio": 0.25,
            "rect": {"x": 73, "y": 1, "width": 47, "height": 39},
        },
    ]


def test_layout_with_pane_id_answers_that_panes_tab(herdr_client: HerdrClient, root: str) -> None:
    other = herdr_client.call("tab.create", workspace_id="w1", cwd="/tmp")["root_pane"]["pane_id"]
    layout = herdr_client.call("pane.layout", pane_id=other)["layout"]
    assert (layout["tab_id"], layout["focused_pane_id"]) == ("w1:t2", other)


def test_layout_of_unknown_or_missing_pane_is_pane_not_found(herdr_client: HerdrClient) -> None:
    assert failure(herdr_client.call, "pane.layout") == ("pane_not_found", "pane not found")
    herdr_client.call("workspace.create", cwd="/tmp")
    assert failure(herdr_client.call, "pane.layout", pane_id="w1:p9") == (
        "pane_not_found",
        "pane not found",
    )


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("pane.neighbor", {"direction": "up"}, "pane not found"),
        ("pane.resize", {"direction": "up"}, "pane not found"),
        ("pane.zoom", {}, "pane not found"),
        ("pane.swap", {"direction": "left"}, "source pane not found"),  # the directional form
    ],
)
def test_geometry_of_unknown_pane_is_pane_not_found(
    herdr_client: HerdrClient, root: str, method: str, params: dict[str, str], message: str
) -> None:
    assert failure(herdr_client.call, method, pane_id="w1:p9", **params) == (
        "pane_not_found",
        message,
    )


def test_cli_layout_by_pane_and_by_current(herdr_cli: HerdrCli, pair: tuple[str, str]) -> None:
    _, right = pair
    flagged = cli_json(herdr_cli("pane", "layout", "--pane", right), "cli:pane:layout")
    assert flagged["layout"]["tab_id"] == "w1:t1"
    current = herdr_cli("pane", "layout", "--current", env={"HERDR_PANE_ID": right})
    assert cli_json(current, "cli:pane:layout") == flagged
    assert herdr_cli("pane", "layout", "--current").code == 2


# -- pane.neighbor / pane.edges / pane.focus_direction ---------------------------------------


def test_neighbor_names_the_adjacent_pane_or_leaves_it_out(
    herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, right = pair
    found = herdr_client.call("pane.neighbor", pane_id=root, direction="right")["neighbor"]
    assert (found["pane_id"], found["direction"], found["neighbor_pane_id"]) == (
        root,
        "right",
        right,
    )
    assert found["layout"]["tab_id"] == "w1:t1"
    none = herdr_client.call("pane.neighbor", direction="left")["neighbor"]
    assert none["pane_id"] == root
    assert "neighbor_pane_id" not in none


def test_cli_neighbor(herdr_cli: HerdrCli, pair: tuple[str, str]) -> None:
    root, right = pair
    result = herdr_cli("pane", "neighbor", "--direction", "left", "--pane", right)
    assert cli_json(result, "cli:pane:neighbor")["neighbor"]["neighbor_pane_id"] == root
    bad = herdr_cli("pane", "neighbor", "--direction", "sideways")
    assert bad.code == 2
    assert "invalid pane direction: sideways" in bad.stderr


def test_edges_report_which_sides_touch_the_area(
    herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, right = pair
    below = split(herdr_client, right, "down")
    edges = herdr_client.call("pane.edges", pane_id=right)["edges"]
    assert {side: edges[side] for side in ("left", "right", "up", "down")} == {
        "left": False,
        "right": True,
        "up": True,
        "down": False,
    }
    assert herdr_client.call("pane.edges")["edges"]["pane_id"] == root
    low = herdr_client.call("pane.edges", pane_id=below)["edges"]
    assert (low["up"], low["down"]) == (False, True)


def test_cli_edges(herdr_cli: HerdrCli, pair: tuple[str, str]) -> None:
    root, _ = pair
    edges = cli_json(herdr_cli("pane", "edges"), "cli:pane:edges")["edges"]
    assert (edges["pane_id"], edges["left"], edges["right"]) == (root, True, False)


@pytest.mark.herdr_sim_only
def test_focus_direction_moves_focus_to_the_neighbor(
    sim: Simulator, herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, right = pair
    mark = len(sim.events)
    focus = herdr_client.call("pane.focus_direction", direction="right")["focus"]
    assert (focus["changed"], focus["source_pane_id"], focus["focused_pane_id"]) == (
        True,
        root,
        right,
    )
    assert "reason" not in focus
    assert focus["layout"]["focused_pane_id"] == right
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == right
    assert kinds_since(sim, mark) == ["workspace_focused", "tab_focused", "pane_focused"]


def test_focus_direction_without_neighbor_is_no_neighbor(
    herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, _ = pair
    focus = herdr_client.call("pane.focus_direction", direction="up")["focus"]
    assert (focus["changed"], focus["reason"], focus["source_pane_id"]) == (
        False,
        "no_neighbor",
        root,
    )
    assert "focused_pane_id" not in focus
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == root


def test_cli_focus_is_focus_direction(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, pair: tuple[str, str]
) -> None:
    _, right = pair
    focus = cli_json(herdr_cli("pane", "focus", "--direction", "right"), "cli:pane:focus")["focus"]
    assert focus["focused_pane_id"] == right
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == right


# -- pane.resize -----------------------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_resize_moves_the_divider_by_the_default_step(
    sim: Simulator, herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, _ = pair
    mark = len(sim.events)
    resize = herdr_client.call("pane.resize", pane_id=root, direction="right")["resize"]
    assert (resize["changed"], resize["pane_id"], resize["focused_pane_id"]) == (True, root, root)
    assert "reason" not in resize
    assert resize["layout"]["splits"][0]["ratio"] == 0.55
    assert kinds_since(sim, mark) == ["layout_updated"]


def test_resize_left_shrinks_and_amount_sign_is_ignored(
    herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, _ = pair
    herdr_client.call("pane.resize", pane_id=root, direction="left", amount=-0.2)
    assert root_ratio(herdr_client) == 0.3


def test_resize_amount_is_capped_at_half(herdr_client: HerdrClient, root: str) -> None:
    split(herdr_client, root, ratio=0.1)
    herdr_client.call("pane.resize", pane_id=root, direction="right", amount=2.0)
    assert root_ratio(herdr_client) == 0.6  # 0.1 + 0.5, not clamped to 0.9


@pytest.mark.herdr_sim_only
@pytest.mark.parametrize(("ratio", "direction"), [(0.9, "right"), (0.1, "left")])
def test_resize_at_the_clamp_is_unchanged(
    sim: Simulator, herdr_client: HerdrClient, root: str, ratio: float, direction: str
) -> None:
    split(herdr_client, root, ratio=ratio)
    mark = len(sim.events)
    resize = herdr_client.call("pane.resize", pane_id=root, direction=direction)["resize"]
    assert (resize["changed"], resize["reason"]) == (False, "unchanged")
    assert kinds_since(sim, mark) == []


def test_resize_of_a_single_pane_is_unchanged(herdr_client: HerdrClient, root: str) -> None:
    resize = herdr_client.call("pane.resize", direction="down", amount=0.2)["resize"]
    assert (resize["changed"], resize["reason"], resize["layout"]["splits"]) == (
        False,
        "unchanged",
        [],
    )


def test_cli_resize(herdr_client: HerdrClient, herdr_cli: HerdrCli, pair: tuple[str, str]) -> None:
    _, right = pair
    result = herdr_cli("pane", "resize", "--direction", "left", "--amount", "0.25", "--pane", right)
    assert cli_json(result, "cli:pane:resize")["resize"]["changed"] is True
    assert root_ratio(herdr_client) == 0.25
    bad = herdr_cli("pane", "resize", "--direction", "left", "--amount", "lots")
    assert (bad.code, bad.stderr.strip()) == (2, "invalid amount: lots")


# -- pane.zoom -------------------------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_zoom_toggles_on_then_off(
    sim: Simulator, herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, right = pair
    mark = len(sim.events)
    on = herdr_client.call("pane.zoom", pane_id=right)["zoom"]
    assert (on["changed"], on["zoom_changed"], on["focus_changed"], on["zoomed"]) == (
        True,
        True,
        True,
        True,
    )
    assert (on["pane_id"], on["focused_pane_id"], on["layout"]["zoomed"]) == (right, right, True)
    assert rects(on["layout"])[root]["width"] == 47  # reported rects ignore the zoom
    off = herdr_client.call("pane.zoom", pane_id=right)["zoom"]
    assert (off["zoom_changed"], off["focus_changed"], off["zoomed"]) == (True, False, False)
    assert kinds_since(sim, mark).count("layout_updated") == 2


@pytest.mark.parametrize(
    ("setup", "mode", "reason"),
    [("on", "on", "already_zoomed"), (None, "off", "already_unzoomed")],
)
def test_zoom_no_op_reasons(
    herdr_client: HerdrClient, pair: tuple[str, str], setup: str | None, mode: str, reason: str
) -> None:
    root, _ = pair
    if setup is not None:
        herdr_client.call("pane.zoom", pane_id=root, mode=setup)
    zoom = herdr_client.call("pane.zoom", pane_id=root, mode=mode)["zoom"]
    assert (zoom["changed"], zoom["zoom_changed"], zoom["reason"]) == (False, False, reason)
    assert zoom["zoomed"] is (setup == "on")


def test_zoom_of_a_single_pane_still_focuses_it(herdr_client: HerdrClient, root: str) -> None:
    herdr_client.call("workspace.create", cwd="/tmp")
    zoom = herdr_client.call("pane.zoom", pane_id="w2:p1", mode="on")["zoom"]
    assert (zoom["changed"], zoom["zoom_changed"], zoom["focus_changed"]) == (True, False, True)
    assert (zoom["reason"], zoom["zoomed"]) == ("single_pane", False)
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == "w2:p1"


@pytest.mark.herdr_sim_only
def test_refused_zoom_that_moves_focus_emits_layout_updated(
    sim: Simulator, herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    _, right = pair
    mark = len(sim.events)
    zoom = herdr_client.call("pane.zoom", pane_id=right, mode="off")["zoom"]
    assert (zoom["reason"], zoom["focus_changed"]) == ("already_unzoomed", True)
    assert "layout_updated" in kinds_since(sim, mark)


def test_cli_zoom_modes(herdr_cli: HerdrCli, pair: tuple[str, str]) -> None:
    _, right = pair
    on = cli_json(herdr_cli("pane", "zoom", right, "--on"), "cli:pane:zoom")["zoom"]
    assert on["zoomed"] is True
    again = cli_json(herdr_cli("pane", "zoom", "--pane", right, "--on"), "cli:pane:zoom")["zoom"]
    assert again["reason"] == "already_zoomed"
    toggled = cli_json(herdr_cli("pane", "zoom", "--current"), "cli:pane:zoom")["zoom"]
    assert toggled["zoomed"] is False
    both = herdr_cli("pane", "zoom", "--on", "--off")
    assert (both.code, both.stderr.strip()) == (2, "provide only one of --toggle, --on, or --off")


# -- pane.swap -------------------------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_directional_swap_exchanges_cells_and_keeps_focus_on_source(
    sim: Simulator, herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, right = pair
    mark = len(sim.events)
    swap = herdr_client.call("pane.swap", pane_id=root, direction="right")["swap"]
    assert (swap["changed"], swap["source_pane_id"], swap["target_pane_id"]) == (True, root, right)
    assert swap["focused_pane_id"] == root
    assert rects(swap["layout"])[root]["x"] == 73
    assert rects(swap["layout"])[right]["x"] == 26
    assert kinds_since(sim, mark) == ["layout_updated"]


def test_explicit_swap_focuses_the_source_and_its_tab(
    herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, right = pair
    herdr_client.call("tab.create", workspace_id="w1", cwd="/tmp", focus=True)
    swap = herdr_client.call("pane.swap", source_pane_id="w1-2", target_pane_id=root)["swap"]
    assert (swap["changed"], swap["source_pane_id"], swap["target_pane_id"]) == (True, right, root)
    assert swap["focused_pane_id"] == right
    assert (
        herdr_client.call("pane.current")["pane"]["pane_id"] == right
    )  # tab w1:t1 is active again


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {},
            "provide either direction with optional pane_id, or source_pane_id and target_pane_id",
        ),
        (
            {"direction": "left", "source_pane_id": "w1:p1", "target_pane_id": "w1:p2"},
            "provide either direction with optional pane_id, or source_pane_id and target_pane_id",
        ),
        ({"source_pane_id": "w1:p1"}, "missing target_pane_id"),
        ({"target_pane_id": "w1:p1"}, "missing source_pane_id"),
    ],
)
def test_swap_needs_exactly_one_form(
    herdr_client: HerdrClient, pair: tuple[str, str], params: dict[str, str], message: str
) -> None:
    assert failure(herdr_client.call, "pane.swap", **params) == ("invalid_pane_swap", message)


def test_swap_reasons_leave_the_layout_alone(
    herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, right = pair
    other_tab = herdr_client.call("tab.create", workspace_id="w1", cwd="/tmp")["root_pane"][
        "pane_id"
    ]
    cases = [
        ({"pane_id": root, "direction": "left"}, "no_neighbor", None),
        ({"source_pane_id": root, "target_pane_id": "w1-1"}, "same_pane", root),
        ({"source_pane_id": root, "target_pane_id": "w1:p9"}, "not_found", "w1:p9"),
        ({"source_pane_id": root, "target_pane_id": other_tab}, "cross_tab", other_tab),
    ]
    before = herdr_client.call("pane.layout", pane_id=root)["layout"]
    for params, reason, target in cases:
        swap = herdr_client.call("pane.swap", **params)["swap"]
        assert (swap["changed"], swap["reason"], swap["source_pane_id"]) == (False, reason, root)
        assert swap.get("target_pane_id") == target
        assert swap["layout"] == before
    assert rects(herdr_client.call("pane.layout")["layout"])[right]["x"] == 73


def test_explicit_swap_with_unknown_source_is_not_found_not_an_error(
    herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    _, right = pair
    swap = herdr_client.call("pane.swap", source_pane_id="w1:p9", target_pane_id=right)["swap"]
    assert (swap["changed"], swap["reason"]) == (False, "not_found")
    assert (swap["source_pane_id"], swap["target_pane_id"]) == ("w1:p9", right)
    assert swap["layout"]["tab_id"] == "w1:t1"


def test_cli_swap_both_forms(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, pair: tuple[str, str]
) -> None:
    root, right = pair
    explicit = herdr_cli("pane", "swap", "--source-pane", root, "--target-pane", right)
    assert cli_json(explicit, "cli:pane:swap")["swap"]["changed"] is True
    directional = herdr_cli("pane", "swap", "--direction", "left", "--pane", root)
    assert cli_json(directional, "cli:pane:swap")["swap"]["target_pane_id"] == right
    assert rects(herdr_client.call("pane.layout")["layout"])[root]["x"] == 26
    mixed = herdr_cli("pane", "swap", "--direction", "left", "--source-pane", root)
    assert mixed.code == 2
    assert mixed.stderr.startswith("usage: herdr pane swap")


# -- layout.export ---------------------------------------------------------------------------


def test_export_describes_the_tree(herdr_client: HerdrClient, pair: tuple[str, str]) -> None:
    root, right = pair
    split(herdr_client, right, "down", ratio=0.3, cwd="/")
    herdr_client.call("pane.rename", pane_id=right, label="logs")
    assert herdr_client.call("layout.export") == {
        "type": "layout_export",
        "layout": {
            "workspace_id": "w1",
            "tab_id": "w1:t1",
            "zoomed": False,
            "focused_pane_id": root,
            "root": split_node(
                "right",
                0.5,
                pane_leaf(pane_id=root, cwd="/tmp"),
                split_node(
                    "down",
                    0.3,
                    pane_leaf(pane_id=right, label="logs", cwd="/tmp"),
                    pane_leaf(pane_id="w1:p3", cwd="/"),
                ),
            ),
        },
    }


def test_export_by_tab_or_pane(herdr_client: HerdrClient, root: str) -> None:
    other = herdr_client.call("tab.create", workspace_id="w1", cwd="/tmp")["root_pane"]["pane_id"]
    by_tab = herdr_client.call("layout.export", tab_id="w1:2")["layout"]  # position form
    assert by_tab["root"] == pane_leaf(pane_id=other, cwd="/tmp")
    assert herdr_client.call("layout.export", pane_id=other)["layout"] == by_tab


def test_export_with_no_workspace_is_layout_not_found(herdr_client: HerdrClient) -> None:
    assert failure(herdr_client.call, "layout.export") == (
        "layout_not_found",
        "layout target not found",
    )


# -- layout.apply ----------------------------------------------------------------------------


def three_panes() -> dict[str, Any]:
    """editor | (shell / logs) with labels and a fixed cwd for the last pane."""
    return split_node(
        "right",
        0.6,
        pane_leaf(label="editor"),
        split_node("down", 0.5, pane_leaf(label="shell"), pane_leaf(label="logs", cwd="/")),
    )


@pytest.mark.herdr_sim_only
def test_apply_builds_a_new_unfocused_tab_from_a_tree(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    mark = len(sim.events)
    layout = herdr_client.call("layout.apply", root=three_panes(), tab_label="dev")["layout"]
    assert (layout["workspace_id"], layout["tab_id"]) == ("w1", "w1:t2")
    assert layout["focused_pane_id"] == "w1:p2"
    assert layout["root"] == split_node(
        "right",
        0.6,
        pane_leaf(pane_id="w1:p2", label="editor", cwd="/tmp"),
        split_node(
            "down",
            0.5,
            pane_leaf(pane_id="w1:p3", label="shell", cwd="/tmp"),
            pane_leaf(pane_id="w1:p4", label="logs", cwd="/"),
        ),
    )
    tab = herdr_client.call("tab.get", tab_id="w1:t2")["tab"]
    assert (tab["label"], tab["pane_count"], tab["focused"]) == ("dev", 3, False)
    assert herdr_client.call("pane.current")["pane"]["pane_id"] == root
    assert rects(herdr_client.call("pane.layout", pane_id="w1:p4")["layout"]) == {
        "w1:p2": {"x": 26, "y": 1, "width": 56, "height": 39},
        "w1:p3": {"x": 82, "y": 1, "width": 38, "height": 20},
        "w1:p4": {"x": 82, "y": 21, "width": 38, "height": 19},
    }
    assert kinds_since(sim, mark) == [
        "tab_created", "pane_created", "pane_created", "pane_created", "layout_updated",
    ]  # fmt: skip


def test_apply_with_focus_activates_the_new_tab(herdr_client: HerdrClient, root: str) -> None:
    herdr_client.call("layout.apply", root=pane_leaf(), focus=True)
    assert herdr_client.call("pane.current")["pane"]["tab_id"] == "w1:t2"


def test_apply_runs_a_pane_command_and_exports_it(herdr_client: HerdrClient, root: str) -> None:
    command = ["sh", "-c", "echo from-layout; exec sleep 60"]
    tree = split_node("down", 0.5, pane_leaf(), pane_leaf(command=command, env={"ROLE": "x"}))
    layout = herdr_client.call("layout.apply", workspace_id="w1", root=tree)["layout"]
    pane = layout["root"]["second"]["pane_id"]
    assert wait_line(herdr_client, pane, "^from-layout$") == "from-layout"
    exported = herdr_client.call("layout.export", pane_id=pane)["layout"]["root"]["second"]
    assert exported["command"] == command
    assert "env" not in exported


@pytest.mark.herdr_sim_only
def test_apply_with_tab_id_replaces_the_tab(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call("tab.rename", tab_id="w1:t1", label="main")
    mark = len(sim.events)
    layout = herdr_client.call("layout.apply", tab_id="w1:t1", root=three_panes())["layout"]
    assert layout["tab_id"] == "w1:t2"
    tabs = herdr_client.call("tab.list", workspace_id="w1")["tabs"]
    assert [(tab["tab_id"], tab["label"], tab["focused"]) for tab in tabs] == [
        ("w1:t2", "main", True)  # keeps the replaced tab's label and its focus
    ]
    assert failure(herdr_client.call, "pane.get", pane_id=root)[0] == "pane_not_found"
    kinds = kinds_since(sim, mark)
    assert kinds[:2] == ["tab_closed", "tab_created"]
    assert kinds.count("pane_created") == 3


def test_apply_root_cwd_follows_the_target_workspace(herdr_client: HerdrClient, root: str) -> None:
    herdr_client.call("workspace.create", cwd="/")  # w2, not focused: its pane sits in /
    layout = herdr_client.call("layout.apply", workspace_id="w2", root=pane_leaf())["layout"]
    assert layout["root"]["cwd"] == "/"


@pytest.mark.parametrize(
    ("tree", "message"),
    [
        (balanced(25), "layout has more than 24 panes"),
        (
            chain(17),  # 18 panes, but the depth is found first
            "layout depth is 17; maximum is 16",
        ),
        (
            split_node("right", 0.5, pane_leaf(), pane_leaf(command=[])),
            "pane command must not be empty",
        ),
        (pane_leaf(env={"A=B": "x"}), "env key A=B must not contain '='"),
        (
            # finite as a JSON number, infinite as Herdr's f32 ratio (src/api/schema/panes.rs
            # `ratio: f32`; src/app/api/layouts.rs refuses it)
            split_node("right", 1e39, pane_leaf(), pane_leaf()),
            "split ratio must be finite",
        ),
    ],
    ids=["too-many-panes", "too-deep", "empty-command", "bad-env", "ratio-infinite-as-f32"],
)  # fmt: skip
def test_apply_rejects_invalid_layouts_without_creating_anything(
    herdr_client: HerdrClient, root: str, tree: dict[str, Any], message: str
) -> None:
    assert failure(herdr_client.call, "layout.apply", root=tree) == ("invalid_layout", message)
    assert herdr_client.call("workspace.get", workspace_id="w1")["workspace"]["tab_count"] == 1
    assert len(herdr_client.call("pane.list")["panes"]) == 1


def test_apply_accepts_exactly_24_panes(herdr_client: HerdrClient, root: str) -> None:
    layout = herdr_client.call("layout.apply", root=balanced(24))["layout"]
    assert herdr_client.call("tab.get", tab_id=layout["tab_id"])["tab"]["pane_count"] == 24


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"tab_id": "w1:t9"}, ("tab_not_found", "tab w1:t9 not found")),
        ({"workspace_id": "w9"}, ("workspace_not_found", "workspace w9 not found")),
        (
            {"tab_id": "w1:t1", "workspace_id": "w1"},
            ("invalid_target", "use either tab_id or workspace_id, not both"),
        ),
    ],
)
def test_apply_target_errors(
    herdr_client: HerdrClient, root: str, params: dict[str, str], error: tuple[str, str]
) -> None:
    assert failure(herdr_client.call, "layout.apply", root=pane_leaf(), **params) == error
    assert herdr_client.call("workspace.get", workspace_id="w1")["workspace"]["tab_count"] == 1


def test_apply_with_no_workspace_is_workspace_not_found(herdr_client: HerdrClient) -> None:
    assert failure(herdr_client.call, "layout.apply", root=pane_leaf()) == (
        "workspace_not_found",
        "no active workspace",
    )


# -- layout.set_split_ratio ------------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_set_split_ratio_by_path(
    sim: Simulator, herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    _, right = pair
    split(herdr_client, right, "down")
    mark = len(sim.events)
    result = herdr_client.call("layout.set_split_ratio", path=[True], ratio=0.25)
    assert result["type"] == "layout_split_ratio_set"
    tree = result["layout"]["root"]
    assert (tree["ratio"], tree["second"]["ratio"]) == (0.5, 0.25)
    splits = herdr_client.call("pane.layout")["layout"]["splits"]
    assert [s["ratio"] for s in splits] == [0.5, 0.25]
    assert kinds_since(sim, mark) == ["layout_updated"]


@pytest.mark.parametrize(("ratio", "stored"), [(0.72, 0.72), (0.99, 0.9), (-1.0, 0.1)])
def test_set_split_ratio_clamps(
    herdr_client: HerdrClient, pair: tuple[str, str], ratio: float, stored: float
) -> None:
    _, right = pair
    herdr_client.call("layout.set_split_ratio", pane_id=right, path=[], ratio=ratio)
    assert root_ratio(herdr_client) == stored


@pytest.mark.parametrize("path", [[False], [True, True]])
def test_set_split_ratio_without_a_split_there_is_split_not_found(
    herdr_client: HerdrClient, pair: tuple[str, str], path: list[bool]
) -> None:
    assert failure(herdr_client.call, "layout.set_split_ratio", path=path, ratio=0.3) == (
        "split_not_found",
        "split path not found",
    )


def test_set_split_ratio_on_a_single_pane_is_split_not_found(
    herdr_client: HerdrClient, root: str
) -> None:
    assert (
        failure(herdr_client.call, "layout.set_split_ratio", path=[], ratio=0.3)[0]
        == "split_not_found"
    )


@pytest.mark.parametrize(
    "params", [{"tab_id": "w1:t9"}, {"pane_id": "w1:p9"}, {"tab_id": "w1:t1", "pane_id": "w1:p1"}]
)
@pytest.mark.parametrize(
    ("method", "extra"),
    [("layout.export", {}), ("layout.set_split_ratio", {"path": [], "ratio": 0.3})],
)
def test_export_and_set_split_ratio_of_unknown_target_are_layout_not_found(
    herdr_client: HerdrClient,
    pair: tuple[str, str],
    method: str,
    extra: dict[str, Any],
    params: dict[str, str],
) -> None:
    assert failure(herdr_client.call, method, **extra, **params) == (
        "layout_not_found",
        "layout target not found",
    )


# -- pty sizes follow the layout -------------------------------------------------------------


@pytest.mark.herdr_sim_only
def test_lone_pane_pty_is_the_headless_frame_less_sidebar_tab_bar_and_scrollbar(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    """A 120×40 headless frame leaves the panes ``Rect(26, 1, 94, 39)`` (``compute_view_internal``,
    ``src/ui.rs``); a lone pane has no border and the scrollbar gutter takes one column
    (``terminal_inner_rect``, ``src/ui/panes.rs``), so the shell sees 93 columns by 39 rows
    (the simulator used to give it 119×40) and long lines wrap at 93."""
    assert herdr_client.call("pane.layout")["layout"]["area"] == AREA
    assert pty_size(herdr_client, root, "lone") == model_size(sim, root) == "39 93"
    enter(herdr_client, root, "printf 'x%.0s' $(seq 100); echo")
    wait_line(herdr_client, root, "^x{7}$", source="visible")
    visible = herdr_client.call("pane.read", pane_id=root, source="visible")["read"]["text"]
    assert "x" * 93 + "\n" + "x" * 7 in visible


@pytest.mark.herdr_sim_only
def test_pane_pty_size_is_the_layout_content_size(
    sim: Simulator, herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    _, right = pair
    assert pty_size(herdr_client, right, "half") == model_size(sim, right) == "37 44"


@pytest.mark.herdr_sim_only
def test_pty_size_follows_layout_changes(
    sim: Simulator, herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    root, _ = pair
    herdr_client.call("layout.set_split_ratio", path=[], ratio=0.25)
    after = pty_size(herdr_client, root, "quarter")
    assert after == model_size(sim, root)
    assert after != "37 44"
    below = split(herdr_client, root, "down")
    assert pty_size(herdr_client, root, "stacked") == model_size(sim, root)
    assert pty_size(herdr_client, below, "below") == model_size(sim, below)


@pytest.mark.herdr_sim_only
def test_zoomed_pane_gets_the_whole_area(
    sim: Simulator, herdr_client: HerdrClient, pair: tuple[str, str]
) -> None:
    _, right = pair
    herdr_client.call("pane.zoom", pane_id=right, mode="on")
    zoomed = pty_size(herdr_client, right, "zoomed")
    assert zoomed == model_size(sim, right)
    # the whole area inside a border, less the scrollbar column
    assert zoomed == "37 91"
