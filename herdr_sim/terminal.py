"""The terminal emulator behind every simulated pane.

Each pane's pty output is fed, as raw bytes, into one :class:`Terminal`. The server reads
panes through it (``pane.read``, ``pane.wait_for_output``), so it must render what Herdr's
own emulator (libghostty) would show. It is built on pyte 0.8.2 (a ``pyte.Screen``
subclass fed by a ``pyte.ByteStream`` subclass) and replaces the parts where pyte falls
short for real programs:

* **Parser.** pyte's state machine mis-parses modern sequences (``CSI > 4;2 m`` sets
  underline, ``CSI < u`` prints ``u``, DCS/APC payloads are drawn as text, OSC codes
  longer than one digit are misread). :class:`_Stream` parses ECMA-48 properly:
  parameter, intermediate and final bytes, private markers, colon sub-parameters, and
  string sequences that are consumed until ST.
* **Scrollback.** pyte's ``HistoryScreen`` is slow and drops wrap information. Rows that
  scroll off the top of the main screen go straight into a bounded deque. Like
  libghostty, a scroll region whose top is the first row also feeds scrollback (TUIs
  with a fixed status line at the bottom still build history).
* **Soft wraps.** Each row remembers whether the text auto-wrapped out of it, so
  ``recent_unwrapped`` can join rows into logical lines, including rows in history.
* **Alternate screen** (``?47``, ``?1047``, ``?1049``) with its own buffer, no history.
* **Replies** to DSR/CPR, DA1/DA2/DA3, DECRQM and window-size queries, which readline and
  TUIs wait for.
* **Resize** reflows the main screen and its history (no reflow on the alternate
  screen), as libghostty does, instead of pyte's truncation.

Reads follow Herdr's rendering (``src/pane/terminal.rs`` and libghostty's formatter):

* ``visible``: screen rows with trailing whitespace trimmed, trailing blank rows dropped,
  each line ending in ``\\n``; ``lines`` keeps the last N ``\\n``-separated lines.
* ``recent``: the last N rendered rows of history + screen, rendered like ``visible``.
  The N rows end at the last row with text, so output that has not scrolled into history
  is included even when ``lines`` is smaller than the screen (Herdr 0.9's fix for #3444;
  0.8.2 counted the blank rows under the prompt). ``truncated`` says older rows exist.
* ``recent_unwrapped``: the same rows with soft-wrapped rows joined, rendered like
  libghostty's plain formatter: no newline after the last line.
* ``detection``: ``recent`` with N = the screen height, always plain text.
* ``fmt="ansi"``: libghostty's VT formatter: every style change re-emitted as ``ESC[0m``
  followed by one SGR per attribute, palette colours as ``38;5;N``, rows joined by
  ``\\r\\n``, no trailing newline.
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
from collections import defaultdict, deque
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import pyte
from pyte import charsets, modes
from pyte.screens import StaticDefaultDict, wcwidth

__all__ = [
    "DEFAULT_RECENT_LINES",
    "DEFAULT_SCROLLBACK",
    "MAX_READ_LINES",
    "Cell",
    "ReadFormat",
    "ReadSource",
    "Terminal",
]

logger = logging.getLogger(__name__)

ReadSource = Literal["visible", "recent", "recent_unwrapped", "detection"]
ReadFormat = Literal["text", "ansi"]

DEFAULT_SCROLLBACK = 10_000
DEFAULT_RECENT_LINES = 80
MAX_READ_LINES = 1000

#: Herdr sizes the detection snapshot as ``max(screen rows, 1)`` (``ghostty_detection_text``);
#: 24 is only its fallback when the size is unknown. Raise this to force a larger floor.
DETECTION_MIN_ROWS = 1

# libghostty's default device attributes: VT220 with ANSI colour; device type VT220.
_DA1_REPLY = "\x1b[?62;22c"
_DA2_REPLY = "\x1b[>1;0;0c"
_DA3_REPLY = "\x1bP!|00000000\x1b\\"

_MAX_PARAM_VALUE = 65535
_MAX_PARAM_CHARS = 256
_MAX_OSC_CHARS = 4096
_MAX_TITLE_STACK = 16

# Private (DEC) modes on after power-on: autowrap and a visible cursor.
_DEFAULT_DEC_MODES = frozenset({7, 25})
# Private modes DECRQM reports as "reset" rather than "not recognised" when off.
_KNOWN_DEC_MODES = frozenset(
    {1, 3, 5, 6, 7, 8, 9, 12, 25, 45, 47, 66, 67, 69, 1000, 1001, 1002, 1003, 1004, 1005}
    | {1006, 1007, 1015, 1016, 1035, 1036, 1039, 1047, 1048, 1049, 2004, 2026, 2027, 2031}
)
_ALT_SCREEN_MODES = frozenset({47, 1047, 1049})


class Cell(NamedTuple):
    """One screen cell: its text plus the SGR state it was written with.

    ``data`` is one grapheme (a base character plus any zero-width characters), or ``""``
    for the right half of a wide character and for the spacer left at the end of a row
    when a wide character wrapped to the next one. Colours are ``"default"``, a palette
    index as a decimal string (``"1"``, ``"208"``) or ``"#rrggbb"``.
    """

    data: str
    fg: str = "default"
    bg: str = "default"
    bold: bool = False
    dim: bool = False
    italics: bool = False
    underscore: bool = False
    blink: bool = False
    reverse: bool = False
    hidden: bool = False
    strikethrough: bool = False


_BLANK = Cell(" ")
_PLAIN_STYLE = _BLANK[1:]
_Style = tuple[object, ...]


class _Row(StaticDefaultDict[int, Cell]):
    """A sparse row: column -> cell. A missing column is an empty cell.

    ``wrapped`` is libghostty's row "wrap" flag: the text auto-wrapped out of this row
    into the next one. ``frozen`` marks rows that went into history and never change
    again, so their rendering can be cached.
    """

    def __init__(self) -> None:
        super().__init__(_BLANK)
        self.wrapped = False
        self.frozen = False
        self.cache: tuple[int, str] | None = None


_Buffer = defaultdict[int, _Row]

# Printable ASCII runs (drawn by the fast path) and everything else.
_ASCII_RUNS = re.compile("[ -~]+|[^ -~]+")


def _new_buffer() -> _Buffer:
    return defaultdict(_Row)


def _is_wide(cell: Cell | None) -> bool:
    return cell is not None and bool(cell.data) and wcwidth(cell.data[0]) == 2


def _row_full(row: _Row | None, width: int) -> str:
    """The row as ``width`` columns of text (spaces for empty cells), spacers removed."""
    if not row:
        return ""
    if row.cache is not None and row.cache[0] == width:
        return row.cache[1]
    chars = [" "] * width
    for x, cell in row.items():
        if x < width:
            chars[x] = cell.data
    text = "".join(chars)
    if row.frozen:
        row.cache = (width, text)
    return text


def _has_text(row: _Row | None) -> bool:
    """Whether any cell holds visible text, whatever the row's width."""
    return row is not None and any(cell.data.strip() for cell in row.values())


def _row_text(row: _Row | None, width: int) -> str:
    """Herdr's per-row rendering: the full row with trailing whitespace trimmed."""
    return _row_full(row, width).rstrip()


def _join_rows(rows: Iterable[_Row | None], width: int) -> str:
    """Herdr's ``lines_to_text``: trim rows, drop trailing blank rows, end with a newline."""
    lines = [_row_text(row, width) for row in rows]
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def _format_plain_unwrapped(rows: Sequence[_Row | None], width: int) -> str:
    """libghostty's plain formatter with ``unwrap`` and ``trim``.

    Blank rows become newlines only when text follows them, so there is no newline after
    the last line. Spaces left at the end of a soft-wrapped row carry into the next row.
    """
    out: list[str] = []
    pending_newlines = 0
    carry = 0
    previous_wrapped = False
    for row in rows:
        wrapped = row is not None and row.wrapped
        continuation, previous_wrapped = previous_wrapped, wrapped
        full = _row_full(row, width)
        body = full.rstrip(" ")
        if not body:
            pending_newlines += 1
            continue
        if pending_newlines:
            out.append("\n" * pending_newlines)
            pending_newlines = 0
        if not wrapped:
            pending_newlines += 1
        if not continuation:
            carry = 0
        if carry:
            out.append(" " * carry)
        out.append(body)
        carry = len(full) - len(body)
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def _sgr_open(style: _Style) -> str:
    """libghostty's VT style formatter: reset, then one SGR per attribute and colour."""
    fg, bg, bold, dim, italics, underscore, blink, reverse, hidden, strike = style
    parts = ["\x1b[0m"]
    for flag, code in (
        (bold, 1),
        (dim, 2),
        (italics, 3),
        (blink, 5),
        (reverse, 7),
        (hidden, 8),
        (strike, 9),
        (underscore, 4),
    ):
        if flag:
            parts.append(f"\x1b[{code}m")
    for colour, prefix in ((fg, 38), (bg, 48)):
        assert isinstance(colour, str)
        if colour.startswith("#"):
            r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
            parts.append(f"\x1b[{prefix};2;{r};{g};{b}m")
        elif colour != "default":
            parts.append(f"\x1b[{prefix};5;{colour}m")
    return "".join(parts)


def _format_vt(rows: Sequence[_Row | None], width: int, *, unwrap: bool) -> str:
    """libghostty's VT (``ansi``) formatter with ``trim``.

    A row with no text is blank and only produces ``\\r\\n`` when text follows. Empty
    cells are deferred and written as spaces only before later text, so trailing empty
    cells vanish; written cells, including spaces and styled blanks, are kept.
    """
    out: list[str] = []
    blank_rows = 0
    blank_cells = 0
    style: _Style = _PLAIN_STYLE
    previous_wrapped = False
    for row in rows:
        wrapped = row is not None and row.wrapped
        continuation, previous_wrapped = previous_wrapped, wrapped
        if row is None or not any(c.data for x, c in row.items() if x < width):
            blank_rows += 1
            continue
        if blank_rows:
            if style != _PLAIN_STYLE:
                out.append("\x1b[0m")
                style = _PLAIN_STYLE
            out.append("\r\n" * blank_rows)
            blank_rows = 0
        if not (wrapped and unwrap):
            blank_rows += 1
        if not (continuation and unwrap):
            blank_cells = 0
        for x in range(width):
            cell = row.get(x)
            if cell is None:
                blank_cells += 1
                continue
            if not cell.data:
                continue
            if blank_cells:
                out.append(" " * blank_cells)
                blank_cells = 0
            cell_style = cell[1:]
            if cell_style != style:
                out.append("\x1b[0m" if cell_style == _PLAIN_STYLE else _sgr_open(cell_style))
                style = cell_style
            out.append(cell.data)
    if style != _PLAIN_STYLE:
        out.append("\x1b[0m")
    return "".join(out)


def _limit_lines(text: str, limit: int | None) -> tuple[str, bool]:
    """Herdr's ``limit_snapshot_lines``: keep the last N newline-terminated lines."""
    if limit is None:
        return text, False
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return "".join(lines[max(len(lines) - limit, 0) :]), len(lines) > limit


@dataclass
class _SavedCursor:
    """What DECSC saves (one slot per screen, as in xterm and libghostty)."""

    x: int
    y: int
    pen: Cell
    g0: str
    g1: str
    charset: int
    origin: bool
    autowrap: bool


def _palette(index: int | None) -> str | None:
    if index is None or not 0 <= index <= 255:
        return None
    return str(index)


def _rgb(values: Sequence[int | None]) -> str | None:
    if len(values) < 3:
        return None
    r, g, b = ((v or 0) for v in values[:3])
    if max(r, g, b) > 255:
        return None
    return f"#{r:02x}{g:02x}{b:02x}"


def _extended_colour(groups: Sequence[Sequence[int | None]], index: int) -> tuple[str | None, int]:
    """Decode ``38``/``48``/``58`` colours; return the colour and the groups consumed.

    Handles both the colon form inside one group (``38:5:208``, ``38:2::r:g:b``) and the
    common semicolon form spread over several groups (``38;5;208``, ``38;2;r;g;b``).
    """
    group = groups[index]
    if len(group) > 1:
        kind, rest = group[1], list(group[2:])
        if kind == 5:
            return _palette(rest[0] if rest else None), 0
        if kind == 2:
            return _rgb(rest[1:] if len(rest) >= 4 else rest), 0
        return None, 0
    kind = groups[index + 1][0] if index + 1 < len(groups) else None
    if kind == 5:
        value = groups[index + 2][0] if index + 2 < len(groups) else None
        return _palette(value), 2
    if kind == 2:
        values = [g[0] for g in groups[index + 2 : index + 5]]
        return _rgb(values), 4
    return None, 1 if kind is not None else 0


# SGR codes that switch attributes on or off: code -> (Cell fields, new value).
_SGR_FLAGS: dict[int, tuple[tuple[str, ...], bool]] = {
    1: (("bold",), True),
    2: (("dim",), True),
    3: (("italics",), True),
    5: (("blink",), True),
    6: (("blink",), True),
    7: (("reverse",), True),
    8: (("hidden",), True),
    9: (("strikethrough",), True),
    21: (("underscore",), True),
    22: (("bold", "dim"), False),
    23: (("italics",), False),
    24: (("underscore",), False),
    25: (("blink",), False),
    27: (("reverse",), False),
    28: (("hidden",), False),
    29: (("strikethrough",), False),
}


class _Screen(pyte.Screen):
    """pyte's screen with the behaviour Herdr's panes need (see the module docstring).

    pyte's own cursor attributes are left alone; the current SGR state lives in
    ``pen`` so that cells can carry the extra attributes of :class:`Cell`.
    """

    def __init__(
        self, columns: int, lines: int, scrollback: int, reply: Callable[[bytes], None] | None
    ) -> None:
        self.reply = reply
        self.history: deque[_Row] = deque(maxlen=scrollback)
        self.pen = _BLANK
        self.alternate = False
        self.dec_modes: set[int] = set(_DEFAULT_DEC_MODES)
        self.osc_title: str | None = None
        self.title_stack: list[str | None] = []
        self.bells = 0
        self.touched = False
        self.last_graphic: str | None = None
        self._pen_cache: dict[Cell, dict[str, Cell]] = {}
        self._pen_cells: dict[str, Cell] = self._pen_cache.setdefault(_BLANK, {})
        self._saved: _SavedCursor | None = None
        self._inactive_saved: _SavedCursor | None = None
        self._inactive_rows: _Buffer | None = None
        self._rows: _Buffer = _new_buffer()
        super().__init__(columns, lines)

    # -- state helpers ---------------------------------------------------------------

    def _set_rows(self, rows: _Buffer) -> None:
        self._rows = rows
        # pyte's own methods (insert_lines, delete_lines, alignment_display) use .buffer.
        self.buffer = rows  # type: ignore[assignment]

    def set_pen(self, pen: Cell) -> None:
        if pen != self.pen:
            self.pen = pen
            if len(self._pen_cache) > 256:
                self._pen_cache.clear()
            self._pen_cells = self._pen_cache.setdefault(pen, {})

    def _cell(self, char: str) -> Cell:
        cell = self._pen_cells.get(char)
        if cell is None:
            if len(self._pen_cells) > 4096:
                self._pen_cells.clear()
            cell = self._pen_cells[char] = self.pen._replace(data=char)
        return cell

    def _erased_cell(self) -> Cell | None:
        """What erasing leaves behind: nothing, or a blank with the pen's background.

        libghostty's ``blankCell`` keeps only the background colour of the cursor style,
        so text erased under a foreground colour or bold leaves truly empty cells.
        """
        bg = self.pen.bg
        return None if bg == "default" else Cell(" ", bg=bg)

    def _clamp_pending_wrap(self) -> None:
        """Leave the "pending wrap" state pyte encodes as ``x == columns``."""
        if self.cursor.x >= self.columns:
            self.cursor.x = self.columns - 1

    def send_reply(self, text: str) -> None:
        if self.reply is None:
            return
        try:
            self.reply(text.encode("utf-8"))
        except Exception:
            logger.exception("terminal reply callback failed")

    # -- printing ------------------------------------------------------------------

    def draw(self, data: str) -> None:
        if not data:
            return
        table = self.g1_charset if self.charset else self.g0_charset
        if table is not charsets.LAT1_MAP:
            data = data.translate(table)
        self.touched = True
        if modes.IRM in self.mode:
            self._draw_unicode(data)
        elif data.isascii():
            self._draw_ascii(data)
        else:
            for match in _ASCII_RUNS.finditer(data):
                run = match[0]
                if run.isascii():
                    self._draw_ascii(run)
                else:
                    self._draw_unicode(run)
        self.last_graphic = data[-1]

    def _draw_ascii(self, data: str) -> None:
        """Fast path: single-width characters written a row-sized run at a time."""
        cursor = self.cursor
        cols = self.columns
        autowrap = modes.DECAWM in self.mode
        cell = self._cell
        i, n = 0, len(data)
        while i < n:
            if cursor.x >= cols:
                if autowrap:
                    self._wrap()
                else:
                    cursor.x = cols - 1
            x = cursor.x
            take = min(cols - x, n - i)
            row = self._rows[cursor.y]
            self._clear_wide_edges(row, x, x + take)
            row.update(zip(range(x, x + take), map(cell, data[i : i + take]), strict=True))
            i += take
            cursor.x = x + take

    def _draw_unicode(self, data: str) -> None:
        cursor = self.cursor
        cols = self.columns
        autowrap = modes.DECAWM in self.mode
        for char in data:
            width = wcwidth(char)
            if width < 0:
                continue
            if width == 0:
                self._combine(char)
                continue
            if cursor.x >= cols:
                if autowrap:
                    self._wrap()
                else:
                    cursor.x = cols - 1
            if width == 2 and cursor.x == cols - 1 and cols > 1:
                if autowrap:
                    # libghostty leaves a spacer in the last column and wraps.
                    self._rows[cursor.y][cols - 1] = self._cell("")
                    self._wrap()
                else:
                    cursor.x = cols - 2
            if modes.IRM in self.mode:
                self.insert_characters(width)
            x = cursor.x
            row = self._rows[cursor.y]
            self._clear_wide_edges(row, x, min(x + width, cols))
            row[x] = self._cell(char)
            if width == 2 and x + 1 < cols:
                row[x + 1] = self._cell("")
            cursor.x = min(x + width, cols)

    def _combine(self, char: str) -> None:
        """Attach a zero-width character to the cell before the cursor."""
        x, y = self.cursor.x, self.cursor.y
        if x == 0:
            if y == 0 or not self._rows[y - 1].wrapped:
                return
            row, column = self._rows[y - 1], self.columns - 1
        else:
            row, column = self._rows[y], min(x, self.columns) - 1
        cell = row.get(column)
        if cell is not None and not cell.data and column > 0:
            column -= 1
            cell = row.get(column)
        if cell is None or not cell.data:
            return
        row[column] = cell._replace(data=cell.data + char)

    def _clear_wide_edges(self, row: _Row, start: int, end: int) -> None:
        """Before overwriting ``[start, end)``, remove wide characters cut in half."""
        left = row.get(start)
        if left is not None and not left.data and start > 0 and _is_wide(row.get(start - 1)):
            row.pop(start - 1, None)
        right = row.get(end)
        if right is not None and not right.data and _is_wide(row.get(end - 1)):
            row.pop(end, None)

    def _wrap(self) -> None:
        self._rows[self.cursor.y].wrapped = True
        self.cursor.x = 0
        self.index()

    def repeat_last(self, count: int) -> None:
        if self.last_graphic is not None:
            self.draw(self.last_graphic * count)

    # -- scrolling -----------------------------------------------------------------

    def _region(self) -> tuple[int, int]:
        if self.margins is None:
            return 0, self.lines - 1
        return self.margins.top, self.margins.bottom

    def index(self) -> None:
        self._clamp_pending_wrap()
        top, bottom = self._region()
        if self.cursor.y == bottom:
            self.scroll_region_up(top, bottom, 1)
        elif self.cursor.y < self.lines - 1:
            self.cursor.y += 1

    def reverse_index(self) -> None:
        self._clamp_pending_wrap()
        top, bottom = self._region()
        if self.cursor.y == top:
            self.scroll_region_down(top, bottom, 1)
        elif self.cursor.y > 0:
            self.cursor.y -= 1

    def scroll_region_up(self, top: int, bottom: int, count: int) -> None:
        """Scroll ``[top, bottom]`` up; rows leaving the first screen row enter history."""
        rows = self._rows
        height = bottom - top + 1
        count = max(1, min(count, height))
        moved = [rows.pop(y, None) for y in range(top, bottom + 1)]
        if top == 0 and not self.alternate and self.history.maxlen != 0:
            for row in moved[:count]:
                row = row if row is not None else _Row()
                row.frozen = True
                self.history.append(row)
        for offset, row in enumerate(moved[count:]):
            if row is not None:
                rows[top + offset] = row
        self.touched = True

    def scroll_region_down(self, top: int, bottom: int, count: int) -> None:
        rows = self._rows
        height = bottom - top + 1
        count = max(1, min(count, height))
        moved = [rows.pop(y, None) for y in range(top, bottom + 1)]
        for offset, row in enumerate(moved[: height - count]):
            if row is not None:
                rows[top + count + offset] = row
        self.touched = True

    def scroll_up(self, count: int) -> None:
        top, bottom = self._region()
        self.scroll_region_up(top, bottom, count)

    def scroll_down(self, count: int) -> None:
        top, bottom = self._region()
        self.scroll_region_down(top, bottom, count)

    # -- cursor movement pyte gets wrong around margins and pending wrap ----------------

    def cursor_up(self, count: int | None = None) -> None:
        self._clamp_pending_wrap()
        top = self.margins.top if self.margins and self.cursor.y >= self.margins.top else 0
        self.cursor.y = max(self.cursor.y - (count or 1), top)

    def cursor_down(self, count: int | None = None) -> None:
        self._clamp_pending_wrap()
        bottom = self.lines - 1
        if self.margins and self.cursor.y <= self.margins.bottom:
            bottom = self.margins.bottom
        self.cursor.y = min(self.cursor.y + (count or 1), bottom)

    def cursor_to_line(self, line: int | None = None) -> None:
        self.cursor.y = (line or 1) - 1
        if modes.DECOM in self.mode and self.margins is not None:
            self.cursor.y += self.margins.top
        self._clamp_pending_wrap()
        self.ensure_vbounds()

    def back_tab(self, count: int) -> None:
        self._clamp_pending_wrap()
        for _ in range(count):
            self.cursor.x = max((s for s in self.tabstops if s < self.cursor.x), default=0)

    def set_margins(self, top: int | None = None, bottom: int | None = None) -> None:
        super().set_margins(top, bottom)
        if self.margins is None:
            self.cursor_position()

    # -- erasing and editing -------------------------------------------------------------

    def _erase_cells(self, y: int, start: int, end: int) -> None:
        row = self._rows[y]
        self._clear_wide_edges(row, start, end)
        blank = self._erased_cell()
        if blank is None:
            for x in range(start, end):
                row.pop(x, None)
        else:
            row.update(dict.fromkeys(range(start, end), blank))
        self.touched = True

    def _erase_rows(self, ys: Iterable[int]) -> None:
        for y in ys:
            self._rows.pop(y, None)
            blank = self._erased_cell()
            if blank is not None:
                self._rows[y].update(dict.fromkeys(range(self.columns), blank))
        self.touched = True

    def erase_in_display(self, how: int = 0, *args: object, **kwargs: object) -> None:
        x, y = min(self.cursor.x, self.columns - 1), self.cursor.y
        if how == 0:
            self._erase_cells(y, x, self.columns)
            self._erase_rows(range(y + 1, self.lines))
        elif how == 1:
            self._erase_rows(range(y))
            self._erase_cells(y, 0, x + 1)
        elif how == 2:
            self._erase_rows(range(self.lines))
        elif how == 3:
            # xterm/libghostty: ED 3 erases the saved lines only, not the screen.
            self.history.clear()
            self.touched = True

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        x, y = min(self.cursor.x, self.columns - 1), self.cursor.y
        if how == 0:
            self._erase_cells(y, x, self.columns)
            self._rows[y].wrapped = False
        elif how == 1:
            self._erase_cells(y, 0, x + 1)
        elif how == 2:
            self._erase_cells(y, 0, self.columns)

    def erase_characters(self, count: int | None = None) -> None:
        x, y = min(self.cursor.x, self.columns - 1), self.cursor.y
        self._erase_cells(y, x, min(x + (count or 1), self.columns))
        self._rows[y].wrapped = False

    def delete_characters(self, count: int | None = None) -> None:
        self._clamp_pending_wrap()
        x, cols = self.cursor.x, self.columns
        count = min(count or 1, cols - x)
        row = self._rows[self.cursor.y]
        cells = [row.pop(i, None) for i in range(x, cols)]
        for offset, cell in enumerate(cells[count:]):
            if cell is not None:
                row[x + offset] = cell
        blank = self._erased_cell()
        if blank is not None:
            row.update(dict.fromkeys(range(cols - count, cols), blank))
        row.wrapped = False
        self.touched = True

    def insert_characters(self, count: int | None = None) -> None:
        self._clamp_pending_wrap()
        x, cols = self.cursor.x, self.columns
        count = min(count or 1, cols - x)
        row = self._rows[self.cursor.y]
        cells = [row.pop(i, None) for i in range(x, cols)]
        for offset, cell in enumerate(cells[: cols - x - count]):
            if cell is not None:
                row[x + count + offset] = cell
        blank = self._erased_cell()
        if blank is not None:
            row.update(dict.fromkeys(range(x, x + count), blank))
        self.touched = True

    # -- cursor save/restore, modes, alternate screen ------------------------------------

    def save_cursor(self) -> None:
        self._saved = _SavedCursor(
            self.cursor.x,
            self.cursor.y,
            self.pen,
            self.g0_charset,
            self.g1_charset,
            self.charset,
            modes.DECOM in self.mode,
            modes.DECAWM in self.mode,
        )

    def restore_cursor(self) -> None:
        saved = self._saved
        if saved is None:
            self.mode.discard(modes.DECOM)
            self.dec_modes.discard(6)
            self.set_pen(_BLANK)
            self.cursor_position()
            return
        self.cursor.x = min(saved.x, self.columns)
        self.cursor.y = min(saved.y, self.lines - 1)
        self.set_pen(saved.pen)
        self.g0_charset, self.g1_charset, self.charset = saved.g0, saved.g1, saved.charset
        for flag, mode, dec in ((saved.origin, modes.DECOM, 6), (saved.autowrap, modes.DECAWM, 7)):
            if flag:
                self.mode.add(mode)
                self.dec_modes.add(dec)
            else:
                self.mode.discard(mode)
                self.dec_modes.discard(dec)

    def set_ansi_mode(self, mode: int, enabled: bool) -> None:
        if mode in (modes.IRM, modes.LNM):
            if enabled:
                self.mode.add(mode)
            else:
                self.mode.discard(mode)

    def set_dec_mode(self, mode: int, enabled: bool) -> None:
        if mode in _ALT_SCREEN_MODES:
            if enabled:
                self._enter_alternate(mode)
                self.dec_modes.add(mode)
            else:
                self._leave_alternate(mode)
                self.dec_modes.difference_update(_ALT_SCREEN_MODES)
            return
        if mode == 1048:
            if enabled:
                self.save_cursor()
            else:
                self.restore_cursor()
            return
        if mode == 3:
            # DECCOLM needs xterm's allowColumns (mode 40); libghostty ignores it too.
            return
        if enabled:
            self.dec_modes.add(mode)
        else:
            self.dec_modes.discard(mode)
        pyte_mode = {6: modes.DECOM, 7: modes.DECAWM, 25: modes.DECTCEM}.get(mode)
        if pyte_mode is not None:
            if enabled:
                self.mode.add(pyte_mode)
            else:
                self.mode.discard(pyte_mode)
        if mode == 6:
            self.cursor_position()
        elif mode == 25:
            self.cursor.hidden = not enabled
        self.touched = True

    def _switch_screens(self) -> None:
        inactive = self._inactive_rows if self._inactive_rows is not None else _new_buffer()
        self._inactive_rows = self._rows
        self._set_rows(inactive)
        self._saved, self._inactive_saved = self._inactive_saved, self._saved
        self.alternate = not self.alternate
        self.touched = True

    def _enter_alternate(self, mode: int) -> None:
        if mode == 1049:
            self.save_cursor()
        if not self.alternate:
            self._switch_screens()
        if mode != 47:
            self._rows.clear()

    def _leave_alternate(self, mode: int) -> None:
        if self.alternate:
            if mode == 1047:
                self._rows.clear()
            self._switch_screens()
        if mode == 1049:
            self.restore_cursor()

    def soft_reset(self) -> None:
        """DECSTR: modes, margins, SGR and saved cursor back to defaults; text kept."""
        self.mode.difference_update({modes.IRM, modes.DECOM})
        self.mode.update({modes.DECAWM, modes.DECTCEM})
        self.dec_modes.difference_update({1, 6, 66})
        self.dec_modes.update({7, 25})
        self.cursor.hidden = False
        self.margins = None
        self.set_pen(_BLANK)
        self.g0_charset, self.g1_charset, self.charset = (
            charsets.LAT1_MAP,
            charsets.VT100_MAP,
            0,
        )
        self._saved = None
        self.touched = True

    def reset(self) -> None:
        """RIS: back to the main screen, cleared, with default modes; history is kept."""
        if getattr(self, "alternate", False):
            self._switch_screens()
        self._inactive_rows = None
        self._inactive_saved = None
        self._saved = None
        super().reset()
        self._set_rows(_new_buffer())
        self.set_pen(_BLANK)
        self.dec_modes = set(_DEFAULT_DEC_MODES)
        self.touched = True

    # -- queries -------------------------------------------------------------------

    def cursor_report(self) -> str:
        y = self.cursor.y + 1
        if modes.DECOM in self.mode and self.margins is not None:
            y -= self.margins.top
        x = min(self.cursor.x, self.columns - 1) + 1
        return f"\x1b[{y};{x}R"

    def mode_report(self, mode: int, private: bool) -> str:
        """DECRQM answer: 1 set, 2 reset, 0 not recognised."""
        if private:
            known, enabled, prefix = mode in _KNOWN_DEC_MODES, mode in self.dec_modes, "?"
        else:
            known = mode in (modes.IRM, modes.LNM)
            enabled, prefix = known and mode in self.mode, ""
        status = 1 if enabled else 2 if known else 0
        return f"\x1b[{prefix}{mode};{status}$y"

    # -- SGR -----------------------------------------------------------------------

    def apply_sgr(self, groups: Sequence[Sequence[int | None]]) -> None:
        if not groups:
            groups = [[0]]
        changes: dict[str, Any] = {}
        pen = self.pen
        i = 0
        while i < len(groups):
            group = groups[i]
            code = group[0] or 0
            if code == 0:
                pen, changes = _BLANK, {}
            elif code == 4:
                changes["underscore"] = not (len(group) > 1 and group[1] == 0)
            elif code in _SGR_FLAGS:
                names, value = _SGR_FLAGS[code]
                changes.update(dict.fromkeys(names, value))
            elif 30 <= code <= 37:
                changes["fg"] = str(code - 30)
            elif 40 <= code <= 47:
                changes["bg"] = str(code - 40)
            elif 90 <= code <= 97:
                changes["fg"] = str(code - 82)
            elif 100 <= code <= 107:
                changes["bg"] = str(code - 92)
            elif code == 39:
                changes["fg"] = "default"
            elif code == 49:
                changes["bg"] = "default"
            elif code in (38, 48, 58):
                colour, consumed = _extended_colour(groups, i)
                i += consumed
                if colour is not None and code != 58:
                    changes["fg" if code == 38 else "bg"] = colour
            i += 1
        self.set_pen(pen._replace(**changes) if changes else pen)

    # -- resize --------------------------------------------------------------------

    def resize(self, lines: int | None = None, columns: int | None = None) -> None:
        lines = lines or self.lines
        columns = columns or self.columns
        if lines == self.lines and columns == self.columns:
            return
        old_columns = self.columns
        if self.alternate:
            self._fit_alternate(lines, columns)
            if self._inactive_rows is not None:
                saved = self._inactive_saved
                x, y = (
                    (saved.x, saved.y) if saved else (0, self._last_text_row(self._inactive_rows))
                )
                rows, (x, y) = self._fit_main(self._inactive_rows, x, y, lines, columns)
                self._inactive_rows = rows
                if saved is not None:
                    saved.x, saved.y = x, y
        else:
            rows, (x, y) = self._fit_main(self._rows, self.cursor.x, self.cursor.y, lines, columns)
            self._set_rows(rows)
            self.cursor.x, self.cursor.y = x, y
        self.lines, self.columns = lines, columns
        self.margins = None
        if columns > old_columns:
            self.tabstops.update(x for x in range(8, columns, 8) if x >= old_columns)
        self.tabstops = {x for x in self.tabstops if x < columns}
        self.cursor.x = min(self.cursor.x, columns)
        self.cursor.y = min(self.cursor.y, lines - 1)
        self.touched = True

    def _last_text_row(self, rows: _Buffer) -> int:
        for y in range(self.lines - 1, -1, -1):
            if _row_text(rows.get(y), self.columns):
                return y
        return 0

    def _fit_alternate(self, lines: int, columns: int) -> None:
        """No reflow on the alternate screen: clip columns, keep the cursor row visible."""
        old = [self._rows.get(y) for y in range(self.lines)]
        for row in old:
            if row is not None:
                for x in [x for x in row if x >= columns]:
                    del row[x]
        start = self._window_start(old, 0, self.cursor.y, lines)
        self.cursor.y -= start
        self._set_rows(self._rows_to_buffer(old[start : start + lines]))

    def _fit_main(
        self, buffer: _Buffer, cx: int, cy: int, lines: int, columns: int
    ) -> tuple[_Buffer, tuple[int, int]]:
        """Reflow history + main screen to ``columns`` and pick the new screen window.

        Rows that no longer fit above the window go to history; the window keeps the
        old top row where it can, moving down only to keep the cursor (and any text
        below it) visible. Blank rows under the window are dropped.
        """
        screen = [buffer.get(y) for y in range(self.lines)]
        history = list(self.history)
        all_rows: list[_Row | None] = [*history, *screen]
        cursor_index = len(history) + cy
        if columns == self.columns:
            out, top, (new_index, x) = all_rows, len(history), (cursor_index, cx)
        else:
            out, top, (new_index, x) = self._reflow(
                all_rows, len(history), cursor_index, cx, columns
            )
        start = self._window_start(out, top, new_index, lines)
        for row in out[:start]:
            if row is not None:
                row.frozen = True
        self.history = deque(
            (row if row is not None else _Row() for row in out[:start]), maxlen=self.history.maxlen
        )
        return self._rows_to_buffer(out[start : start + lines]), (x, new_index - start)

    def _window_start(self, rows: Sequence[_Row | None], top: int, cursor: int, lines: int) -> int:
        start = max(top, cursor - lines + 1)
        last_text = next((i for i in range(len(rows) - 1, -1, -1) if _has_text(rows[i])), -1)
        if last_text - start >= lines:
            start = max(start, min(last_text - lines + 1, cursor))
        return start

    @staticmethod
    def _rows_to_buffer(rows: Iterable[_Row | None]) -> _Buffer:
        buffer = _new_buffer()
        for y, row in enumerate(rows):
            if row is not None:
                buffer[y] = row
        return buffer

    def _reflow(
        self, rows: Sequence[_Row | None], top: int, cursor_index: int, cx: int, columns: int
    ) -> tuple[list[_Row | None], int, tuple[int, int]]:
        """Re-wrap logical lines to ``columns``; map the old top row and the cursor."""
        old_columns = self.columns
        out: list[_Row | None] = []
        new_top = 0
        new_cursor = (0, 0)
        i = 0
        while i < len(rows):
            j = i
            while j < len(rows) - 1 and (row_j := rows[j]) is not None and row_j.wrapped:
                j += 1
            group = rows[i : j + 1]
            first = group[0]
            if len(group) == 1 and (not first or max(first) < columns):
                if i == top:
                    new_top = len(out)
                if i == cursor_index:
                    new_cursor = (len(out), min(cx, columns - 1))
                out.append(first)
                i = j + 1
                continue
            cells: list[Cell | None] = []
            marks: dict[int, int] = {}
            cursor_offset: int | None = None
            for k, maybe_row in enumerate(group):
                # Only the last row of a group can be missing: a wrapped row whose
                # continuation was never drawn (e.g. erased). It is an empty row.
                row = maybe_row if maybe_row is not None else _Row()
                index = i + k
                marks[index] = len(cells)
                last = k == len(group) - 1
                limit = old_columns if not last else (max(row) + 1 if row else 0)
                for x in range(limit):
                    if index == cursor_index and x == cx:
                        cursor_offset = len(cells)
                    cell = row.get(x)
                    if cell is not None and not cell.data:
                        continue
                    cells.append(cell)
                if index == cursor_index and cursor_offset is None:
                    cursor_offset = len(cells) + max(cx - limit, 0)
            positions = self._split_cells(cells, columns, out)
            base = positions[-1]
            for index, offset in marks.items():
                row_index, _ = positions[offset] if offset < len(cells) else base
                if index == top:
                    new_top = row_index
            if cursor_offset is not None:
                if cursor_offset < len(cells):
                    new_cursor = positions[cursor_offset]
                else:
                    row_index, column = base
                    new_cursor = (row_index, min(column + cursor_offset - len(cells), columns))
            i = j + 1
        return out, new_top, new_cursor

    @staticmethod
    def _split_cells(
        cells: Sequence[Cell | None], columns: int, out: list[_Row | None]
    ) -> list[tuple[int, int]]:
        """Append rows holding ``cells`` wrapped at ``columns`` to ``out``.

        Returns the (row, column) of every cell plus, last, the position after them.
        """
        positions: list[tuple[int, int]] = []
        row = _Row()
        column = 0
        for cell in cells:
            width = 2 if _is_wide(cell) else 1
            if column + width > columns and column > 0:
                if column < columns:
                    row[column] = _BLANK._replace(data="")
                row.wrapped = True
                out.append(row)
                row, column = _Row(), 0
            positions.append((len(out), column))
            if cell is not None:
                row[column] = cell
                if width == 2 and column + 1 < columns:
                    row[column + 1] = cell._replace(data="")
            column += width
        positions.append((len(out), column))
        out.append(row)
        return positions


_C1_STRINGS = frozenset("\x90\x98\x9e\x9f")  # DCS, SOS, PM, APC
# A complete CSI sequence: parameters, intermediates, final byte.
_CSI_SEQUENCE = re.compile(f"\x1b\\[([0-?]{{0,{_MAX_PARAM_CHARS}}})([ -/]*)([@-~])")
_CANCEL = frozenset("\x18\x1a")
_Parser = Generator[bool | None, str, None]
_SubParser = Generator[bool | None, str, str | None]


class _Stream(pyte.ByteStream):
    """A ByteStream whose parser follows ECMA-48 instead of pyte's simplified one.

    The generator protocol is pyte's: yielding ``True`` means "ground state, plain text
    may be drawn directly"; yielding ``None`` asks for the next character. Every C0/C1
    control is routed through the parser, so :meth:`_Screen.draw` only sees text.
    """

    _text_pattern = re.compile("[^\x00-\x1f\x7f-\x9f]+")

    def __init__(self, screen: _Screen) -> None:
        self.screen = screen
        super().__init__(screen)

    def feed(self, data: bytes) -> None:  # type: ignore[override]  # as pyte's ByteStream
        # Incremental decoding keeps UTF-8 characters split across chunks intact and
        # turns invalid bytes into U+FFFD instead of raising.
        self._feed_text(self.utf8_decoder.decode(data))

    def _feed_text(self, data: str) -> None:
        """pyte's feed loop plus shortcuts taken only in the ground state.

        Text runs, single controls and CSI sequences complete within the chunk are
        handled without stepping the parser generator one character at a time, which
        is what makes coloured output cheap. Anything else goes through the generator.
        """
        draw = self.screen.draw
        match_text = self._text_pattern.match
        match_csi = _CSI_SEQUENCE.match
        send = self._send_to_parser
        ground = self._taking_plain_text
        offset, length = 0, len(data)
        while offset < length:
            if ground:
                match = match_text(data, offset)
                if match is not None:
                    draw(match[0])
                    offset = match.end()
                    continue
                char = data[offset]
                if char == "\x1b":
                    match = match_csi(data, offset)
                    if match is not None:
                        self._csi_dispatch(match[1], match[2], match[3])
                        offset = match.end()
                        continue
                elif char < " " and char not in _CANCEL:
                    self._execute(char)
                    offset += 1
                    continue
            ground = send(data[offset])
            offset += 1
        self._taking_plain_text = ground

    def _parser_fsm(self) -> _Parser:
        pending: str | None = None
        while True:
            if pending is None:
                char = yield True
            else:
                char, pending = pending, None
            if char == "\x1b":
                pending = yield from self._escape()
            elif char == "\x9b":
                pending = yield from self._csi()
            elif char == "\x9d":
                pending = yield from self._osc()
            elif char in _C1_STRINGS:
                pending = yield from self._skip_string()
            else:
                self._execute(char)

    def _execute(self, char: str) -> None:
        screen = self.screen
        if char in "\n\x0b\x0c":
            screen.linefeed()
        elif char == "\r":
            screen.carriage_return()
        elif char == "\x08":
            screen.backspace()
        elif char == "\t":
            screen.tab()
        elif char == "\x07":
            screen.bells += 1
        elif char == "\x0e":
            screen.shift_out()
        elif char == "\x0f":
            screen.shift_in()
        elif char == "\x85":
            screen.carriage_return()
            screen.index()
        elif char == "\x84":
            screen.index()
        elif char == "\x8d":
            screen.reverse_index()
        elif char == "\x88":
            screen.set_tab_stop()
        elif char >= " " and not "\x7f" <= char <= "\x9f":
            screen.draw(char)

    def _escape(self) -> _SubParser:
        char = yield None
        while char < " " and char not in _CANCEL and char != "\x1b":
            self._execute(char)
            char = yield None
        if char == "[":
            return (yield from self._csi())
        if char == "]":
            return (yield from self._osc())
        if char in "PX^_":
            return (yield from self._skip_string())
        if char == "\x1b":
            return char
        if char in _CANCEL:
            return None
        intermediates = ""
        while " " <= char <= "/":
            intermediates += char
            char = yield None
            if char == "\x1b":
                return char
            if char in _CANCEL or len(intermediates) > 8:
                return None
        if "0" <= char <= "~":
            self._esc_dispatch(intermediates, char)
        return None

    def _esc_dispatch(self, intermediates: str, final: str) -> None:
        screen = self.screen
        if intermediates in ("(", ")"):
            if final in charsets.MAPS:
                screen.define_charset(final, intermediates)
        elif intermediates == "#":
            if final == "8":
                screen.alignment_display()
        elif intermediates:
            return  # ESC % (charset switching) would break UTF-8 decoding; ignore.
        elif final == "7":
            screen.save_cursor()
        elif final == "8":
            screen.restore_cursor()
        elif final == "c":
            screen.reset()
        elif final == "D":
            screen.index()
        elif final == "E":
            screen.carriage_return()
            screen.index()
        elif final == "M":
            screen.reverse_index()
        elif final == "H":
            screen.set_tab_stop()

    def _csi(self) -> _SubParser:
        params: list[str] = []
        intermediates = ""
        valid = True
        while True:
            char = yield None
            if "0" <= char <= "?":
                if intermediates or len(params) >= _MAX_PARAM_CHARS:
                    valid = False
                else:
                    params.append(char)
            elif " " <= char <= "/":
                intermediates += char
            elif "@" <= char <= "~":
                if valid:
                    self._csi_dispatch("".join(params), intermediates, char)
                return None
            elif char == "\x1b" or char in "\x9b\x9d" or char in _C1_STRINGS:
                return char
            elif char in _CANCEL:
                return None
            elif char < " ":
                self._execute(char)
            elif char != "\x7f":
                return None

    def _csi_dispatch(self, params: str, intermediates: str, final: str) -> None:
        marker = ""
        if params and params[0] in "<=>?":
            marker, params = params[0], params[1:]
        if any(c in "<=>?" for c in params):
            return
        groups: list[list[int | None]] = (
            [
                [min(int(p), _MAX_PARAM_VALUE) if p else None for p in group.split(":")]
                for group in params.split(";")
            ]
            if params
            else []
        )

        def raw(i: int) -> int | None:
            return groups[i][0] if i < len(groups) else None

        def count() -> int:
            return raw(0) or 1

        screen = self.screen
        if intermediates:
            if intermediates == "$" and final == "p" and marker in ("", "?"):
                for mode in (raw(0),):
                    if mode is not None:
                        screen.send_reply(screen.mode_report(mode, private=marker == "?"))
            elif intermediates == "!" and final == "p" and not marker:
                screen.soft_reset()
            return
        if marker == "?":
            if final in "hl":
                for group in groups:
                    if group[0] is not None:
                        screen.set_dec_mode(group[0], final == "h")
            elif final == "J":
                screen.erase_in_display(raw(0) or 0)
            elif final == "K":
                screen.erase_in_line(raw(0) or 0)
            # "CSI ? u" (kitty keyboard query) is deliberately unanswered: the simulator
            # only encodes keys the legacy way, so programs must not switch protocols.
            return
        if marker == ">":
            if final == "c" and not raw(0):
                screen.send_reply(_DA2_REPLY)
            return
        if marker == "=":
            if final == "c" and not raw(0):
                screen.send_reply(_DA3_REPLY)
            return
        if marker:
            return
        self._csi_plain(final, groups, raw, count)

    def _csi_plain(
        self,
        final: str,
        groups: list[list[int | None]],
        raw: Callable[[int], int | None],
        count: Callable[[], int],
    ) -> None:
        """Dispatch a CSI sequence without private marker or intermediates."""
        screen = self.screen
        match final:
            case "@":
                screen.insert_characters(count())
            case "A":
                screen.cursor_up(count())
            case "B" | "e":
                screen.cursor_down(count())
            case "C" | "a":
                screen.cursor_forward(count())
            case "D":
                screen.cursor_back(count())
            case "E":
                screen.cursor_down1(count())
            case "F":
                screen.cursor_up1(count())
            case "G" | "`":
                screen.cursor_to_column(count())
            case "H" | "f":
                screen.cursor_position(raw(0), raw(1))
            case "I":
                for _ in range(min(count(), screen.columns)):
                    screen.tab()
            case "J":
                screen.erase_in_display(raw(0) or 0)
            case "K":
                screen.erase_in_line(raw(0) or 0)
            case "L":
                screen.insert_lines(count())
            case "M":
                screen.delete_lines(count())
            case "P":
                screen.delete_characters(count())
            case "S":
                screen.scroll_up(count())
            case "T":
                if len(groups) <= 1:  # five parameters: xterm's mouse highlight reply
                    screen.scroll_down(count())
            case "X":
                screen.erase_characters(count())
            case "Z":
                screen.back_tab(count())
            case "b":
                screen.repeat_last(count())
            case "c":
                if not raw(0):
                    screen.send_reply(_DA1_REPLY)
            case "d":
                screen.cursor_to_line(count())
            case "g":
                screen.clear_tab_stop(raw(0) or 0)
            case "h" | "l":
                for group in groups:
                    if group[0] is not None:
                        screen.set_ansi_mode(group[0], final == "h")
            case "m":
                screen.apply_sgr(groups)
            case "n":
                if raw(0) == 5:
                    screen.send_reply("\x1b[0n")
                elif raw(0) == 6:
                    screen.send_reply(screen.cursor_report())
            case "r":
                screen.set_margins(raw(0), raw(1))
            case "s":
                screen.save_cursor()
            case "t":
                self._window_op(raw)
            case "u":
                screen.restore_cursor()

    def _window_op(self, raw: Callable[[int], int | None]) -> None:
        """XTWINOPS: report the size in characters; push/pop the title (vim uses it)."""
        screen = self.screen
        op = raw(0)
        if op == 18:
            screen.send_reply(f"\x1b[8;{screen.lines};{screen.columns}t")
        elif op == 22 and raw(1) in (None, 0, 2):
            screen.title_stack.append(screen.osc_title)
            del screen.title_stack[:-_MAX_TITLE_STACK]
        elif op == 23 and raw(1) in (None, 0, 2) and screen.title_stack:
            screen.osc_title = screen.title_stack.pop()
            screen.touched = True

    def _osc(self) -> _SubParser:
        chars: list[str] = []
        while True:
            char = yield None
            if char == "\x07":
                self._osc_dispatch("".join(chars), "\x07")
                return None
            if char == "\x9c":
                self._osc_dispatch("".join(chars), "\x1b\\")
                return None
            if char == "\x1b":
                # ESC ends the string; the following "\" (ST) is then a no-op escape.
                self._osc_dispatch("".join(chars), "\x1b\\")
                return char
            if char in _CANCEL:
                return None
            if char >= " " and len(chars) < _MAX_OSC_CHARS:
                chars.append(char)

    def _osc_dispatch(self, payload: str, terminator: str) -> None:
        code, separator, rest = payload.partition(";")
        if not separator:
            return
        if code in ("0", "2"):
            self.screen.osc_title = rest
            self.screen.touched = True
        # OSC 10/11 colour queries stay unanswered: headless Herdr only answers them from
        # an attached client's theme. Everything else (OSC 7, 8, 52, 133...) is ignored.

    def _skip_string(self) -> _SubParser:
        """DCS/SOS/PM/APC payloads are consumed until ST and ignored."""
        while True:
            char = yield None
            if char == "\x1b":
                return char
            if char == "\x9c" or char in _CANCEL:
                return None


class Terminal:
    """One pane's screen, history and terminal state, fed with the pane's pty output.

    ``reply`` receives the bytes a real terminal would write back to the program
    (cursor position reports, device attributes...); the pane writes them to the pty.
    """

    def __init__(
        self,
        cols: int,
        rows: int,
        *,
        scrollback: int = DEFAULT_SCROLLBACK,
        reply: Callable[[bytes], None] | None = None,
    ) -> None:
        if cols < 1 or rows < 1:
            raise ValueError(f"terminal size must be at least 1x1, got {cols}x{rows}")
        if scrollback < 0:
            raise ValueError("scrollback must not be negative")
        self._screen = _Screen(cols, rows, scrollback, reply)
        self._stream = _Stream(self._screen)
        #: Bumped by every feed or resize that changed the screen, history, title or
        #: modes; compare two values to learn cheaply whether a re-read is worthwhile.
        self.changes = 0
        #: Internal parser errors swallowed by :meth:`feed` (should stay 0).
        self.parse_errors = 0

    # -- input ---------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Process pty output. Chunks may split escape sequences and UTF-8 characters."""
        if not data:
            return
        screen = self._screen
        try:
            self._stream.feed(data)
        except Exception:
            # A bug here must not kill the pane's reader; keep going with a clean parser.
            self.parse_errors += 1
            logger.exception("terminal parser error; parser state reset")
            self._stream._initialize_parser()
        if screen.touched or screen.dirty:
            self.changes += 1
            screen.touched = False
            screen.dirty.clear()

    def resize(self, cols: int, rows: int) -> None:
        """Resize like Herdr: the main screen and its history reflow to the new width."""
        if cols < 1 or rows < 1:
            raise ValueError(f"terminal size must be at least 1x1, got {cols}x{rows}")
        if (cols, rows) == (self.cols, self.rows):
            return
        self._screen.resize(rows, cols)
        self._screen.touched = False
        self.changes += 1

    # -- state ---------------------------------------------------------------------

    @property
    def cols(self) -> int:
        return self._screen.columns

    @property
    def rows(self) -> int:
        return self._screen.lines

    @property
    def bracketed_paste(self) -> bool:
        """DECSET 2004 is on: Herdr wraps sent text in ``ESC[200~`` / ``ESC[201~``."""
        return 2004 in self._screen.dec_modes

    @property
    def application_cursor(self) -> bool:
        """DECCKM (DECSET 1) is on: unmodified arrow keys are sent as ``ESC O A``."""
        return 1 in self._screen.dec_modes

    @property
    def alternate_screen(self) -> bool:
        return self._screen.alternate

    @property
    def title(self) -> str | None:
        """The last OSC 0 / OSC 2 title, or None if the program never set one."""
        return self._screen.osc_title

    @property
    def cursor(self) -> tuple[int, int]:
        """0-based (column, row) of the cursor on the active screen."""
        screen = self._screen
        return min(screen.cursor.x, screen.columns - 1), screen.cursor.y

    @property
    def bells(self) -> int:
        """How many BEL characters the program has printed outside escape sequences."""
        return self._screen.bells

    def history_len(self) -> int:
        """Rows in the main screen's scrollback."""
        return len(self._screen.history)

    # -- reads ---------------------------------------------------------------------

    def read(
        self, source: ReadSource, lines: int | None = None, fmt: ReadFormat = "text"
    ) -> tuple[str, bool]:
        """Render the pane like Herdr's ``pane.read``: returns ``(text, truncated)``."""
        if lines is not None:
            if lines < 0:
                raise ValueError("lines must not be negative")
            lines = min(lines, MAX_READ_LINES)
        screen = self._screen
        width = screen.columns
        if source == "visible":
            rows = [screen._rows.get(y) for y in range(screen.lines)]
            if fmt == "ansi":
                return _limit_lines(_format_vt(rows, width, unwrap=False), lines)
            return _limit_lines(_join_rows(rows, width), lines)
        if source == "detection":
            rows, _ = self._tail_rows(max(screen.lines, DETECTION_MIN_ROWS))
            return _limit_lines(_join_rows(rows, width), lines)
        if source in ("recent", "recent_unwrapped"):
            unwrap = source == "recent_unwrapped"
            rows, truncated = self._tail_rows(DEFAULT_RECENT_LINES if lines is None else lines)
            if fmt == "ansi":
                return _format_vt(rows, width, unwrap=unwrap), truncated
            if unwrap:
                return _format_plain_unwrapped(rows, width), truncated
            return _join_rows(rows, width), truncated
        raise ValueError(f"unknown read source: {source!r}")

    def _tail_rows(self, count: int) -> tuple[list[_Row | None], bool]:
        """The ``count`` rendered rows ending at the last row with text.

        Rows are history (main screen only) followed by the active screen. ``truncated``
        is true when rows with an older index exist before the returned ones.
        """
        screen = self._screen
        width = screen.columns
        history: Sequence[_Row] = () if screen.alternate else screen.history
        screen_rows = [screen._rows.get(y) for y in range(screen.lines)]
        h = len(history)
        end = next(
            (
                h + y
                for y in range(len(screen_rows) - 1, -1, -1)
                if _row_text(screen_rows[y], width)
            ),
            -1,
        )
        if end < 0:
            for back, row in enumerate(reversed(history)):
                if _row_text(row, width):
                    end = h - 1 - back
                    break
        if end < 0 or count == 0:
            return [], end >= 0
        start = max(0, end - count + 1)
        out: list[_Row | None] = []
        if start < h:
            stop = min(end + 1, h)
            older = list(itertools.islice(reversed(history), h - stop, h - start))
            older.reverse()
            out.extend(older)
        if end >= h:
            out.extend(screen_rows[max(start - h, 0) : end - h + 1])
        return out, start > 0
