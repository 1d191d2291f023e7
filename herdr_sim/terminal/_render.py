"""Rows to text as Herdr renders a read: its ``lines_to_text`` and libghostty's plain and
VT (``ansi``) formatters, and the ``lines`` limit.

Pure functions over rows, shared by every read source of :class:`Terminal`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from ._cells import _PLAIN_STYLE, _Row, _row_full, _row_text, _Style


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
