"""A pane's text addressed by absolute rows: copy-mode selections, motions, search and URLs.

Herdr's copy mode works on the terminal's *screen rows*: row 0 is the oldest row kept in
the history, the live screen follows it, so a row number stays on its text while the
viewport scrolls (``viewport_top_row`` = ``max_offset_from_bottom - offset_from_bottom``
in ``src/app/input/copy_mode.rs``). The protocol-22 methods ``pane.selection.read``,
``pane.copy_motion``, ``pane.copy_search`` and ``pane.link.activate`` take and give
points in that system (``PaneTextPoint {row, col}``). This module reproduces, on the
simulator's rows, what Herdr does there:

* **selection text** (``ghostty_extract_selection`` → libghostty's plain formatter with
  unwrap and trim): from the first point to the last, both cells included; soft-wrapped
  rows are joined, hard rows end in ``\\n``, trailing blanks of each line are dropped.
* **word motions** (``RetainedTextBuffer::word_motion`` in ``src/pane/terminal.rs``): cells
  are atoms classed whitespace / separator (``COPY_MODE_WORD_SEPARATORS``) / word, a hard
  line end is a whitespace atom, big words split on whitespace only.
* **search** (``RetainedTextBuffer::search``): literal, over logical lines (soft wraps
  joined, trailing blanks trimmed), a match must start and end on whole cells.
* **URLs** (``url_at_column`` in ``src/app/actions.rs``): ``http://``/``https://`` runs up to
  whitespace, trailing punctuation and unbalanced closers trimmed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ._cells import _BLANK, Cell, _is_wide, _Row, _row_full

#: Herdr's ``COPY_MODE_WORD_SEPARATORS``: ASCII punctuation ends a (small) word
WORD_SEPARATORS = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~")
_WHITESPACE, _SEPARATOR, _WORD = 0, 1, 2
#: the window of rows a word motion reads first; doubled until the motion is settled
#: (Herdr's ``word_motion_target``)
_FIRST_WINDOW = 64

WordMotion = Literal[
    "next_word_start",
    "previous_word_start",
    "next_word_end",
    "next_big_word_start",
    "previous_big_word_start",
    "next_big_word_end",
]
SearchDirection = Literal["forward", "backward"]


class TextPoint(NamedTuple):
    """A cell: absolute row (0 = oldest history row) and column; ordered row first."""

    row: int
    col: int


class TextMatch(NamedTuple):
    """One search match: its first and last cell (both included)."""

    start: TextPoint
    end: TextPoint


class _Piece(NamedTuple):
    """One cell's text in a logical line: where it starts and ends in the line (chars)
    and the cells it covers."""

    first: int
    last: int
    start: TextPoint
    end: TextPoint


class _Atom(NamedTuple):
    point: TextPoint | None  # None: the hard end of a line
    end_col: int
    kind: int


def _kind(text: str) -> int:
    ch = text[:1]
    if not ch or ch.isspace():
        return _WHITESPACE
    if ch in WORD_SEPARATORS:
        return _SEPARATOR
    return _WORD


@dataclass
class PaneText:
    """The rows of a pane's active screen (history first on the main screen) at one moment."""

    rows: Sequence[_Row | None]
    cols: int

    @property
    def total_rows(self) -> int:
        return len(self.rows)

    def contains(self, point: TextPoint) -> bool:
        return 0 <= point.row < len(self.rows) and 0 <= point.col < self.cols

    # -- cells ---------------------------------------------------------------------------

    def _cells(self, row_index: int) -> list[tuple[int, int, str | None]]:
        """``(col, end_col, text)`` of each cell of a row; text None for the spacer a wide
        character left at the end of a wrapped row (no text, but a word atom)."""
        row = self.rows[row_index]
        out: list[tuple[int, int, str | None]] = []
        previous: Cell | None = None
        for col in range(self.cols):
            cell = _BLANK if row is None else row.get(col, _BLANK)
            if cell.data == "":
                if not _is_wide(previous):  # a spacer head; a tail belongs to its wide cell
                    out.append((col, col, None))
                previous = cell
                continue
            width = 2 if _is_wide(cell) and col + 1 < self.cols else 1
            out.append((col, col + width - 1, cell.data))
            previous = cell
        return out

    def _wrapped(self, row_index: int) -> bool:
        row = self.rows[row_index]
        return row is not None and row.wrapped

    # -- selection -------------------------------------------------------------------------

    def selection_text(self, anchor: TextPoint, cursor: TextPoint) -> str:
        """The text between two cells, both included, in either order (Herdr's
        ``Selection::ordered_cells`` then libghostty's plain formatter)."""
        start, end = sorted((anchor, cursor))
        lines: list[str] = []
        line: list[str] = []
        for row in range(start.row, end.row + 1):
            if start.row < row < end.row:  # a whole row
                line.append(_row_full(self.rows[row], self.cols))
            else:
                first = start.col if row == start.row else 0
                last = end.col if row == end.row else self.cols - 1
                for col, end_col, text in self._cells(row):
                    if text is not None and end_col >= first and col <= last:
                        line.append(text)
            if self._wrapped(row) and row != end.row:
                continue
            lines.append("".join(line).rstrip())
            line = []
        return "\n".join(lines)

    def row_text(self, row: int) -> str:
        """One row's text, trailing blanks trimmed (``copy_mode_visible_row_text``)."""
        return "".join(text for _, _, text in self._cells(row) if text is not None).rstrip()

    # -- motions --------------------------------------------------------------------------

    def line_end(self, point: TextPoint) -> TextPoint:
        """``$``: the last cell holding a character on the row, else column 0."""
        last = 0
        for col, _, text in self._cells(point.row):
            if text is not None and text.strip():
                last = col
        return TextPoint(point.row, min(last, self.cols - 1))

    def first_non_blank(self, point: TextPoint) -> TextPoint:
        """``^``: the first cell that is not whitespace, else column 0."""
        for col, _, text in self._cells(point.row):
            if text is not None and text.strip():
                return TextPoint(point.row, col)
        return TextPoint(point.row, 0)

    def paragraph(self, point: TextPoint, direction: int, limit: int) -> TextPoint:
        """``{``/``}``: row by row until a blank row, the edge, or ``limit`` steps
        (``copy_mode_paragraph``: it moves first, then looks)."""
        row = point.row
        for _ in range(max(1, min(limit, 1000))):
            moved = row + direction
            if not 0 <= moved < len(self.rows):
                break
            row = moved
            if not self.row_text(row).strip():
                break
        return TextPoint(row, point.col)

    def word_motion(self, point: TextPoint, motion: WordMotion) -> TextPoint | None:
        """A ``w``/``b``/``e``/``W``/``B``/``E`` target, or None where Herdr does not move.

        Like Herdr it reads a window of rows around the cursor first and doubles it while
        the target may lie beyond (a word running into rows the window does not hold)."""
        total = len(self.rows)
        if not 0 <= point.row < total:
            return None
        backward = motion.startswith("previous")
        to_end = motion.endswith("end")
        window = _FIRST_WINDOW
        while True:
            if backward:
                first, stop = max(0, point.row - window + 1), point.row + 1
            else:
                first, stop = point.row, min(total, point.row + window)
            atoms = self._atoms(first, stop)
            target = _word_target(atoms, point, motion)
            more_history = (
                backward
                and target is not None
                and target.row == first
                and first > 0
                and self._wrapped(first - 1)
            )
            more_future = (
                to_end
                and target is not None
                and stop < total
                and self._wrapped(stop - 1)
                and target == _last_point(atoms)
            )
            if target is not None and not more_history and not more_future:
                return target
            if (backward and first == 0) or (not backward and stop == total):
                return target
            window *= 2

    def _atoms(self, first: int, stop: int) -> list[_Atom]:
        atoms: list[_Atom] = []
        for row in range(first, stop):
            for col, end_col, text in self._cells(row):
                # a spacer head continues the word before it
                previous = atoms[-1].kind if atoms else _WHITESPACE
                kind = previous if text is None else _kind(text)
                atoms.append(_Atom(TextPoint(row, col), end_col, kind))
            if not self._wrapped(row):
                atoms.append(_Atom(None, 0, _WHITESPACE))
        return atoms

    # -- search ---------------------------------------------------------------------------

    def _line_spans(self, first: int, stop: int) -> list[tuple[int, int]]:
        """The logical lines in rows ``first..stop``: ``(first row, stop row)`` each, soft
        wraps joined."""
        spans: list[tuple[int, int]] = []
        start = first
        for row in range(first, stop):
            if self._wrapped(row) and row + 1 < stop:
                continue
            spans.append((start, row + 1))
            start = row + 1
        return spans

    def _line_text(self, first: int, stop: int) -> str:
        """A logical line's text, trailing blanks trimmed (rows rendered as ``pane.read``
        does, which caches history rows)."""
        return "".join(_row_full(self.rows[row], self.cols) for row in range(first, stop)).rstrip()

    def _pieces(self, first: int, stop: int, length: int) -> list[_Piece]:
        """Where each cell of a logical line sits in its text (the first ``length`` chars)."""
        pieces: list[_Piece] = []
        offset = 0
        for row in range(first, stop):
            for col, end_col, text in self._cells(row):
                if text is None:
                    continue
                if offset >= length:
                    return pieces
                pieces.append(
                    _Piece(offset, offset + len(text), TextPoint(row, col), TextPoint(row, end_col))
                )
                offset += len(text)
        return pieces

    def search(self, query: str) -> list[TextMatch]:
        """Every literal match of ``query`` in reading order; case-insensitive unless the
        query holds an uppercase letter (Herdr's smart case)."""
        if not query:
            return []
        flags = 0 if any(ch.isupper() for ch in query) else re.IGNORECASE
        pattern = re.compile(re.escape(query), flags)
        matches: list[TextMatch] = []
        for first, stop in self._line_spans(0, len(self.rows)):
            text = self._line_text(first, stop)
            if not pattern.search(text):
                continue
            pieces = self._pieces(first, stop, len(text))
            starts = {piece.first: piece for piece in pieces}
            ends = {piece.last: piece for piece in pieces}
            for found in pattern.finditer(text):
                begin, last = starts.get(found.start()), ends.get(found.end())
                if begin is not None and last is not None and found.end() > found.start():
                    matches.append(TextMatch(begin.start, last.end))
        return matches

    # -- URLs -------------------------------------------------------------------------------

    def url_at(self, point: TextPoint, first_row: int, stop_row: int) -> str | None:
        """The web URL under a cell, read in rows ``first_row..stop_row`` (the viewport:
        Herdr reads the visible text, soft wraps joined)."""
        for first, stop in self._line_spans(first_row, stop_row):
            if not first <= point.row < stop:
                continue
            text = self._line_text(first, stop)
            for piece in self._pieces(first, stop, len(text)):
                if piece.start.row == point.row and piece.start.col <= point.col <= piece.end.col:
                    return url_at_index(text, piece.first)
        return None


def _last_point(atoms: Sequence[_Atom]) -> TextPoint | None:
    return next((atom.point for atom in reversed(atoms) if atom.point is not None), None)


def _next_point(atoms: Sequence[_Atom], index: int) -> TextPoint | None:
    for atom in atoms[index:]:
        if atom.point is not None:
            return atom.point
    return None


def _previous_point(atoms: Sequence[_Atom], index: int) -> TextPoint | None:
    while 0 <= index < len(atoms):
        if atoms[index].point is not None:
            return atoms[index].point
        index -= 1
    return None


def _word_target(atoms: Sequence[_Atom], point: TextPoint, motion: WordMotion) -> TextPoint | None:
    current = next(
        (
            i
            for i, atom in enumerate(atoms)
            if atom.point is not None
            and atom.point.row == point.row
            and atom.point.col <= point.col <= atom.end_col
        ),
        None,
    )
    if current is None:
        return None
    big = "big" in motion

    def same(index: int, kind: int) -> bool:
        if not 0 <= index < len(atoms):
            return False
        if big:
            return (atoms[index].kind != _WHITESPACE) == (kind != _WHITESPACE)
        return atoms[index].kind == kind

    def blank(index: int) -> bool:
        return 0 <= index < len(atoms) and atoms[index].kind == _WHITESPACE

    if motion in ("next_word_start", "next_big_word_start"):
        kind = atoms[current].kind
        index = current + 1
        if kind != _WHITESPACE:
            while same(index, kind):
                index += 1
        while blank(index):
            index += 1
        return _next_point(atoms, index)
    if motion in ("previous_word_start", "previous_big_word_start"):
        index = current - 1
        while blank(index):
            index -= 1
        if index < 0:
            return None
        kind = atoms[index].kind
        while index > 0 and same(index - 1, kind):
            index -= 1
        return _previous_point(atoms, index)
    index = current + 1  # next_word_end / next_big_word_end
    while blank(index):
        index += 1
    if index >= len(atoms):
        return None
    kind = atoms[index].kind
    while same(index + 1, kind):
        index += 1
    return _previous_point(atoms, index)


def _url_closer_unbalanced(text: str, start: int, end: int) -> bool:
    closer = text[end]
    opener = {")": "(", "]": "[", "}": "{"}[closer]
    segment = text[start:end]
    return segment.count(opener) - segment.count(closer) <= 0


def url_at_index(text: str, index: int) -> str | None:
    """The ``http(s)://`` URL whose run covers character ``index`` of a line, trimmed like
    Herdr's ``url_spans``/``trim_url_edges``; None if there is none."""
    start = 0
    while start < len(text):
        if not text.startswith(("http://", "https://"), start):
            start += 1
            continue
        end = start
        while end + 1 < len(text) and not text[end + 1].isspace():
            end += 1
        stop = end
        while stop >= start and (
            text[stop] in "\"'`.,;:!?"
            or (text[stop] in ")]}" and _url_closer_unbalanced(text, start, stop))
        ):
            stop -= 1
        if start <= index <= stop and stop >= start:
            url = text[start : stop + 1]
            return url if url.startswith(("http://", "https://")) else None
        start = end + 1
    return None
