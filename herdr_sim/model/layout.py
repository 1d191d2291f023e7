"""The binary-space-partition pane layout of one Herdr tab, as a pure model (no I/O).

Every Herdr tab tiles its panes with a BSP tree: a leaf is a pane, an inner node splits its
cell ``right`` (side by side) or ``down`` (stacked) at an f32 ratio given to the first child.
This module reproduces the tree edits and the geometry Herdr derives from it, because API
results expose them directly: pane rects, split ids, which pane is the neighbour in a
direction, which divider a resize moves, where focus lands when a pane closes.

Pane ids here are opaque ints; the caller maps them to public ``wN:pN`` ids.  Geometry takes
the tab's terminal ``area`` as an argument, since it belongs to the server, not to the tab.

Deliberate Herdr behaviours worth knowing:

* ``pane_rects`` (what ``pane.layout`` reports) ignores zoom: Herdr keeps reporting every
  pane's tiled rect with ``zoomed: true``; only drawing and pty sizes honour zoom
  (:meth:`Layout.visible_rects`, :meth:`Layout.content_size`).
* Neighbour search, edges and resize work on the raw cells, before pane chrome.
* Splitting, removing or inserting a pane cancels zoom.
* Closing the focused pane returns focus to the pane focused just before it, when that
  pane still exists, else to the next pane in tree order (the previous one for the last).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from herdr_sim.model.geometry import (
    ALL_BORDERS,
    DEFAULT_CHROME,
    NO_BORDERS,
    Direction,
    PaneChrome,
    Rect,
    SplitDirection,
    apply_chrome,
    center_distance,
    clamp_ratio,
    f32_display,
    overlap_amount,
    pty_size,
    ranges_overlap,
    split_rect,
    terminal_area,
    to_f32,
)

__all__ = [
    "DEFAULT_AREA",
    "DEFAULT_RESIZE_AMOUNT",
    "DEFAULT_SPLIT_RATIO",
    "MAX_LAYOUT_DEPTH",
    "MAX_LAYOUT_PANES",
    "MAX_RESIZE_AMOUNT",
    "Direction",
    "InvalidRatioError",
    "Layout",
    "LayoutEmptyError",
    "LayoutTree",
    "PaneNode",
    "Rect",
    "SplitDirection",
    "SplitInfo",
    "SplitNode",
    "SwapOutcome",
    "SwapReason",
    "ZoomMode",
    "ZoomOutcome",
    "ZoomReason",
    "layout_snapshot",
    "layout_tree_error",
    "map_panes",
    "normalize_resize_amount",
    "normalize_split_ratio",
    "parse_split_id",
    "spawn_order",
    "split_id",
]

DEFAULT_AREA = terminal_area()
"""The pane area of Herdr's 120×40 headless frame: ``Rect(26, 1, 94, 39)`` (sidebar, tab bar)."""

DEFAULT_SPLIT_RATIO = 0.5
DEFAULT_RESIZE_AMOUNT = to_f32(0.05)
MAX_RESIZE_AMOUNT = 0.5
MAX_LAYOUT_PANES = 24
MAX_LAYOUT_DEPTH = 16

ZoomMode = Literal["toggle", "on", "off"]
ZoomReason = Literal["single_pane", "already_zoomed", "already_unzoomed"]
SwapReason = Literal["no_neighbor", "same_pane", "not_found"]
"""The layout-level swap reasons; ``cross_tab`` is decided by the caller, which owns tabs."""

_OPPOSITE: dict[Direction, Direction] = {
    "left": "right",
    "right": "left",
    "up": "down",
    "down": "up",
}


class LayoutEmptyError(LookupError):
    """Raised when asking for the focus of a layout whose last pane was removed."""


class InvalidRatioError(ValueError):
    """A split ratio that is not finite as an f32 (Herdr's ``invalid_ratio``)."""


# --- public value types ----------------------------------------------------------------------


@dataclass(frozen=True)
class SplitInfo:
    """One divider as ``pane.layout`` reports it (``PaneLayoutSplit``), plus its tree path.

    ``ratio`` is already the shortest decimal of the stored f32, ready for JSON; ``rect`` is
    the whole cell the split divides; ``path`` holds ``False`` for first / ``True`` for
    second child steps from the root, the form ``layout.set_split_ratio`` takes.
    """

    id: str
    direction: SplitDirection
    ratio: float
    rect: Rect
    path: tuple[bool, ...] = ()


@dataclass(frozen=True)
class ZoomOutcome:
    """What ``set_zoom`` did, mirroring ``PaneZoomResult`` at the tab level.

    ``focus_changed`` only covers focus inside this tab; the caller ORs in any workspace or
    tab switch it performed to focus the pane.
    """

    zoom_changed: bool
    focus_changed: bool
    reason: ZoomReason | None
    zoomed: bool

    @property
    def changed(self) -> bool:
        """Herdr's top-level ``changed``: zoom or focus moved."""
        return self.zoom_changed or self.focus_changed


@dataclass(frozen=True)
class SwapOutcome:
    """What a swap did; ``target`` is the pane swapped with (``None`` if none was found)."""

    changed: bool
    reason: SwapReason | None
    target: int | None


@dataclass(frozen=True)
class PaneNode:
    """A leaf of an exported layout tree (``LayoutNode`` of type ``pane``)."""

    pane: int


@dataclass(frozen=True)
class SplitNode:
    """An inner node of an exported layout tree (``LayoutNode`` of type ``split``)."""

    direction: SplitDirection
    ratio: float
    first: LayoutTree
    second: LayoutTree


LayoutTree: TypeAlias = PaneNode | SplitNode


# --- helpers on ratios, ids and trees ---------------------------------------------------------


def normalize_split_ratio(ratio: float | None) -> float:
    """The f32 ratio Herdr stores for a requested one: default 0.5, non-finite 0.5, clamped."""
    if ratio is None:
        return DEFAULT_SPLIT_RATIO
    value = to_f32(ratio)
    if not math.isfinite(value):
        return DEFAULT_SPLIT_RATIO
    return clamp_ratio(value)


def normalize_resize_amount(amount: float | None) -> float:
    """The f32 step Herdr resizes by: default (and non-finite) 0.05, absolute, at most 0.5."""
    value = DEFAULT_RESIZE_AMOUNT if amount is None else to_f32(amount)
    if not math.isfinite(value):
        value = DEFAULT_RESIZE_AMOUNT
    return min(abs(value), MAX_RESIZE_AMOUNT)


def split_id(index: int, path: Sequence[bool]) -> str:
    """Herdr's public split id: pre-order index plus ``root`` or the 0/1 path from the root."""
    if not path:
        return f"split_{index}_root"
    return f"split_{index}_" + "".join("1" if step else "0" for step in path)


_SPLIT_ID = re.compile(r"split_(\d+)_(root|[01]+)")


def parse_split_id(value: str) -> tuple[int, tuple[bool, ...]] | None:
    """Inverse of :func:`split_id`; ``None`` when ``value`` is not shaped like one."""
    match = _SPLIT_ID.fullmatch(value)
    if match is None:
        return None
    bits = match.group(2)
    path = () if bits == "root" else tuple(bit == "1" for bit in bits)
    return int(match.group(1)), path


def spawn_order(tree: LayoutTree) -> list[int]:
    """Depth-first leaf indices in the order ``layout.apply`` creates their panes.

    Herdr creates the tab with the tree's first leaf, then walks the splits in pre-order,
    splitting the pane that stands for each split's cell and spawning the first leaf of the
    split's second child.  Public pane ids are allocated in this order, so a caller that
    builds a tab from a request allocates ids along this list.
    """
    index_of: dict[int, int] = {}
    counter = 0

    def number(node: LayoutTree) -> None:
        nonlocal counter
        if isinstance(node, PaneNode):
            index_of[id(node)] = counter
            counter += 1
        else:
            number(node.first)
            number(node.second)

    number(tree)

    def first_leaf(node: LayoutTree) -> PaneNode:
        while isinstance(node, SplitNode):
            node = node.first
        return node

    order = [index_of[id(first_leaf(tree))]]

    def walk(node: LayoutTree) -> None:
        if isinstance(node, SplitNode):
            order.append(index_of[id(first_leaf(node.second))])
            walk(node.first)
            walk(node.second)

    walk(tree)
    return order


def map_panes(tree: LayoutTree, mapping: Callable[[int], int]) -> LayoutTree:
    """The same tree with every leaf's pane replaced by ``mapping(pane)``."""
    if isinstance(tree, PaneNode):
        return PaneNode(mapping(tree.pane))
    return SplitNode(
        tree.direction, tree.ratio, map_panes(tree.first, mapping), map_panes(tree.second, mapping)
    )


def layout_tree_error(tree: LayoutTree) -> str | None:
    """Herdr's structural ``invalid_layout`` message for a ``layout.apply`` tree, if any.

    Checks run in Herdr's order (depth, then pane count, then split ratio, depth-first).  The
    per-leaf ``command``/``env`` checks belong to the caller; Herdr runs them right after a
    leaf's pane-count check.
    """
    panes = 0

    def visit(node: LayoutTree, depth: int) -> str | None:
        nonlocal panes
        if depth > MAX_LAYOUT_DEPTH:
            return f"layout depth is {depth}; maximum is {MAX_LAYOUT_DEPTH}"
        if isinstance(node, PaneNode):
            panes += 1
            if panes > MAX_LAYOUT_PANES:
                return f"layout has more than {MAX_LAYOUT_PANES} panes"
            return None
        if not math.isfinite(to_f32(node.ratio)):
            return "split ratio must be finite"
        return visit(node.first, depth + 1) or visit(node.second, depth + 1)

    return visit(tree, 1)


# --- the mutable tree ------------------------------------------------------------------------


@dataclass
class _Leaf:
    pane: int


@dataclass
class _Split:
    direction: SplitDirection
    ratio: float  # always an exact f32 value
    first: _Node
    second: _Node


_Node: TypeAlias = _Leaf | _Split


@dataclass(frozen=True)
class _Divider:
    """A split with the geometry resize needs: divider position and cell."""

    path: tuple[bool, ...]
    direction: SplitDirection
    ratio: float
    area: Rect
    pos: int


def _walk_leaves(node: _Node) -> Iterator[_Leaf]:
    """The leaves depth-first, first child before second; with a stack, not nested
    generators (issue 17: every subscription poll locates its pane through this, and the
    nested generators were a quarter of the loop's time with fifty subscribers)."""
    stack = [node]
    while stack:
        node = stack.pop()
        if isinstance(node, _Leaf):
            yield node
        else:
            stack.append(node.second)
            stack.append(node.first)


def _cells(node: _Node, area: Rect, out: dict[int, Rect]) -> None:
    if isinstance(node, _Leaf):
        out[node.pane] = area
        return
    first, second = split_rect(area, node.direction, node.ratio)
    _cells(node.first, first, out)
    _cells(node.second, second, out)


def _dividers(node: _Node, area: Rect, path: tuple[bool, ...], out: list[_Divider]) -> None:
    if isinstance(node, _Leaf):
        return
    first, second = split_rect(area, node.direction, node.ratio)
    pos = first.right if node.direction == "right" else first.bottom
    out.append(_Divider(path, node.direction, node.ratio, area, pos))
    _dividers(node.first, first, (*path, False), out)
    _dividers(node.second, second, (*path, True), out)


def _without(node: _Node, pane: int) -> _Node | None:
    """``node`` with ``pane``'s leaf removed; a split left with one child becomes that child."""
    if isinstance(node, _Leaf):
        return None if node.pane == pane else node
    first = _without(node.first, pane)
    second = _without(node.second, pane)
    if first is None:
        return second
    if second is None:
        return first
    node.first, node.second = first, second
    return node


def _edge_distance(divider: _Divider, rect: Rect, direction: Direction) -> int:
    edge = {
        "left": rect.x,
        "right": rect.x + rect.width,
        "up": rect.y,
        "down": rect.y + rect.height,
    }[direction]
    return abs(divider.pos - edge)


def _nearest_divider(
    dividers: Sequence[_Divider],
    orientation: SplitDirection,
    rect: Rect,
    direction: Direction,
) -> _Divider | None:
    """The divider of ``orientation`` on ``rect``'s ``direction`` edge (within one cell).

    The divider's cell must share rows (for left/right) or columns (for up/down) with the
    pane, which keeps a same-coordinate divider in another branch from being picked.  Ties go
    to the first divider in pre-order.
    """
    best: _Divider | None = None
    best_distance = 0
    for divider in dividers:
        if divider.direction != orientation:
            continue
        if direction in ("left", "right"):
            shares = ranges_overlap(divider.area.y, divider.area.height, rect.y, rect.height)
        else:
            shares = ranges_overlap(divider.area.x, divider.area.width, rect.x, rect.width)
        if not shares:
            continue
        distance = _edge_distance(divider, rect, direction)
        if distance > 1:
            continue
        if best is None or distance < best_distance:
            best, best_distance = divider, distance
    return best


def _find_in_direction(source: int, direction: Direction, cells: dict[int, Rect]) -> int | None:
    """Herdr's directional pick among panes wholly on that side and sharing rows/columns.

    Ranked by gap to the source edge, then larger shared span, then closer centres, then
    tree order.
    """
    src = cells[source]
    best: int | None = None
    best_key: tuple[int, int, int, int] | None = None
    for index, (pane, rect) in enumerate(cells.items()):
        if pane == source:
            continue
        if direction == "left":
            beside = rect.x + rect.width <= src.x
            gap = max(src.x - (rect.x + rect.width), 0)
        elif direction == "right":
            beside = rect.x >= src.x + src.width
            gap = max(rect.x - (src.x + src.width), 0)
        elif direction == "up":
            beside = rect.y + rect.height <= src.y
            gap = max(src.y - (rect.y + rect.height), 0)
        else:
            beside = rect.y >= src.y + src.height
            gap = max(rect.y - (src.y + src.height), 0)
        if direction in ("left", "right"):
            spans = (rect.y, rect.height, src.y, src.height)
        else:
            spans = (rect.x, rect.width, src.x, src.width)
        if not beside or not ranges_overlap(*spans):
            continue
        key = (gap, -overlap_amount(*spans), center_distance(*spans), index)
        if best_key is None or key < best_key:
            best, best_key = pane, key
    return best


class Layout:
    """One tab's pane tree, its focus (with one step of history) and its zoom flag."""

    def __init__(self, root: int) -> None:
        #: the panes, kept until the tree changes (``pane in layout`` is asked on every pane
        #: lookup, so on every subscription poll: issue 17)
        self._members: frozenset[int] | None = None
        self._tree: _Node | None = _Leaf(root)
        self._focus: int | None = root
        self._previous: int | None = None
        self._zoomed = False

    @property
    def _root(self) -> _Node | None:
        return self._tree

    @_root.setter
    def _root(self, node: _Node | None) -> None:
        self._tree = node
        self._members = None

    def __repr__(self) -> str:
        if self._root is None:
            return "Layout(<empty>)"
        return f"Layout({self.to_tree()!r}, focused={self._focus}, zoomed={self._zoomed})"

    # --- state ---------------------------------------------------------------------------

    @property
    def focused(self) -> int:
        """The tab's focused pane; assigning focuses another pane (recording history)."""
        if self._focus is None:
            raise LayoutEmptyError("layout has no panes")
        return self._focus

    @focused.setter
    def focused(self, pane: int) -> None:
        self.focus(pane)

    @property
    def previous_focus(self) -> int | None:
        """The pane focused before the current one, where closing the focused pane returns."""
        return self._previous

    @property
    def zoomed(self) -> bool:
        """Whether the focused pane fills the tab; change it with :meth:`set_zoom`."""
        return self._zoomed

    def panes(self) -> list[int]:
        """Pane ids depth-first, first child before second (Herdr's order everywhere)."""
        if self._root is None:
            return []
        return [leaf.pane for leaf in _walk_leaves(self._root)]

    def __contains__(self, pane: object) -> bool:
        members = self._members
        if members is None:
            members = self._members = frozenset(self.panes())
        return isinstance(pane, int) and pane in members

    def __len__(self) -> int:
        return len(self.panes())

    def _require(self, pane: int) -> None:
        if pane not in self:
            raise KeyError(f"pane {pane} is not in this layout")

    def focus(self, pane: int) -> bool:
        """Focus ``pane``; returns whether focus moved (only a move updates the history)."""
        self._require(pane)
        if pane == self._focus:
            return False
        self._previous = self._focus
        self._focus = pane
        return True

    # --- tree edits ------------------------------------------------------------------------

    def split(
        self,
        target: int,
        new: int,
        direction: SplitDirection,
        ratio: float | None = None,
        *,
        focus: bool = False,
    ) -> None:
        """Put ``new`` beside/below ``target`` in ``target``'s cell; ``target`` stays first.

        Also serves moves into this tab (Herdr's insert of an existing pane is the same
        edit).  ``ratio`` goes through :func:`normalize_split_ratio`.  Zoom is cancelled;
        focus moves to ``new`` only when asked.
        """
        self._require(target)
        if new in self:
            raise ValueError(f"pane {new} is already in this layout")
        stored = normalize_split_ratio(ratio)
        assert self._root is not None
        for leaf in _walk_leaves(self._root):
            if leaf.pane == target:
                replacement = _Split(direction, stored, _Leaf(target), _Leaf(new))
                self._root = self._replace_node(self._root, leaf, replacement)
                break
        self._zoomed = False
        if focus:
            self.focus(new)

    @staticmethod
    def _replace_node(node: _Node, old: _Node, new: _Node) -> _Node:
        if node is old:
            return new
        if isinstance(node, _Split):
            node.first = Layout._replace_node(node.first, old, new)
            node.second = Layout._replace_node(node.second, old, new)
        return node

    def remove(self, pane: int) -> int | None:
        """Drop ``pane``; its sibling takes the parent's cell.  Returns the focused pane.

        Removing the focused pane focuses the previously focused pane if it still exists,
        else the next pane in tree order (the previous one when it was last), and clears
        the history.  Removing the last pane leaves an empty layout and returns ``None``
        (Herdr closes the tab instead; the caller decides).  Zoom is cancelled.
        """
        self._require(pane)
        order = self.panes()
        assert self._root is not None
        self._zoomed = False
        if len(order) == 1:
            self._root = None
            self._focus = None
            self._previous = None
            return None
        if pane == self._focus:
            pos = order.index(pane)
            fallback = order[pos + 1] if pos + 1 < len(order) else order[pos - 1]
            previous = self._previous
            if previous is not None and previous != pane and previous in order:
                self._focus = previous
            else:
                self._focus = fallback
            self._previous = None
        elif self._previous == pane:
            self._previous = None
        self._root = _without(self._root, pane)
        return self._focus

    def replace(self, old: int, new: int) -> None:
        """Put pane ``new`` in ``old``'s slot, carrying over its focus and history role."""
        self._require(old)
        if new in self:
            raise ValueError(f"pane {new} is already in this layout")
        assert self._root is not None
        for leaf in _walk_leaves(self._root):
            if leaf.pane == old:
                leaf.pane = new
        self._members = None
        if self._focus == old:
            self._focus = new
        if self._previous == old:
            self._previous = new

    def swap(self, a: int, b: int) -> SwapOutcome:
        """Exchange two panes' cells, keeping the tree shape and ratios; focus follows ``a``.

        Unknown panes give ``not_found`` and the same pane twice ``same_pane``, both
        without change, in that order of precedence as in Herdr.
        """
        order = self.panes()
        if a not in order or b not in order:
            return SwapOutcome(False, "not_found", b)
        if a == b:
            return SwapOutcome(False, "same_pane", b)
        assert self._root is not None
        for leaf in _walk_leaves(self._root):
            if leaf.pane == a:
                leaf.pane = b
            elif leaf.pane == b:
                leaf.pane = a
        self._members = None
        self.focus(a)
        return SwapOutcome(True, None, b)

    def swap_direction(
        self, pane: int, direction: Direction, area: Rect = DEFAULT_AREA
    ) -> SwapOutcome:
        """``pane.swap`` with a direction: swap with :meth:`neighbor` or report ``no_neighbor``."""
        target = self.neighbor(pane, direction, area)
        if target is None:
            return SwapOutcome(False, "no_neighbor", None)
        return self.swap(pane, target)

    def set_zoom(self, mode: ZoomMode, pane: int) -> ZoomOutcome:
        """``pane.zoom``: focus ``pane``, then zoom per ``mode`` unless it is a no-op.

        Focus moves even when the zoom is refused (``single_pane``, ``already_zoomed``,
        ``already_unzoomed``), exactly as in Herdr.
        """
        focus_changed = self.focus(pane)
        if len(self) <= 1:
            return ZoomOutcome(False, focus_changed, "single_pane", self._zoomed)
        if mode == "on" and self._zoomed:
            return ZoomOutcome(False, focus_changed, "already_zoomed", True)
        if mode == "off" and not self._zoomed:
            return ZoomOutcome(False, focus_changed, "already_unzoomed", False)
        self._zoomed = not self._zoomed if mode == "toggle" else mode == "on"
        return ZoomOutcome(True, focus_changed, None, self._zoomed)

    def resize(
        self,
        pane: int,
        direction: Direction,
        amount: float | None = None,
        area: Rect = DEFAULT_AREA,
    ) -> bool:
        """``pane.resize``: move the divider on ``pane``'s ``direction`` edge; True if it moved.

        The divider must lie within one cell of that edge and its cell must share rows or
        columns with the pane; failing that, the divider on the opposite edge is used (so an
        outer edge shrinks the pane).  ``right``/``down`` add ``amount`` to the split ratio,
        ``left``/``up`` subtract it, in f32, clamped to [0.1, 0.9].  Geometry depends on
        ``area`` because dividers are compared in whole cells.  Focus is untouched.
        """
        self._require(pane)
        assert self._root is not None
        cells: dict[int, Rect] = {}
        _cells(self._root, area, cells)
        rect = cells[pane]
        dividers: list[_Divider] = []
        _dividers(self._root, area, (), dividers)
        orientation: SplitDirection = "right" if direction in ("left", "right") else "down"
        chosen = _nearest_divider(dividers, orientation, rect, direction) or _nearest_divider(
            dividers, orientation, rect, _OPPOSITE[direction]
        )
        if chosen is None:
            return False
        node = self._node_at(chosen.path)
        assert isinstance(node, _Split)
        step = normalize_resize_amount(amount)
        grows = direction in ("right", "down")
        updated = clamp_ratio(to_f32(node.ratio + (step if grows else -step)))
        changed = updated != node.ratio
        node.ratio = updated
        return changed

    def set_split_ratio(
        self,
        split_id: str | Sequence[bool],
        ratio: float,
        area: Rect | None = None,
    ) -> bool:
        """``layout.set_split_ratio``: set one split's ratio (clamped to [0.1, 0.9]).

        Herdr's request names the split by its tree ``path`` (a list of booleans, ``True`` =
        second child); a public split id from :meth:`splits` is accepted too and must match
        a current split exactly.  Returns False when no split is there (``split_not_found``);
        True otherwise, even if the ratio was already that value.  A ratio that is not
        finite as an f32 raises :class:`InvalidRatioError` first (``invalid_ratio``).
        ``area`` is unused (split ids do not depend on geometry) and kept for symmetry.
        """
        del area
        value = to_f32(ratio)
        if not math.isfinite(value):
            raise InvalidRatioError("ratio must be finite")
        if isinstance(split_id, str):
            parsed = parse_split_id(split_id)
            if parsed is None or self._root is None:
                return False
            path = parsed[1]
            if split_id not in {info.id for info in self.splits(DEFAULT_AREA)}:
                return False
        else:
            path = tuple(bool(step) for step in split_id)
        node = self._node_at(path)
        if not isinstance(node, _Split):
            return False
        node.ratio = clamp_ratio(value)
        return True

    def _node_at(self, path: Sequence[bool]) -> _Node | None:
        node = self._root
        for step in path:
            if not isinstance(node, _Split):
                return None
            node = node.second if step else node.first
        return node

    # --- geometry --------------------------------------------------------------------------

    def raw_rects(self, area: Rect = DEFAULT_AREA) -> dict[int, Rect]:
        """Each pane's BSP cell in ``area`` before chrome, in tree order."""
        cells: dict[int, Rect] = {}
        if self._root is not None:
            _cells(self._root, area, cells)
        return cells

    def pane_rects(
        self, area: Rect = DEFAULT_AREA, chrome: PaneChrome = DEFAULT_CHROME
    ) -> dict[int, Rect]:
        """The rects ``pane.layout`` reports: cells with chrome, every pane even when zoomed."""
        return {
            pane: rect for pane, (rect, _) in apply_chrome(self.raw_rects(area), chrome).items()
        }

    def visible_rects(
        self, area: Rect = DEFAULT_AREA, chrome: PaneChrome = DEFAULT_CHROME
    ) -> dict[int, Rect]:
        """What is drawn: the focused pane over the whole area when zoomed, else pane_rects."""
        if self._zoomed and self._focus is not None:
            return {self._focus: area}
        return self.pane_rects(area, chrome)

    def content_size(
        self,
        pane: int,
        area: Rect = DEFAULT_AREA,
        chrome: PaneChrome = DEFAULT_CHROME,
        *,
        alternate_screen: bool = False,
    ) -> tuple[int, int]:
        """``(cols, rows)`` Herdr sizes ``pane``'s pty to: its drawn rect minus chrome.

        A zoomed focused pane gets the whole area (bordered when borders and outer borders
        are on).  Panes hidden by zoom keep their tiled size here; Herdr leaves them at
        whatever size they last had, which is that size unless the area changed meanwhile.
        """
        self._require(pane)
        if self._zoomed and pane == self._focus:
            bordered = len(self) > 1 and chrome.borders and chrome.outer_borders
            borders = ALL_BORDERS if bordered else NO_BORDERS
            return pty_size(area, borders, chrome, alternate_screen=alternate_screen)
        rect, borders = apply_chrome(self.raw_rects(area), chrome)[pane]
        return pty_size(rect, borders, chrome, alternate_screen=alternate_screen)

    def content_sizes(
        self, area: Rect = DEFAULT_AREA, chrome: PaneChrome = DEFAULT_CHROME
    ) -> dict[int, tuple[int, int]]:
        """:meth:`content_size` of every pane, the tiling computed once: a tab's resize
        asks for all of them, and one tiling per pane made a split in a tab of eleven
        panes cost ~4 ms of the loop (``bench/event_fanout.py``)."""
        sizes = {
            pane: pty_size(rect, borders, chrome)
            for pane, (rect, borders) in apply_chrome(self.raw_rects(area), chrome).items()
        }
        if self._zoomed and self._focus is not None:
            sizes[self._focus] = self.content_size(self._focus, area, chrome)
        return sizes

    def splits(self, area: Rect = DEFAULT_AREA) -> list[SplitInfo]:
        """Every split in pre-order with Herdr's ids (``split_<index>_root|<path>``)."""
        dividers: list[_Divider] = []
        if self._root is not None:
            _dividers(self._root, area, (), dividers)
        return [
            SplitInfo(
                id=split_id(index, divider.path),
                direction=divider.direction,
                ratio=f32_display(divider.ratio),
                rect=divider.area,
                path=divider.path,
            )
            for index, divider in enumerate(dividers)
        ]

    def neighbor(self, pane: int, direction: Direction, area: Rect = DEFAULT_AREA) -> int | None:
        """The pane ``pane.neighbor``/``focus_direction``/directional swap pick, if any."""
        self._require(pane)
        return _find_in_direction(pane, direction, self.raw_rects(area))

    def focus_direction(
        self, pane: int, direction: Direction, area: Rect = DEFAULT_AREA
    ) -> int | None:
        """Focus the neighbour of ``pane`` in ``direction``; returns it (None: no_neighbor)."""
        target = self.neighbor(pane, direction, area)
        if target is not None:
            self.focus(target)
        return target

    def edges(self, pane: int, area: Rect = DEFAULT_AREA) -> dict[Direction, bool]:
        """``pane.edges``: which sides of the pane's cell touch the area's border."""
        self._require(pane)
        rect = self.raw_rects(area)[pane]
        return {
            "left": rect.x <= area.x,
            "right": rect.x + rect.width >= area.x + area.width,
            "up": rect.y <= area.y,
            "down": rect.y + rect.height >= area.y + area.height,
        }

    # --- export / apply --------------------------------------------------------------------

    def to_tree(self) -> LayoutTree:
        """The tree for ``layout.export``, ratios as their shortest f32 decimals."""
        if self._root is None:
            raise LayoutEmptyError("layout has no panes")

        def export(node: _Node) -> LayoutTree:
            if isinstance(node, _Leaf):
                return PaneNode(node.pane)
            return SplitNode(
                node.direction, f32_display(node.ratio), export(node.first), export(node.second)
            )

        return export(self._root)

    @classmethod
    def from_tree(cls, tree: LayoutTree, *, focused: int | None = None) -> Layout:
        """Build a layout as ``layout.apply`` does: same shape, ratios normalised, unzoomed.

        Focus goes to the first leaf (the tab's root pane) unless ``focused`` names another
        pane of the tree.  Leaf panes must be distinct.  Use :func:`layout_tree_error` for
        Herdr's size limits and :func:`spawn_order` for the order panes get created.
        """
        seen: set[int] = set()

        def build(node: LayoutTree) -> _Node:
            if isinstance(node, PaneNode):
                if node.pane in seen:
                    raise ValueError(f"pane {node.pane} appears twice in the tree")
                seen.add(node.pane)
                return _Leaf(node.pane)
            return _Split(
                node.direction,
                normalize_split_ratio(node.ratio),
                build(node.first),
                build(node.second),
            )

        root = build(tree)
        first = next(_walk_leaves(root)).pane
        layout = cls(first)
        layout._root = root
        if focused is not None:
            layout.focus(focused)
            layout._previous = None
        return layout


def layout_snapshot(
    layout: Layout,
    area: Rect,
    *,
    workspace_id: str,
    tab_id: str,
    public_id: Callable[[int], str],
    chrome: PaneChrome = DEFAULT_CHROME,
) -> dict[str, object]:
    """The wire ``PaneLayoutSnapshot`` of ``layout``, fields in Herdr's order.

    ``public_id`` maps the model's pane ints to public pane ids.  Rects carry chrome and
    ignore zoom, as Herdr's do; ``zoomed`` reports the flag.
    """
    focused = layout.focused
    return {
        "workspace_id": workspace_id,
        "tab_id": tab_id,
        "zoomed": layout.zoomed,
        "area": area.to_json(),
        "focused_pane_id": public_id(focused),
        "panes": [
            {"pane_id": public_id(pane), "focused": pane == focused, "rect": rect.to_json()}
            for pane, rect in layout.pane_rects(area, chrome).items()
        ],
        "splits": [
            {
                "id": info.id,
                "direction": info.direction,
                "ratio": info.ratio,
                "rect": info.rect.to_json(),
            }
            for info in layout.splits(area)
        ],
    }
