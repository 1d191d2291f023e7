"""The shipped tables of Unicode category runs (herdr_sim/regex/category_scan.py) say what a
scan of every code point says, and the translator uses them."""

from __future__ import annotations

import itertools
import re
import unicodedata
from pathlib import Path

import pytest

from herdr_sim.regex import category_scan, unicode_sets
from herdr_sim.regex.category_scan import TABLES, parse, read_table, scan, table_text

CATEGORIES = {
    "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
    "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
    "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
}  # fmt: skip


def test_this_pythons_table_is_shipped_and_equals_a_scan() -> None:
    shipped = read_table(unicodedata.unidata_version)
    assert shipped is not None, f"no table for Unicode {unicodedata.unidata_version}"
    assert shipped == scan()


def test_the_translator_reads_the_table_and_scans_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_scan() -> None:
        raise AssertionError("scanned every code point although a table is shipped")

    monkeypatch.setattr(unicode_sets, "scan", no_scan)
    assert unicode_sets._category_runs.__wrapped__() == read_table(unicodedata.unidata_version)


@pytest.mark.parametrize("path", sorted(TABLES.glob("*")), ids=lambda path: path.name)
def test_each_shipped_table_is_a_whole_table_named_for_its_version(path: Path) -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+\.txt", path.name)
    runs = parse(path.read_text(encoding="ascii"))
    assert runs[0][0] == 0 and runs[-1][1] == 0x10FFFF
    assert all(last + 1 == first for (_, last, _), (first, _, _) in itertools.pairwise(runs))
    assert all(a[2] != b[2] for a, b in itertools.pairwise(runs))  # runs, not split ones
    assert {category for _, _, category in runs} <= CATEGORIES
    assert table_text(runs) == path.read_text(encoding="ascii")


def test_without_a_table_the_code_points_are_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unicode_sets, "read_table", lambda version: None)
    assert unicode_sets._category_runs.__wrapped__() == scan()


@pytest.mark.parametrize(
    "text", ["", "1 Cc\n", "0 Cc\n20 Zs\n20 Po\n", "0 Cc\n21 Po\n20 Zs\n"],
    ids=["empty", "not from zero", "a start twice", "unordered"],
)  # fmt: skip
def test_a_table_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a table of category runs"):
        parse(text)


def test_the_maker_writes_this_pythons_table(tmp_path: Path) -> None:
    assert category_scan.main([str(tmp_path)]) == 0
    written = tmp_path / f"{unicodedata.unidata_version}.txt"
    assert written.read_text(encoding="ascii") == (TABLES / written.name).read_text("ascii")
    assert category_scan.main([]) == 2
