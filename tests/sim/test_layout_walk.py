"""The layout's leaf walk runs without recursion, and its membership is kept until the tree
changes (issue 17): every subscription poll and pane lookup goes through them, and nested
generators made them a quarter of the simulator's loop with fifty subscribers; a walk with
its own stack also reaches any depth."""

from __future__ import annotations

from herdr_sim.model.layout import Layout, _Leaf, _Node, _Split, _walk_leaves


def test_the_walk_keeps_herdrs_order_at_any_depth() -> None:
    node: _Node = _Leaf(0)
    for pane in range(1, 3000):  # deeper than Python's recursion limit
        node = (
            _Split("right", 0.5, _Leaf(pane), node)
            if pane % 2
            else _Split("down", 0.5, node, _Leaf(pane))
        )
    order = [leaf.pane for leaf in _walk_leaves(node)]
    odd = list(range(2999, 0, -2))
    even = list(range(2, 3000, 2))
    assert len(order) == 3000
    assert order[: len(odd)] == odd  # first children before second ones, depth first
    assert order[len(odd) :] == [0, *even]


def test_membership_and_order_on_a_layout() -> None:
    layout = Layout(1)
    layout.split(1, 2, "right")
    layout.split(1, 3, "down")
    assert layout.panes() == [1, 3, 2]
    assert 3 in layout
    assert 4 not in layout
    layout.remove(3)
    assert 3 not in layout
    layout.replace(2, 5)  # membership follows every change of the tree
    assert (2 in layout, 5 in layout) == (False, True)
    layout.swap(1, 5)
    assert layout.panes() == [5, 1]
    assert 1 in layout
    assert "1" not in layout
