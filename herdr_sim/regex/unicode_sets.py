"""Code-point sets for the Unicode classes Rust's ``regex`` has and RE2 lacks or reads as ASCII.

RE2's ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII-only and it knows only general categories
and scripts as ``\\p{…}``; Rust's are Unicode by default and it also knows long category names
and boolean properties (``Alphabetic``, ``White_Space``). The translator spells those out as
explicit ranges built here from Python's :mod:`unicodedata` (so the Unicode version is
Python's, not the crate's; ``Alphabetic`` is approximated as ``L*`` and ``Nl``).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable
from functools import cache

from orchestrator.client.protocol import RUST_WHITESPACE

from .category_scan import read_table, scan

__all__ = [
    "Ranges",
    "category_ranges",
    "class_body",
    "complement",
    "property_ranges",
    "white_space_ranges",
    "word_ranges",
]

#: Inclusive code-point ranges, sorted and disjoint.
Ranges = tuple[tuple[int, int], ...]

_GENERAL_CATEGORY_NAMES: dict[str, tuple[str, ...]] = {
    "letter": ("L",),
    "casedletter": ("Lu", "Ll", "Lt"),
    "uppercaseletter": ("Lu",),
    "lowercaseletter": ("Ll",),
    "titlecaseletter": ("Lt",),
    "modifierletter": ("Lm",),
    "otherletter": ("Lo",),
    "mark": ("M",),
    "combiningmark": ("M",),
    "nonspacingmark": ("Mn",),
    "spacingmark": ("Mc",),
    "enclosingmark": ("Me",),
    "number": ("N",),
    "decimalnumber": ("Nd",),
    "digit": ("Nd",),
    "letternumber": ("Nl",),
    "othernumber": ("No",),
    "punctuation": ("P",),
    "connectorpunctuation": ("Pc",),
    "dashpunctuation": ("Pd",),
    "openpunctuation": ("Ps",),
    "closepunctuation": ("Pe",),
    "initialpunctuation": ("Pi",),
    "finalpunctuation": ("Pf",),
    "otherpunctuation": ("Po",),
    "symbol": ("S",),
    "mathsymbol": ("Sm",),
    "currencysymbol": ("Sc",),
    "modifiersymbol": ("Sk",),
    "othersymbol": ("So",),
    "separator": ("Z",),
    "spaceseparator": ("Zs",),
    "lineseparator": ("Zl",),
    "paragraphseparator": ("Zp",),
    "other": ("C",),
    "control": ("Cc",),
    "format": ("Cf",),
    "privateuse": ("Co",),
    "unassigned": ("Cn",),
    "alphabetic": ("L", "Nl"),
    "alpha": ("L", "Nl"),
}

_SHORT_CATEGORIES = frozenset(
    {
        "L", "M", "N", "P", "S", "Z", "C", "LC",
        "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
        "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
        "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
    }
)  # fmt: skip

_MAX = sys.maxunicode


@cache
def _category_runs() -> tuple[tuple[int, int, str], ...]:
    """Every code point's general category as runs: the shipped table of this Python's
    Unicode version, else a scan of every code point (:mod:`.category_scan` says why)."""
    shipped = read_table(unicodedata.unidata_version)
    return shipped if shipped is not None else scan()


@cache
def category_ranges(categories: tuple[str, ...]) -> Ranges:
    """Every code point whose general category starts with one of ``categories``
    (surrogates never: they are not scalar values)."""
    return _union(
        (low, high)
        for low, high, category in _category_runs()
        if category != "Cs" and category.startswith(categories)
    )


@cache
def white_space_ranges() -> Ranges:
    """Unicode ``White_Space`` (Rust's ``\\s``)."""
    return _union(tuple((ord(char), ord(char)) for char in sorted(RUST_WHITESPACE)))


@cache
def word_ranges() -> Ranges:
    """Rust's Unicode ``\\w``: Alphabetic, marks, decimal digits, connector punctuation,
    and Join_Control (U+200C..U+200D)."""
    return _union((*category_ranges(("L", "Nl", "M", "Nd", "Pc")), (0x200C, 0x200D)))


def _union(ranges: Iterable[tuple[int, int]]) -> Ranges:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


def complement(ranges: Ranges) -> Ranges:
    """Every scalar value not in ``ranges`` (surrogates excluded)."""
    result: list[tuple[int, int]] = []
    start = 0
    for low, high in _union((*ranges, (0xD800, 0xDFFF))):
        if low > start:
            result.append((start, low - 1))
        start = high + 1
    if start <= _MAX:
        result.append((start, _MAX))
    return tuple(result)


def _hex(cp: int) -> str:
    return f"\\x{{{cp:X}}}"


def class_body(ranges: Ranges) -> str:
    """RE2 class body (no brackets) for ``ranges``."""
    return "".join(
        _hex(low) if low == high else f"{_hex(low)}-{_hex(high)}" for low, high in ranges
    )


def property_ranges(name: str) -> Ranges | None:
    """Ranges for a ``\\p{name}`` Rust knows and RE2 lacks; None for anything else
    (a script name, say, which RE2 knows itself)."""
    loose = re.sub(r"[\s_\-]", "", name).lower()
    if loose in ("whitespace", "wspace", "space"):
        return white_space_ranges()
    if loose == "any":
        return ((0, 0xD7FF), (0xE000, _MAX))
    if loose == "ascii":
        return ((0, 0x7F),)
    for category in _SHORT_CATEGORIES:
        if loose == category.lower():
            return category_ranges(("Lu", "Ll", "Lt") if category == "LC" else (category,))
    categories = _GENERAL_CATEGORY_NAMES.get(loose)
    return None if categories is None else category_ranges(categories)
