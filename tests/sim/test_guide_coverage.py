"""Keep the integration-guide audit honest: every test that
``docs/simulator/integration-guide.md`` names must exist, and every row must name a test or
say plainly that the behaviour is not simulated."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "simulator" / "integration-guide.md"
GUIDE_TESTS = "tests/contract/test_integration_guide.py"
NODE_ID = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
ROW_ID = re.compile(r"^(G|R)(\d+)$")


@dataclass(frozen=True)
class Row:
    """One behaviour row of the audit table."""

    id: str
    text: str
    nodes: tuple[tuple[str, str], ...]


def cells(line: str) -> list[str]:
    """The cells of a Markdown table line (``\\|`` inside a cell is not a separator)."""
    parts = re.split(r"(?<!\\)\|", line.strip())
    return [part.strip() for part in parts[1:-1]]


@cache
def rows() -> tuple[Row, ...]:
    """Every table row whose first cell is an id such as ``G7`` or ``R12``."""
    found: list[Row] = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        row = cells(line)
        if not row or not ROW_ID.match(row[0]):
            continue
        nodes = tuple((m.group(1), m.group(2)) for m in NODE_ID.finditer(line))
        found.append(Row(row[0], line, nodes))
    return tuple(found)


@cache
def defined_tests(path: str) -> frozenset[str]:
    """The names of the test functions defined in a test file (parsed, not imported)."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=path)
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    )


def test_the_table_has_rows() -> None:
    assert len(rows()) >= 30


def test_row_ids_are_unique() -> None:
    ids = [row.id for row in rows()]
    assert len(ids) == len(set(ids))


def test_guide_rows_are_numbered_without_gaps() -> None:
    numbers = [int(row.id[1:]) for row in rows() if row.id.startswith("G")]
    assert numbers == list(range(1, len(numbers) + 1))


def test_checklist_items_11_to_20_all_have_a_row() -> None:
    assert sorted(int(row.id[1:]) for row in rows() if row.id.startswith("R")) == list(
        range(11, 21)
    )


@pytest.mark.parametrize("row", rows(), ids=lambda row: row.id)
def test_every_row_is_tested_or_says_not_simulated(row: Row) -> None:
    assert row.nodes or "not simulated" in row.text.lower(), row.id


@pytest.mark.parametrize("row", rows(), ids=lambda row: row.id)
def test_every_named_test_exists(row: Row) -> None:
    missing = [
        f"{path}::{name}"
        for path, name in row.nodes
        if not (ROOT / path).is_file() or name not in defined_tests(path)
    ]
    assert missing == [], f"{row.id} names tests that do not exist"


def test_every_gap_test_is_cited_by_a_row() -> None:
    cited = {name for row in rows() for path, name in row.nodes if path == GUIDE_TESTS}
    assert sorted(defined_tests(GUIDE_TESTS) - cited) == []


def test_user_docs_link_herdrs_published_guide_not_a_local_copy() -> None:
    """A user has no ``../shared`` beside the project: the docs link Herdr's published guide
    and the audit summarises its rules in our own words."""
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    citing = [str(path.relative_to(ROOT)) for path in docs if "shared/seeds" in path.read_text()]
    assert citing == []
    guide = "https://herdr.dev/docs/integrations/#integrate-your-own-agent"
    text = DOC.read_text()
    assert guide in text
    assert guide in (ROOT / "docs" / "pytest-plugin" / "agent-author.md").read_text()
    summary = text[: text.index("## Behaviours")]
    for rule in ("HERDR_BIN_PATH", "pane report-agent", "--seq", "release-agent", "64 arguments"):
        assert rule in summary, rule
