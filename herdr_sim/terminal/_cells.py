"""Cells and rows: what one screen position holds, and a row as text.

Rows are sparse (column -> :class:`Cell`) and carry libghostty's soft-wrap flag; rows
that went into history are frozen, so their text is cached.
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from pyte.screens import StaticDefaultDict, wcwidth


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
