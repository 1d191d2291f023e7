"""The facade: :class:`Terminal`, what a pane holds; fed with pty output, read by the server.

It owns one screen and one parser and turns Herdr's read sources (``visible``,
``recent``, ``recent_unwrapped``, ``detection``) into text with the renderers.

It also owns the pane's **viewport** (its scroll position), the one place the simulator
keeps it: :meth:`Terminal.scroll_metrics` is Herdr's ``PaneScrollInfo`` and
:meth:`Terminal.set_scroll_offset` is what ``pane.scroll`` does. As in libghostty
(``src/pane/terminal.rs``: ``scroll_metrics`` reads the scrollbar, total minus
offset minus length), a viewport scrolled back stays on the same rows while output grows the
history (its offset from the bottom grows), a resize keeps the offset (clamped to the new
history), the alternate screen has no history (``0/0``), and only the ``visible`` read
follows the viewport: ``recent``, ``recent_unwrapped`` and ``detection`` read the bottom
whatever the viewport shows (Herdr's ``detection_text_stays_at_bottom_when_viewport_is_scrolled``).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from ._cells import _Row, _row_text
from ._parser import _Stream
from ._render import _format_plain_unwrapped, _format_vt, _join_rows, _limit_lines
from ._screen import _Screen
from ._text import PaneText

logger = logging.getLogger(__name__)

ReadSource = Literal["visible", "recent", "recent_unwrapped", "detection"]
ReadFormat = Literal["text", "ansi"]

DEFAULT_SCROLLBACK = 10_000
DEFAULT_RECENT_LINES = 80
MAX_READ_LINES = 1000

#: Herdr sizes the detection snapshot as ``max(screen rows, 1)`` (``ghostty_detection_text``);
#: 24 is only its fallback when the size is unknown. Raise this to force a larger floor.
DETECTION_MIN_ROWS = 1


def _copy_row(row: _Row | None) -> _Row | None:
    if row is None:
        return None
    copy = _Row()
    copy.update(row)
    copy.wrapped = row.wrapped
    return copy


class ScrollMetrics(NamedTuple):
    """Herdr's ``PaneScrollInfo``: where the viewport is, in rows."""

    offset_from_bottom: int
    max_offset_from_bottom: int
    viewport_rows: int

    def view(self) -> dict[str, int]:
        """The wire dict (``PaneInfo.scroll``, ``pane.scroll_changed``'s ``scroll``)."""
        return self._asdict()


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
        #: Rows between the bottom of the main screen's viewport and the live bottom
        #: (0: at the bottom); read it through :meth:`scroll_metrics`.
        self._offset_from_bottom = 0

    # -- input ---------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Process pty output. Chunks may split escape sequences and UTF-8 characters."""
        if not data:
            return
        screen = self._screen
        pushed = screen.history_pushed
        try:
            self._stream.feed(data)
        except Exception:
            # A bug here must not kill the pane's reader; keep going with a clean parser.
            self.parse_errors += 1
            logger.exception("terminal parser error; parser state reset")
            self._stream._initialize_parser()
        if self._offset_from_bottom:
            # a viewport scrolled back stays on its rows while new ones enter history
            self._keep_offset(self._offset_from_bottom + screen.history_pushed - pushed)
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
        self._keep_offset(self._offset_from_bottom)
        self.changes += 1

    # -- the viewport ----------------------------------------------------------------

    def scroll_metrics(self) -> ScrollMetrics:
        """Herdr's ``PaneScrollInfo`` for this pane now (the alternate screen has no
        history, so ``0/0`` there)."""
        screen = self._screen
        if screen.alternate:
            return ScrollMetrics(0, 0, screen.lines)
        most = len(screen.history)
        return ScrollMetrics(min(self._offset_from_bottom, most), most, screen.lines)

    def offset_from_bottom(self) -> int:
        """``scroll_metrics().offset_from_bottom`` without building the metrics (every
        output subscription's poll compares it)."""
        screen = self._screen
        return 0 if screen.alternate else min(self._offset_from_bottom, len(screen.history))

    def set_scroll_offset(self, offset_from_bottom: int) -> ScrollMetrics:
        """Move the viewport ``offset_from_bottom`` rows up from the bottom, clamped to the
        history (``pane.scroll``); returns the metrics after the move."""
        if offset_from_bottom < 0:
            raise ValueError("offset_from_bottom must not be negative")
        if not self._screen.alternate:
            self._keep_offset(offset_from_bottom)
        return self.scroll_metrics()

    def _keep_offset(self, offset: int) -> None:
        self._offset_from_bottom = max(0, min(offset, len(self._screen.history)))

    def viewport_top_row(self) -> int:
        """The absolute row (0 = oldest history row) the viewport's first row shows
        (Herdr's ``viewport_top_row``: ``max_offset_from_bottom - offset_from_bottom``)."""
        metrics = self.scroll_metrics()
        return metrics.max_offset_from_bottom - metrics.offset_from_bottom

    def text(self) -> PaneText:
        """The active screen's rows by absolute row, history first on the main screen
        (Herdr's screen rows: what copy mode addresses); a snapshot, safe to read in a thread."""
        screen = self._screen
        history: list[_Row | None] = [] if screen.alternate else list(screen.history)
        # history rows are frozen; the screen's are copied, so the snapshot can be read
        # off the event loop while output keeps arriving
        rows = [*history, *(_copy_row(screen._rows.get(y)) for y in range(screen.lines))]
        return PaneText(rows, screen.columns)

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
            rows = self._viewport_rows()
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

    def scrollback_text(self) -> str:
        """Every row of history and screen up to the last with text, soft wraps joined
        (Herdr's ``recent_unwrapped_text_snapshot(usize::MAX)``, what ``prefix+e`` opens)."""
        screen = self._screen
        history = 0 if screen.alternate else len(screen.history)
        rows, _ = self._tail_rows(history + screen.lines)
        return _format_plain_unwrapped(rows, screen.columns)

    def _viewport_rows(self) -> list[_Row | None]:
        """The rows the viewport shows: the screen, or history rows when scrolled back."""
        screen = self._screen
        rows: list[_Row | None] = [screen._rows.get(y) for y in range(screen.lines)]
        offset = self.scroll_metrics().offset_from_bottom
        if not offset:
            return rows
        history = screen.history
        start = len(history) - offset
        older = list(itertools.islice(history, start, start + min(offset, screen.lines)))
        return [*older, *rows][: screen.lines]

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
