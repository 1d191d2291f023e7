"""The screen model: a ``pyte.Screen`` that keeps libghostty's behaviour where pyte differs.

Scrollback in a bounded deque (fed also by a scroll region that starts at the top row),
soft-wrap flags, the alternate screen, DEC modes and their DECRQM reports, SGR with
extended colours, DECSC/DECRC per screen, and reflow on resize. It is driven by the
parser in :mod:`._parser` and read by the facade in :mod:`._terminal`.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pyte
from pyte import charsets, modes
from pyte.screens import wcwidth

from ._cells import _BLANK, Cell, _Buffer, _has_text, _is_wide, _new_buffer, _Row, _row_text

logger = logging.getLogger(__name__)

# Private (DEC) modes on after power-on: autowrap and a visible cursor.
_DEFAULT_DEC_MODES = frozenset({7, 25})
# Private modes DECRQM reports as "reset" rather than "not recognised" when off.
_KNOWN_DEC_MODES = frozenset(
    {1, 3, 5, 6, 7, 8, 9, 12, 25, 45, 47, 66, 67, 69, 1000, 1001, 1002, 1003, 1004, 1005}
    | {1006, 1007, 1015, 1016, 1035, 1036, 1039, 1047, 1048, 1049, 2004, 2026, 2027, 2031}
)
_ALT_SCREEN_MODES = frozenset({47, 1047, 1049})

# Printable ASCII runs (drawn by the fast path) and everything else.
_ASCII_RUNS = re.compile("[ -~]+|[^ -~]+")


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
        #: Rows ever pushed into history by scrolling (never decreases); the viewport uses
        #: its growth to stay on the same rows while scrolled back.
        self.history_pushed = 0
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
                self.history_pushed += 1
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
