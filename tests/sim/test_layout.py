"""Tests for the pure BSP layout model of a tab (``herdr_sim.model.layout``).

The expected numbers are Herdr's: they come from Herdr's own layout tests (the 100x40
"sample" tree, the resize and close-focus cases) and from running Herdr's layout code on the
same inputs.  The state machine at the end checks the invariants every API result relies on.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import jsonschema
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from herdr_sim.model.geometry import (
    ALL_BORDERS,
    NO_BORDERS,
    Borders,
    Direction,
    PaneChrome,
    Rect,
    SplitDirection,
    apply_chrome,
    f32_display,
    inner_rect,
    pty_size,
    terminal_area,
    to_f32,
)
from herdr_sim.model.layout import (
    DEFAULT_AREA,
    InvalidRatioError,
    Layout,
    LayoutEmptyError,
    LayoutTree,
    PaneNode,
    SplitNode,
    ZoomMode,
    layout_snapshot,
    layout_tree_error,
    map_panes,
    normalize_resize_amount,
    normalize_split_ratio,
    parse_split_id,
    spawn_order,
    split_id,
)

AREA_100 = Rect(0, 0, 100, 40)


def sample_layout() -> Layout:
    """Herdr's test fixture: 1 | (2 / (3 | 4)) at ratios 0.3, 0.6, 0.4, focus on 2."""
    tree = SplitNode(
        "right",
        0.3,
        PaneNode(1),
        SplitNode("down", 0.6, PaneNode(2), SplitNode("right", 0.4, PaneNode(3), PaneNode(4))),
    )
    return Layout.from_tree(tree, focused=2)


def ratios(layout: Layout) -> list[float]:
    return [info.ratio for info in layout.splits()]


# --- rects and split ids over a whole 120x40 area ----------------------------------------------

#: A whole 120×40 area at the origin: the arithmetic below is checked on it (the simulator's
#: default pane area, the rest of Herdr's headless frame, is :data:`DEFAULT_AREA`).
FRAME = Rect(0, 0, 120, 40)


def test_default_area_is_what_herdr_s_headless_frame_leaves_the_panes() -> None:
    """Herdr renders its whole UI into the 120×40 headless frame (``src/server/headless.rs``
    ``render_and_stream`` → ``render_virtual_with_runtime_registry``); ``compute_view_internal``
    (``src/ui.rs``) gives the sidebar 26 columns (``ui.sidebar_width``) and the tab bar the top
    row, as Herdr's test ``explicit_surface_layout_drives_render_cursor_and_hyperlinks``
    (``src/ui/tab_surface.rs``: 106×20 → ``Rect(26, 1, 80, 19)``) shows. A lone pane has no
    border and its pty gives a column to the scrollbar (``terminal_inner_rect``,
    ``src/ui/panes.rs``): 93×39, not the old 119×40."""
    assert Rect(26, 1, 94, 39) == DEFAULT_AREA
    assert terminal_area(106, 20) == Rect(26, 1, 80, 19)
    assert terminal_area(160, 50) == Rect(26, 1, 134, 49)
    # at most 64 columns: the mobile layout, two header rows above full-width panes
    assert terminal_area(64, 30) == Rect(0, 2, 64, 28)
    assert terminal_area(40, 2) == Rect(0, 0, 0, 0)
    layout = Layout(1)
    assert layout.pane_rects() == {1: DEFAULT_AREA}
    assert layout.content_size(1) == (93, 39)


def test_single_pane_fills_the_area_and_its_pty_gives_a_column_to_the_scrollbar() -> None:
    layout = Layout(1)

    assert layout.pane_rects(FRAME) == {1: Rect(0, 0, 120, 40)}
    assert layout.splits(FRAME) == []
    assert layout.content_size(1, FRAME) == (119, 40)


def test_split_right_halves_the_area_and_borders_shrink_each_pty() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")

    assert layout.pane_rects(FRAME) == {1: Rect(0, 0, 60, 40), 2: Rect(60, 0, 60, 40)}
    [info] = layout.splits(FRAME)
    assert (info.id, info.direction, info.ratio, info.rect) == (
        "split_0_root",
        "right",
        0.5,
        Rect(0, 0, 120, 40),
    )
    assert layout.content_size(1, FRAME) == (57, 38)
    assert layout.focused == 1


def test_three_panes_number_the_nested_split_by_its_path() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")
    layout.split(2, 3, "down")

    assert layout.pane_rects(FRAME) == {
        1: Rect(0, 0, 60, 40),
        2: Rect(60, 0, 60, 20),
        3: Rect(60, 20, 60, 20),
    }
    assert [(s.id, s.direction, s.rect) for s in layout.splits(FRAME)] == [
        ("split_0_root", "right", Rect(0, 0, 120, 40)),
        ("split_1_1", "down", Rect(60, 0, 60, 40)),
    ]


def test_four_panes_list_panes_and_splits_depth_first() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")
    layout.split(2, 3, "down")
    layout.split(1, 4, "down")

    assert layout.panes() == [1, 4, 2, 3]
    assert layout.pane_rects(FRAME) == {
        1: Rect(0, 0, 60, 20),
        4: Rect(0, 20, 60, 20),
        2: Rect(60, 0, 60, 20),
        3: Rect(60, 20, 60, 20),
    }
    assert [(s.id, s.path) for s in layout.splits(FRAME)] == [
        ("split_0_root", ()),
        ("split_1_0", (False,)),
        ("split_2_1", (True,)),
    ]
    assert layout.content_size(4, FRAME) == (57, 18)


def test_herdr_sample_tree_rects_at_100x40() -> None:
    layout = sample_layout()

    assert layout.pane_rects(AREA_100) == {
        1: Rect(0, 0, 30, 40),
        2: Rect(30, 0, 70, 24),
        3: Rect(30, 24, 28, 16),
        4: Rect(58, 24, 42, 16),
    }
    assert [s.id for s in layout.splits(AREA_100)] == ["split_0_root", "split_1_1", "split_2_11"]


def test_offset_area_shifts_every_rect() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")

    assert layout.pane_rects(Rect(26, 1, 94, 39)) == {
        1: Rect(26, 1, 47, 39),
        2: Rect(73, 1, 47, 39),
    }


@pytest.mark.parametrize(
    ("width", "ratio", "first"),
    [
        (101, 0.5, 51),  # 50.5 rounds away from zero, not to even
        (7, 0.5, 4),
        (5, 0.5, 3),
        (120, 1 / 3, 40),
        (10, 0.25, 3),  # 2.5 -> 3
        (3, 0.1, 0),  # 0.3 -> 0: a pane may get no columns at all
    ],
)
def test_first_child_width_is_rounded_half_away_from_zero(
    width: int, ratio: float, first: int
) -> None:
    layout = Layout(1)
    layout.split(1, 2, "right", ratio)

    rects = layout.pane_rects(Rect(0, 0, width, 10))

    assert rects[1].width == first
    assert rects[2] == Rect(first, 0, width - first, 10)


# --- ratios ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "stored"),
    [
        (None, 0.5),
        (0.3, 0.3),
        (0.05, 0.1),
        (0.95, 0.9),
        (-3.0, 0.1),
        (math.nan, 0.5),
        (math.inf, 0.5),
        (1e39, 0.5),  # overflows f32, so Herdr sees infinity
        (0.333, 0.333),
    ],
)
def test_split_ratio_defaults_and_clamps_like_herdr(requested: float | None, stored: float) -> None:
    layout = Layout(1)
    layout.split(1, 2, "down", requested)

    assert ratios(layout) == [stored]
    assert f32_display(normalize_split_ratio(requested)) == stored


def test_ratios_are_f32_and_reported_with_their_shortest_decimal() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")

    for _ in range(3):
        layout.resize(1, "right")

    # 0.5 + 3 * 0.05 in single precision is 0.65000004, which Herdr prints as such.
    assert ratios(layout) == [0.65000004]
    assert to_f32(0.65000004) != to_f32(0.65)


# --- neighbours and edges -------------------------------------------------------------------


def test_neighbor_prefers_the_larger_shared_span_over_a_closer_centre() -> None:
    # Pane 1 covers rows 10-19 on the right.  On the left, 2 covers rows 0-18 (9 shared
    # rows) and 3 rows 19-20 (1 shared row, but its centre is nearer).  Herdr picks 2.
    left = SplitNode("down", 0.475, PaneNode(2), SplitNode("down", 0.1, PaneNode(3), PaneNode(4)))
    right = SplitNode("down", 0.25, PaneNode(5), SplitNode("down", 1 / 3, PaneNode(1), PaneNode(6)))
    layout = Layout.from_tree(SplitNode("right", 0.5, left, right))

    assert layout.pane_rects(FRAME)[2] == Rect(0, 0, 60, 19)
    assert layout.pane_rects(FRAME)[3] == Rect(0, 19, 60, 2)
    assert layout.neighbor(1, "left", FRAME) == 2
    assert layout.neighbor(3, "right", FRAME) == 1


def test_neighbor_ties_fall_back_to_tree_order() -> None:
    tree = SplitNode("right", 0.5, SplitNode("down", 0.5, PaneNode(2), PaneNode(3)), PaneNode(1))
    layout = Layout.from_tree(tree)

    assert layout.neighbor(1, "left") == 2


def test_neighbor_in_every_direction_of_the_sample_tree() -> None:
    layout = sample_layout()
    found = {
        (pane, direction): layout.neighbor(pane, direction, AREA_100)
        for pane in layout.panes()
        for direction in ("left", "right", "up", "down")
    }

    assert found == {
        (1, "left"): None,
        (1, "right"): 2,
        (1, "up"): None,
        (1, "down"): None,
        (2, "left"): 1,
        (2, "right"): None,
        (2, "up"): None,
        (2, "down"): 4,  # 4 shares 42 columns with 2, 3 only 28
        (3, "left"): 1,
        (3, "right"): 4,
        (3, "up"): 2,
        (3, "down"): None,
        (4, "left"): 3,
        (4, "right"): None,
        (4, "up"): 2,
        (4, "down"): None,
    }


def test_edges_report_which_sides_touch_the_area() -> None:
    layout = sample_layout()

    assert layout.edges(3, AREA_100) == {"left": False, "right": False, "up": False, "down": True}
    assert layout.edges(1, AREA_100) == {"left": True, "right": False, "up": True, "down": True}


def test_focus_direction_moves_focus_and_remembers_the_pane_left() -> None:
    layout = sample_layout()

    assert layout.focus_direction(2, "left", AREA_100) == 1
    assert layout.focused == 1
    assert layout.previous_focus == 2
    assert layout.focus_direction(1, "left", AREA_100) is None
    assert layout.focused == 1


# --- resize ---------------------------------------------------------------------------------


def test_resize_right_edge_grows_the_first_child_without_moving_focus() -> None:
    layout = sample_layout()

    assert layout.resize(1, "right", 0.05, AREA_100)

    # 0.3 + 0.05 in f32 is 0.35000002, and that is what Herdr reports.
    assert ratios(layout) == [0.35000002, 0.6, 0.4]
    assert layout.focused == 2


def test_resize_second_child_toward_its_divider_shrinks_the_ratio() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")

    assert layout.resize(2, "left", 0.05, AREA_100)

    assert ratios(layout) == [0.45]


@pytest.mark.parametrize(
    ("orientation", "pane", "edge", "expected"),
    [
        ("right", 1, "left", 0.45),
        ("right", 2, "right", 0.55),
        ("down", 1, "up", 0.45),
        ("down", 2, "down", 0.55),
    ],
)
def test_resize_on_an_outer_edge_shrinks_the_pane(
    orientation: SplitDirection, pane: int, edge: Direction, expected: float
) -> None:
    layout = Layout(1)
    layout.split(1, 2, orientation)

    assert layout.resize(pane, edge, 0.05, AREA_100)

    assert ratios(layout) == [expected]


def test_resize_outer_edge_falls_back_to_the_ancestor_split() -> None:
    tree = SplitNode("right", 0.6, SplitNode("down", 0.5, PaneNode(1), PaneNode(2)), PaneNode(3))
    layout = Layout.from_tree(tree)
    before = layout.pane_rects(AREA_100)[1]

    assert layout.resize(1, "left", 0.05, AREA_100)

    after = layout.pane_rects(AREA_100)[1]
    assert (after.height, after.width < before.width) == (before.height, True)
    assert ratios(layout) == [0.55, 0.5]


def test_resize_picks_the_divider_in_the_panes_own_branch() -> None:
    # Both horizontal dividers sit at x=50; only the lower one shares rows with pane 3.
    tree = SplitNode(
        "down",
        0.5,
        SplitNode("right", 0.5, PaneNode(1), PaneNode(2)),
        SplitNode("right", 0.5, PaneNode(3), PaneNode(4)),
    )
    layout = Layout.from_tree(tree)

    assert layout.resize(3, "right", 0.05, AREA_100)

    assert ratios(layout) == [0.5, 0.5, 0.55]


def test_resize_reports_unchanged_when_nothing_can_move() -> None:
    single = Layout(1)
    assert not single.resize(1, "right")

    layout = Layout(1)
    layout.split(1, 2, "right", 0.9)
    assert not layout.resize(1, "right")
    assert ratios(layout) == [0.9]


@pytest.mark.parametrize(
    ("amount", "step"),
    [(None, 0.05), (-0.2, 0.2), (0.8, 0.5), (math.nan, 0.05), (math.inf, 0.05)],
)
def test_resize_amount_is_absolute_capped_and_defaulted(amount: float | None, step: float) -> None:
    assert normalize_resize_amount(amount) == to_f32(step)


# --- swap -----------------------------------------------------------------------------------


def test_swap_exchanges_cells_and_keeps_the_tree() -> None:
    layout = sample_layout()
    before = layout.pane_rects(AREA_100)
    splits_before = layout.splits(AREA_100)

    outcome = layout.swap(2, 4)

    assert (outcome.changed, outcome.reason, outcome.target) == (True, None, 4)
    after = layout.pane_rects(AREA_100)
    assert (after[4], after[2], after[1], after[3]) == (before[2], before[4], before[1], before[3])
    assert layout.splits(AREA_100) == splits_before
    assert layout.panes() == [1, 4, 3, 2]
    assert layout.focused == 2


def test_swap_focuses_the_source_pane() -> None:
    layout = sample_layout()

    layout.swap(3, 1)

    assert layout.focused == 3
    assert layout.previous_focus == 2


@pytest.mark.parametrize(
    ("a", "b", "reason"),
    [(2, 2, "same_pane"), (2, 99, "not_found"), (99, 2, "not_found"), (99, 99, "not_found")],
)
def test_swap_noops_give_herdr_reasons(a: int, b: int, reason: str) -> None:
    layout = sample_layout()
    before = layout.to_tree()

    outcome = layout.swap(a, b)

    assert (outcome.changed, outcome.reason) == (False, reason)
    assert layout.to_tree() == before
    assert layout.focused == 2


def test_directional_swap_uses_the_neighbor_or_reports_no_neighbor() -> None:
    layout = sample_layout()

    assert layout.swap_direction(1, "left", AREA_100).reason == "no_neighbor"
    outcome = layout.swap_direction(3, "right", AREA_100)

    assert (outcome.changed, outcome.target) == (True, 4)
    assert layout.panes() == [1, 2, 4, 3]


# --- zoom -----------------------------------------------------------------------------------


def test_zoom_on_a_single_pane_is_refused() -> None:
    outcome = Layout(1).set_zoom("toggle", 1)

    assert (outcome.changed, outcome.reason, outcome.zoomed) == (False, "single_pane", False)


def test_zoom_toggle_on_then_off() -> None:
    layout = sample_layout()

    on = layout.set_zoom("toggle", 2)
    assert (on.zoom_changed, on.focus_changed, on.reason, on.zoomed) == (True, False, None, True)
    off = layout.set_zoom("toggle", 2)
    assert (off.zoom_changed, off.zoomed, layout.zoomed) == (True, False, False)


@pytest.mark.parametrize(
    ("start_zoomed", "mode", "reason"),
    [(True, "on", "already_zoomed"), (False, "off", "already_unzoomed")],
)
def test_zoom_to_the_current_state_is_a_noop(
    start_zoomed: bool, mode: ZoomMode, reason: str
) -> None:
    layout = sample_layout()
    if start_zoomed:
        layout.set_zoom("on", 2)

    outcome = layout.set_zoom(mode, 2)

    assert (outcome.changed, outcome.reason, outcome.zoomed) == (False, reason, start_zoomed)


def test_zooming_a_background_pane_focuses_it_even_when_refused() -> None:
    layout = sample_layout()

    outcome = layout.set_zoom("off", 4)

    assert (outcome.zoom_changed, outcome.focus_changed, outcome.changed) == (False, True, True)
    assert outcome.reason == "already_unzoomed"
    assert layout.focused == 4


def test_zoom_keeps_reported_rects_but_gives_the_focused_pty_the_whole_area() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")
    tiled = layout.pane_rects(FRAME)

    layout.set_zoom("on", 2)

    assert layout.pane_rects(FRAME) == tiled
    assert layout.visible_rects(FRAME) == {2: FRAME}
    assert layout.content_size(2, FRAME) == (117, 38)
    assert layout.content_size(1, FRAME) == (57, 38)


def test_split_and_remove_cancel_zoom() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")
    layout.set_zoom("on", 1)
    layout.split(2, 3, "down")
    assert not layout.zoomed

    layout.set_zoom("on", 1)
    layout.remove(3)
    assert not layout.zoomed


# --- focus after remove ---------------------------------------------------------------------


def test_closing_the_focused_pane_returns_to_the_pane_focus_came_from() -> None:
    layout = sample_layout()
    layout.focus(4)

    assert layout.remove(4) == 2


def test_closing_a_pane_opened_with_focus_returns_to_its_opener() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right", focus=True)
    layout.split(2, 3, "down", focus=True)
    layout.focus(1)
    layout.split(1, 4, "right", focus=True)

    assert layout.remove(4) == 1
    assert layout.panes() == [1, 2, 3]


def test_closing_a_background_pane_keeps_the_focus_history() -> None:
    layout = sample_layout()
    layout.focus(4)

    assert layout.remove(1) == 4
    assert layout.remove(4) == 2


def test_closing_the_remembered_pane_drops_the_history() -> None:
    layout = sample_layout()
    layout.focus(4)
    layout.remove(2)

    assert layout.remove(4) == 3


def test_without_history_focus_goes_to_the_next_pane_in_tree_order() -> None:
    layout = sample_layout()
    assert layout.remove(2) == 3

    layout = Layout.from_tree(sample_layout().to_tree(), focused=4)
    assert layout.remove(4) == 3  # the last pane falls back to the one before it


def test_focus_history_is_used_once() -> None:
    layout = sample_layout()
    layout.focus(4)

    assert layout.remove(4) == 2
    assert layout.remove(2) == 3


def test_resize_and_unfocused_splits_leave_the_history_alone() -> None:
    layout = sample_layout()
    layout.focus(4)
    layout.resize(1, "right", 0.05, AREA_100)
    layout.split(1, 9, "right")

    assert layout.remove(4) == 2


def test_removing_the_last_pane_empties_the_layout() -> None:
    layout = Layout(7)

    assert layout.remove(7) is None
    assert layout.panes() == []
    assert 7 not in layout
    with pytest.raises(LayoutEmptyError):
        _ = layout.focused


def test_unknown_panes_are_rejected() -> None:
    layout = Layout(1)

    with pytest.raises(KeyError):
        layout.remove(2)
    with pytest.raises(KeyError):
        layout.split(2, 3, "right")
    with pytest.raises(ValueError, match="already"):
        layout.split(1, 1, "right")
    with pytest.raises(KeyError):
        layout.focused = 5


def test_replace_keeps_the_slot_focus_and_history() -> None:
    layout = sample_layout()
    layout.focus(3)
    rects = layout.pane_rects(AREA_100)

    layout.replace(3, 30)
    layout.replace(2, 20)

    assert layout.panes() == [1, 20, 30, 4]
    assert layout.pane_rects(AREA_100)[30] == rects[3]
    assert (layout.focused, layout.previous_focus) == (30, 20)


# --- layout.set_split_ratio -----------------------------------------------------------------


def test_set_split_ratio_by_path_and_by_id() -> None:
    layout = sample_layout()

    assert layout.set_split_ratio([True], 0.72)
    assert layout.set_split_ratio("split_2_11", 0.05)
    assert layout.set_split_ratio((), 0.3)  # unchanged still counts as found

    assert ratios(layout) == [0.3, 0.72, 0.1]


@pytest.mark.parametrize("target", [[False], [True, True, True], "split_1_0", "split_9_11", "x"])
def test_set_split_ratio_on_a_missing_split_is_not_found(target: str | list[bool]) -> None:
    layout = sample_layout()

    assert not layout.set_split_ratio(target, 0.5)
    assert ratios(layout) == [0.3, 0.6, 0.4]


@pytest.mark.parametrize("ratio", [math.nan, math.inf, -math.inf, 1e39])
def test_set_split_ratio_rejects_non_finite_ratios(ratio: float) -> None:
    with pytest.raises(InvalidRatioError, match="ratio must be finite"):
        sample_layout().set_split_ratio([], ratio)


def test_split_ids_round_trip() -> None:
    assert split_id(0, ()) == "split_0_root"
    assert split_id(5, (True, False, True)) == "split_5_101"
    assert parse_split_id("split_5_101") == (5, (True, False, True))
    assert parse_split_id("split_0_root") == (0, ())
    assert parse_split_id("split_x_root") is None


# --- export / apply -------------------------------------------------------------------------


def test_export_tree_mirrors_the_layout() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right", 0.65)
    layout.split(2, 3, "down")

    assert layout.to_tree() == SplitNode(
        "right", 0.65, PaneNode(1), SplitNode("down", 0.5, PaneNode(2), PaneNode(3))
    )


def test_apply_focuses_the_first_leaf_unzoomed_and_normalises_ratios() -> None:
    tree = SplitNode("down", 1.5, SplitNode("right", 0.0, PaneNode(5), PaneNode(6)), PaneNode(7))

    layout = Layout.from_tree(tree)

    assert (layout.focused, layout.zoomed, layout.previous_focus) == (5, False, None)
    assert ratios(layout) == [0.9, 0.1]


def test_apply_rejects_a_pane_used_twice() -> None:
    with pytest.raises(ValueError, match="twice"):
        Layout.from_tree(SplitNode("down", 0.5, PaneNode(1), PaneNode(1)))


def test_spawn_order_follows_herdr_apply() -> None:
    # (A | B) / C: the tab starts with A, splits it for C, then splits A again for B.
    tree = SplitNode("down", 0.5, SplitNode("right", 0.5, PaneNode(0), PaneNode(0)), PaneNode(0))
    nested = SplitNode("right", 0.5, PaneNode(0), SplitNode("down", 0.5, PaneNode(0), tree))

    assert spawn_order(tree) == [0, 2, 1]
    assert spawn_order(nested) == [0, 1, 2, 4, 3]
    assert spawn_order(PaneNode(0)) == [0]


def test_map_panes_relabels_leaves() -> None:
    tree = SplitNode("right", 0.5, PaneNode(1), PaneNode(2))

    assert map_panes(tree, lambda pane: pane * 10) == SplitNode(
        "right", 0.5, PaneNode(10), PaneNode(20)
    )


def _column(depth: int) -> LayoutTree:
    node: LayoutTree = PaneNode(0)
    for _ in range(depth - 1):
        node = SplitNode("down", 0.5, node, PaneNode(0))
    return node


def _balanced(leaves: int) -> LayoutTree:
    if leaves == 1:
        return PaneNode(0)
    half = leaves // 2
    return SplitNode("right", 0.5, _balanced(half), _balanced(leaves - half))


def test_layout_tree_limits_match_herdr_messages() -> None:
    assert layout_tree_error(_column(16)) is None
    assert layout_tree_error(_column(17)) == "layout depth is 17; maximum is 16"
    assert layout_tree_error(_balanced(24)) is None
    assert layout_tree_error(_balanced(25)) == "layout has more than 24 panes"
    bad_ratio = SplitNode("right", math.nan, PaneNode(0), PaneNode(1))
    assert layout_tree_error(bad_ratio) == "split ratio must be finite"


SCHEMA_PATH = (
    Path(
        os.environ.get("HERDR_CONTRACTS_DIR")
        or Path(__file__).resolve().parents[3] / "shared" / "contracts"
    )
    / "herdr-api.protocol22.schema.json"
)


@pytest.mark.skipif(not SCHEMA_PATH.exists(), reason="shared protocol schema not present")
def test_snapshot_has_the_wire_shape_and_field_order() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right", 0.333, focus=True)
    layout.set_zoom("on", 2)

    snapshot = layout_snapshot(
        layout, FRAME, workspace_id="w1", tab_id="w1:t1", public_id=lambda p: f"w1:p{p}"
    )

    root = json.loads(SCHEMA_PATH.read_text())
    schema = {**root, "$ref": "#/schemas/success_response/$defs/PaneLayoutSnapshot"}
    jsonschema.validate(snapshot, schema)
    assert list(snapshot) == [
        "workspace_id",
        "tab_id",
        "zoomed",
        "area",
        "focused_pane_id",
        "panes",
        "splits",
    ]
    assert json.dumps(snapshot["splits"]) == (
        '[{"id": "split_0_root", "direction": "right", "ratio": 0.333, '
        '"rect": {"x": 0, "y": 0, "width": 120, "height": 40}}]'
    )
    assert snapshot["zoomed"] is True
    assert snapshot["focused_pane_id"] == "w1:p2"
    assert snapshot["panes"] == [
        {"pane_id": "w1:p1", "focused": False, "rect": {"x": 0, "y": 0, "width": 40, "height": 40}},
        {"pane_id": "w1:p2", "focused": True, "rect": {"x": 40, "y": 0, "width": 80, "height": 40}},
    ]


# --- chrome ---------------------------------------------------------------------------------


def test_borderless_gaps_take_a_column_and_row_from_panes_with_neighbors() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")
    layout.split(1, 3, "down")
    chrome = PaneChrome(borders=False, gaps=True)

    assert layout.pane_rects(FRAME, chrome) == {
        1: Rect(0, 0, 59, 19),
        3: Rect(0, 20, 59, 20),
        2: Rect(60, 0, 60, 40),
    }
    assert layout.content_size(1, FRAME, chrome) == (58, 19)


def test_shared_borders_without_gaps_or_outer_borders() -> None:
    cells = {1: Rect(0, 0, 60, 40), 2: Rect(60, 0, 60, 40)}

    chromed = apply_chrome(cells, PaneChrome(gaps=False, outer_borders=False))

    assert chromed[1] == (Rect(0, 0, 60, 40), NO_BORDERS)
    assert chromed[2] == (Rect(60, 0, 60, 40), Borders(left=True))


def test_pty_size_has_herdr_floors_and_no_gutter_on_the_alternate_screen() -> None:
    assert pty_size(Rect(0, 0, 3, 3), ALL_BORDERS) == (4, 2)
    assert pty_size(Rect(0, 0, 60, 40), ALL_BORDERS, alternate_screen=True) == (58, 38)
    assert pty_size(Rect(0, 0, 6, 10), ALL_BORDERS) == (4, 8)  # inner 4 wide: no gutter
    assert inner_rect(Rect(5, 5, 1, 1), ALL_BORDERS) == Rect(6, 6, 0, 0)


# --- property tests -------------------------------------------------------------------------

AREAS = [DEFAULT_AREA, AREA_100, Rect(26, 1, 94, 39), Rect(0, 0, 9, 5), Rect(3, 2, 250, 80)]
DIRECTION_VALUES: list[Direction] = ["left", "right", "up", "down"]
ORIENTATIONS: list[SplitDirection] = ["right", "down"]
ZOOM_MODES: list[ZoomMode] = ["toggle", "on", "off"]
DIRECTIONS = st.sampled_from(DIRECTION_VALUES)
RATIOS = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0.0, max_value=1.0),
)


def _leaf_panes(tree: LayoutTree) -> list[int]:
    if isinstance(tree, PaneNode):
        return [tree.pane]
    return _leaf_panes(tree.first) + _leaf_panes(tree.second)


def _tree_ratios(tree: LayoutTree) -> list[float]:
    if isinstance(tree, PaneNode):
        return []
    return [tree.ratio, *_tree_ratios(tree.first), *_tree_ratios(tree.second)]


class LayoutMachine(RuleBasedStateMachine):
    """Random edits on one layout, checked against a plain set of the panes it should hold."""

    layout: Layout
    expected: set[int]
    next_pane: int

    @initialize()
    def start(self) -> None:
        self.layout = Layout(1)
        self.expected = {1}
        self.next_pane = 2

    def pick(self, data: st.DataObject) -> int:
        return data.draw(st.sampled_from(sorted(self.expected)))

    @precondition(lambda self: len(self.expected) < 12)
    @rule(
        data=st.data(),
        direction=st.sampled_from(ORIENTATIONS),
        ratio=RATIOS,
        focus=st.booleans(),
    )
    def split(
        self, data: st.DataObject, direction: SplitDirection, ratio: float | None, focus: bool
    ) -> None:
        target = self.pick(data)
        self.layout.split(target, self.next_pane, direction, ratio, focus=focus)
        self.expected.add(self.next_pane)
        if focus:
            assert self.layout.focused == self.next_pane
        self.next_pane += 1

    @precondition(lambda self: len(self.expected) > 1)
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        pane = self.pick(data)
        focused_before = self.layout.focused
        focused = self.layout.remove(pane)
        self.expected.discard(pane)
        assert focused == self.layout.focused
        if pane != focused_before:
            assert focused == focused_before

    @rule(data=st.data(), direction=DIRECTIONS, amount=RATIOS, area=st.sampled_from(AREAS))
    def resize(
        self, data: st.DataObject, direction: Direction, amount: float | None, area: Rect
    ) -> None:
        before = self.layout.to_tree()
        focused = self.layout.focused
        changed = self.layout.resize(self.pick(data), direction, amount, area)
        assert changed == (self.layout.to_tree() != before)
        assert self.layout.focused == focused

    @rule(data=st.data())
    def swap(self, data: st.DataObject) -> None:
        a, b = self.pick(data), self.pick(data)
        outcome = self.layout.swap(a, b)
        assert outcome.changed == (a != b)
        if outcome.changed:
            assert self.layout.focused == a

    @rule(data=st.data(), direction=DIRECTIONS, area=st.sampled_from(AREAS))
    def swap_direction(self, data: st.DataObject, direction: Direction, area: Rect) -> None:
        self.layout.swap_direction(self.pick(data), direction, area)

    @rule(data=st.data(), mode=st.sampled_from(ZOOM_MODES))
    def zoom(self, data: st.DataObject, mode: ZoomMode) -> None:
        pane = self.pick(data)
        outcome = self.layout.set_zoom(mode, pane)
        assert self.layout.focused == pane
        assert outcome.zoomed == self.layout.zoomed

    @rule(data=st.data(), ratio=st.floats(min_value=-2.0, max_value=2.0))
    def set_ratio(self, data: st.DataObject, ratio: float) -> None:
        splits = self.layout.splits()
        if splits:
            chosen = data.draw(st.sampled_from(splits))
            assert self.layout.set_split_ratio(chosen.id, ratio)

    @rule(data=st.data(), direction=DIRECTIONS, area=st.sampled_from(AREAS))
    def focus_direction(self, data: st.DataObject, direction: Direction, area: Rect) -> None:
        self.layout.focus_direction(self.pick(data), direction, area)

    @invariant()
    def panes_match_and_focus_is_inside(self) -> None:
        assert set(self.layout.panes()) == self.expected
        assert self.layout.focused in self.expected
        previous = self.layout.previous_focus
        assert previous is None or (previous in self.expected and previous != self.layout.focused)
        assert not self.layout.zoomed or len(self.expected) > 1

    @invariant()
    def order_is_depth_first(self) -> None:
        assert self.layout.panes() == _leaf_panes(self.layout.to_tree())

    @invariant()
    def ratios_stay_in_bounds(self) -> None:
        for ratio in [*_tree_ratios(self.layout.to_tree()), *ratios(self.layout)]:
            assert 0.1 <= ratio <= 0.9

    @invariant()
    def cells_tile_the_area(self) -> None:
        for area in AREAS:
            cells = self.layout.raw_rects(area)
            rects = list(cells.values())
            assert sum(r.width * r.height for r in rects) == area.width * area.height
            for i, r in enumerate(rects):
                assert area.x <= r.x
                assert r.right <= area.right
                assert area.y <= r.y
                assert r.bottom <= area.bottom
                for other in rects[i + 1 :]:
                    shares_cell = (
                        r.x < other.right
                        and other.x < r.right
                        and r.y < other.bottom
                        and other.y < r.bottom
                    )
                    assert not shares_cell
            chrome = PaneChrome(borders=False, gaps=True)
            for pane, rect in self.layout.pane_rects(area, chrome).items():
                cell = cells[pane]
                assert cell.x == rect.x
                assert cell.y == rect.y
                assert rect.width <= cell.width
                assert rect.height <= cell.height
            assert self.layout.pane_rects(area) == cells

    @invariant()
    def content_is_at_least_one_cell_when_the_cell_allows(self) -> None:
        # every pane's size from one tiling (content_sizes); content_size, which tiles the
        # area again for its one pane, must agree for the focused pane (and for every pane
        # in test_every_panes_size_at_once_is_each_panes_size): asking it for each pane
        # after each step was half of this machine's time
        for area in AREAS:
            cells = self.layout.raw_rects(area)
            sizes = self.layout.content_sizes(area)
            for pane, (rect, borders) in apply_chrome(cells).items():
                if cells[pane].width >= 3 and cells[pane].height >= 3:
                    inner = inner_rect(rect, borders)
                    assert inner.width >= 1
                    assert inner.height >= 1
                cols, rows = sizes[pane]
                assert cols >= 4
                assert rows >= 2
            focused = self.layout.focused
            assert self.layout.content_size(focused, area) == sizes[focused]

    @invariant()
    def edges_and_neighbors_agree(self) -> None:
        area = DEFAULT_AREA
        cells = self.layout.raw_rects(area)
        if any(rect.width == 0 or rect.height == 0 for rect in cells.values()):
            return  # an empty cell can sit "beside" a pane on the area's own edge
        for pane in cells:
            for direction, touches in self.layout.edges(pane, area).items():
                assert touches == (self.layout.neighbor(pane, direction, area) is None)

    @invariant()
    def split_ids_name_their_paths(self) -> None:
        for index, info in enumerate(self.layout.splits()):
            assert parse_split_id(info.id) == (index, info.path)

    @invariant()
    def export_then_apply_is_the_identity(self) -> None:
        tree = self.layout.to_tree()
        rebuilt = Layout.from_tree(tree, focused=self.layout.focused)
        assert rebuilt.to_tree() == tree
        assert rebuilt.focused == self.layout.focused
        for area in AREAS:
            assert rebuilt.pane_rects(area) == self.layout.pane_rects(area)
            assert rebuilt.splits(area) == self.layout.splits(area)


def test_layout_state_machine() -> None:
    """Slow because Hypothesis plays 150 sequences of up to 40 layout operations and checks every
    invariant after each step.
    """
    run_state_machine_as_test(
        LayoutMachine,
        settings=settings(max_examples=150, stateful_step_count=40, deadline=None),
    )


@pytest.mark.parametrize("zoomed", [False, True])
@pytest.mark.parametrize("area", [DEFAULT_AREA, AREA_100, Rect(3, 2, 61, 17)])
def test_every_panes_size_at_once_is_each_panes_size(area: Rect, zoomed: bool) -> None:
    """A tab's resize sizes every pty from one tiling (``content_sizes``); each size must
    be the one ``content_size`` gives that pane alone, zoomed focus included."""
    layout = sample_layout()
    layout.split(4, 5, "down", 0.7)
    layout.split(1, 6, "right")
    if zoomed:
        layout.set_zoom("on", 2)
    sizes = layout.content_sizes(area)
    assert list(sizes) == layout.panes(), "every pane once, in tree order"
    for pane in layout.panes():
        assert sizes[pane] == layout.content_size(pane, area), f"pane {pane} in {area}"
    if zoomed:
        assert sizes[2] != layout.content_size(3, area), "the zoomed pane gets the whole area"
