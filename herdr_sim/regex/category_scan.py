"""Every code point's Unicode general category, as runs: the scan, and the tables made of it.

Why tables: the scan asks :func:`unicodedata.category` for all 1,114,112 code points, 0.1 to
0.15 s of CPU, and every simulator process paid it at start (the built-in detection
manifests use ``\\w``, which the translator spells out as ranges). The runs depend only on
Python's Unicode version, so they are shipped, one table per version
(``category_runs/<unidata_version>.txt``), and the scan runs only where no table matches.

A table is made by the Python whose version it holds, with nothing but the standard
library (so any installed Python can make one)::

    python3.12 herdr_sim/regex/category_scan.py herdr_sim/regex/category_runs

One line per run: its first code point in hex and its category; a run ends where the next
begins, the last one at U+10FFFF.
"""

from __future__ import annotations

import itertools
import sys
import unicodedata
from pathlib import Path

__all__ = ["TABLES", "parse", "read_table", "scan", "table_text"]

#: Where the shipped tables are.
TABLES = Path(__file__).with_name("category_runs")

Runs = tuple[tuple[int, int, str], ...]


def scan() -> Runs:
    """The runs of this Python's Unicode database: (first, last, category), in order."""
    category = unicodedata.category
    runs: list[tuple[int, int, str]] = []
    previous, start = category("\x00"), 0
    for cp in range(1, sys.maxunicode + 1):
        current = category(chr(cp))
        if current != previous:
            runs.append((start, cp - 1, previous))
            previous, start = current, cp
    runs.append((start, sys.maxunicode, previous))
    return tuple(runs)


def table_text(runs: Runs) -> str:
    """The table of ``runs`` (the module docstring's format)."""
    return "".join(f"{first:X} {category}\n" for first, _, category in runs)


def parse(text: str) -> Runs:
    """The runs of a table; ValueError when it is not one (unordered, not from U+0000)."""
    starts: list[int] = []
    categories: list[str] = []
    for line in text.splitlines():
        first, category = line.split(" ")
        starts.append(int(first, 16))
        categories.append(category)
    if not starts or starts[0] != 0 or any(a >= b for a, b in itertools.pairwise(starts)):
        raise ValueError("not a table of category runs")
    ends = [*(start - 1 for start in starts[1:]), sys.maxunicode]
    return tuple(zip(starts, ends, categories, strict=True))


def read_table(version: str, directory: Path = TABLES) -> Runs | None:
    """The shipped runs of Unicode ``version``; None when there is no table for it."""
    try:
        text = (directory / f"{version}.txt").read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    return parse(text)


def main(argv: list[str]) -> int:
    """Write this Python's table into the directory given."""
    if len(argv) != 1:
        print("usage: category_scan.py DIRECTORY", file=sys.stderr)
        return 2
    path = Path(argv[0]) / f"{unicodedata.unidata_version}.txt"
    path.write_text(table_text(scan()), encoding="ascii")
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
