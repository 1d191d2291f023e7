"""Cell geometry behind Herdr's pane layout: rects, f32 split ratios and pane chrome.

Herdr stores split ratios as Rust ``f32`` and turns them into terminal cells with
``round(width * ratio)`` evaluated in single precision.  A simulator that used Python's
``float`` (f64) arithmetic and ``round()`` (banker's rounding) would place dividers one cell
off for some sizes and would print ratios such as ``0.550000011920929`` where Herdr prints
``0.55``.  This module therefore emulates the f32 steps exactly and offers
:func:`f32_display`, the shortest decimal that reads back as the same f32 (what serde_json
writes for an ``f32`` field).

"Pane chrome" is what Herdr's UI does to the raw BSP cells before they are reported or used
to size a pty: optional one-cell gaps, borders and a scrollbar gutter, driven by the
``ui.pane_*`` config keys.  Defaults follow Herdr's shipped config (all four on).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

SplitDirection = Literal["right", "down"]
"""``right`` puts the new pane beside the old one (a vertical divider), ``down`` below it."""

Direction = Literal["left", "right", "up", "down"]

U16_MAX = 65535
"""Herdr's rect fields are ``u16``; arithmetic on them saturates at this bound."""

# Herdr pads the pty to at least this many rows/cols whatever the cell is.
MIN_PTY_ROWS = 2
MIN_PTY_COLS = 4

#: Herdr's virtual frame with no client attached (``server.headless_cols``/``headless_rows``,
#: ``DEFAULT_HEADLESS_COLS``/``ROWS`` in ``src/config.rs``): the whole UI, not the pane area.
HEADLESS_COLS = 120
HEADLESS_ROWS = 40
#: The expanded sidebar's width (``ui.sidebar_width`` 26, clamped to 18..=36).
SIDEBAR_WIDTH = 26
#: At or below this frame width Herdr lays out its mobile view (``DEFAULT_MOBILE_WIDTH_THRESHOLD``).
MOBILE_WIDTH_THRESHOLD = 64
#: The mobile view's header rows above the panes.
MOBILE_HEADER_ROWS = 2


@dataclass(frozen=True)
class Rect:
    """A cell rectangle, the wire ``PaneLayoutRect``; ``right``/``bottom`` are exclusive."""

    x: int
    y: int
    width: int
    height: int

    @property
    def right(self) -> int:
        """First column past the rect, saturating like ratatui's ``Rect::right``."""
        return min(self.x + self.width, U16_MAX)

    @property
    def bottom(self) -> int:
        """First row past the rect, saturating like ratatui's ``Rect::bottom``."""
        return min(self.y + self.height, U16_MAX)

    def to_json(self) -> dict[str, int]:
        """The wire shape ``{"x", "y", "width", "height"}``."""
        return {"x": self.x, "y": self.y, "width": self.width, "height": self.height}


def make_rect(x: int, y: int, width: int, height: int) -> Rect:
    """Build a rect the way ratatui does: width/height shrink so the far edges fit in u16."""
    return Rect(x, y, min(x + width, U16_MAX) - x, min(y + height, U16_MAX) - y)


def terminal_area(cols: int = HEADLESS_COLS, rows: int = HEADLESS_ROWS) -> Rect:
    """The pane area of a ``cols``×``rows`` frame laid out with Herdr's default ``[ui]``.

    Headless Herdr renders its whole UI into a virtual frame of the headless size
    (``render_and_stream`` → ``render_virtual_with_runtime_registry``), so panes get what
    ``compute_view_internal`` (``src/ui.rs``) leaves them: the expanded sidebar takes the
    first 26 columns and the tab bar the top row of the rest (``hide_tab_bar_when_single_tab``
    is off and ``tab_bar_position`` is top by default); a frame at most 64 columns wide uses
    the mobile layout, whose two header rows sit above full-width panes
    (``compute_mobile_view``). 120×40 gives ``Rect(26, 1, 94, 39)``.
    """
    if 0 < cols <= MOBILE_WIDTH_THRESHOLD:
        header = min(rows, MOBILE_HEADER_ROWS)
        if rows <= header:
            return Rect(0, 0, 0, 0)
        return make_rect(0, header, cols, rows - header)
    sidebar = min(SIDEBAR_WIDTH, max(cols - 1, 0))
    main_width = cols - sidebar
    if rows > 1:
        return make_rect(sidebar, 1, main_width, rows - 1)
    return make_rect(sidebar, 0, main_width, rows)


# --- f32 emulation -------------------------------------------------------------------------


def to_f32(value: float) -> float:
    """Round ``value`` to the nearest f32 (returned as a Python float holding it exactly).

    Values beyond f32 range become ±inf, as Rust's ``as f32`` and serde's f32 parsing do; a
    JSON ``1e39`` ratio is therefore "not finite" to Herdr.
    """
    if not math.isfinite(value):
        return value
    try:
        packed = struct.pack("<f", value)
    except OverflowError:
        return math.copysign(math.inf, value)
    result: float = struct.unpack("<f", packed)[0]
    return result


def f32_display(value: float) -> float:
    """The shortest decimal that parses back to the f32 ``value``, as a Python float.

    serde_json writes an ``f32`` with its shortest round-trip form, so Herdr reports a ratio
    of ``0.5 + 0.05`` as ``0.55``.  Returning that decimal as a float makes ``json.dumps``
    print the same text.
    """
    if not math.isfinite(value) or value == 0.0:
        return value
    target = to_f32(value)
    for digits in range(1, 10):
        candidate = float(f"{target:.{digits}g}")
        if to_f32(candidate) == target:
            return candidate
    return target  # unreachable: 9 significant digits always round-trip an f32


F32_MIN_RATIO = to_f32(0.1)
F32_MAX_RATIO = to_f32(0.9)


def clamp_ratio(ratio: float) -> float:
    """Clamp an f32 ratio into Herdr's ``[0.1, 0.9]`` (both bounds themselves f32)."""
    return min(max(ratio, F32_MIN_RATIO), F32_MAX_RATIO)


def _round_half_away(value: float) -> int:
    """Rust's ``f32::round``: halves go away from zero (Python's ``round`` goes to even)."""
    return math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)


def _as_u16(value: int) -> int:
    """Rust's saturating float-to-``u16`` cast."""
    return min(max(value, 0), U16_MAX)


def first_extent(total: int, ratio: float) -> int:
    """Cells given to a split's first child: ``round(total * ratio)`` in f32.

    ``total`` (< 2**16) times an f32 (24-bit mantissa) is exact in f64, so one rounding to
    f32 reproduces Rust's single-precision product bit for bit.
    """
    return _as_u16(_round_half_away(to_f32(float(total) * ratio)))


def split_rect(area: Rect, direction: SplitDirection, ratio: float) -> tuple[Rect, Rect]:
    """Cut ``area`` into the first and second child cells; the second gets the remainder."""
    if direction == "right":
        first_w = first_extent(area.width, ratio)
        second_w = max(area.width - first_w, 0)
        return (
            make_rect(area.x, area.y, first_w, area.height),
            make_rect(area.x + first_w, area.y, second_w, area.height),
        )
    first_h = first_extent(area.height, ratio)
    second_h = max(area.height - first_h, 0)
    return (
        make_rect(area.x, area.y, area.width, first_h),
        make_rect(area.x, area.y + first_h, area.width, second_h),
    )


# --- interval helpers used by navigation ----------------------------------------------------


def ranges_overlap(a_start: int, a_len: int, b_start: int, b_len: int) -> bool:
    """Whether the half-open spans ``[a, a+len)`` and ``[b, b+len)`` share a cell."""
    return a_start < b_start + b_len and a_start + a_len > b_start


def overlap_amount(a_start: int, a_len: int, b_start: int, b_len: int) -> int:
    """How many cells two spans share (0 when disjoint)."""
    a_end = min(a_start + a_len, U16_MAX)
    b_end = min(b_start + b_len, U16_MAX)
    return max(min(a_end, b_end) - max(a_start, b_start), 0)


def center_distance(a_start: int, a_len: int, b_start: int, b_len: int) -> int:
    """Distance between two spans' centres, doubled so it stays an integer."""
    a_center = min(min(a_start * 2, U16_MAX) + a_len, U16_MAX)
    b_center = min(min(b_start * 2, U16_MAX) + b_len, U16_MAX)
    return abs(a_center - b_center)


# --- pane chrome ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Borders:
    """Which sides of a pane get a one-cell border line."""

    left: bool = False
    top: bool = False
    right: bool = False
    bottom: bool = False


NO_BORDERS = Borders()
ALL_BORDERS = Borders(left=True, top=True, right=True, bottom=True)


@dataclass(frozen=True)
class PaneChrome:
    """Herdr's ``[ui]`` pane options that change pane rects and pty sizes.

    The defaults are Herdr's shipped config: every pane in a split tab gets a full border
    and keeps a one-column scrollbar gutter, while a lone pane gets no border.
    """

    borders: bool = True
    gaps: bool = True
    outer_borders: bool = True
    scrollbars: bool = True


DEFAULT_CHROME = PaneChrome()


def apply_chrome(
    cells: Mapping[int, Rect], chrome: PaneChrome = DEFAULT_CHROME
) -> dict[int, tuple[Rect, Borders]]:
    """Turn raw BSP cells into the rects and borders Herdr reports and draws.

    Only borderless gapped layouts change a rect (a pane with a pane directly right of or
    below it gives up that column/row as a gap); otherwise chrome only decides borders,
    which later shrink the pty, not the reported rect.
    """
    multi = len(cells) > 1
    rects = list(cells.values())
    outer_left = min((r.x for r in rects), default=0)
    outer_top = min((r.y for r in rects), default=0)
    outer_right = max((r.right for r in rects), default=0)
    outer_bottom = max((r.bottom for r in rects), default=0)
    result: dict[int, tuple[Rect, Borders]] = {}
    # whether a pane has a neighbour right of or below it matters only where gaps and
    # borders differ (a gap taken from the rect, or a border left out); Herdr's default
    # chrome has both, and asking every pair of panes anyway made this quadratic
    neighbours = multi and chrome.gaps != chrome.borders
    for pane, rect in cells.items():
        has_right = neighbours and any(
            other_pane != pane
            and other.x == rect.right
            and ranges_overlap(rect.y, rect.height, other.y, other.height)
            for other_pane, other in cells.items()
        )
        has_below = neighbours and any(
            other_pane != pane
            and other.y == rect.bottom
            and ranges_overlap(rect.x, rect.width, other.x, other.width)
            for other_pane, other in cells.items()
        )
        shown = rect
        if multi and chrome.gaps and not chrome.borders:
            width = rect.width - 1 if has_right and rect.width > 1 else rect.width
            height = rect.height - 1 if has_below and rect.height > 1 else rect.height
            shown = Rect(rect.x, rect.y, width, height)
        if not multi or not chrome.borders:
            borders = NO_BORDERS
        else:
            left = top = right = bottom = True
            if not chrome.gaps:
                right = right and not has_right
                bottom = bottom and not has_below
            if not chrome.outer_borders:
                left = left and shown.x != outer_left
                top = top and shown.y != outer_top
                right = right and shown.right != outer_right
                bottom = bottom and shown.bottom != outer_bottom
            borders = Borders(left=left, top=top, right=right, bottom=bottom)
        result[pane] = (shown, borders)
    return result


def inner_rect(rect: Rect, borders: Borders) -> Rect:
    """The area left inside ``borders`` (ratatui ``Block::inner`` without titles/padding)."""
    x, y, width, height = rect.x, rect.y, rect.width, rect.height
    if borders.left:
        x = min(x + 1, rect.right)
        width = max(width - 1, 0)
    if borders.top:
        y = min(y + 1, rect.bottom)
        height = max(height - 1, 0)
    if borders.right:
        width = max(width - 1, 0)
    if borders.bottom:
        height = max(height - 1, 0)
    return Rect(x, y, width, height)


def pty_size(
    rect: Rect,
    borders: Borders,
    chrome: PaneChrome = DEFAULT_CHROME,
    *,
    alternate_screen: bool = False,
) -> tuple[int, int]:
    """``(cols, rows)`` Herdr gives the pty of a pane drawn in ``rect`` with ``borders``.

    A scrollbar gutter takes the last column when scrollbars are on, the inner area is
    wider than four columns and the program is not on the alternate screen; Herdr then
    raises the size to at least 4 columns by 2 rows.
    """
    inner = inner_rect(rect, borders)
    cols = inner.width
    if chrome.scrollbars and inner.width > 4 and not alternate_screen:
        cols -= 1
    return max(cols, MIN_PTY_COLS), max(inner.height, MIN_PTY_ROWS)
