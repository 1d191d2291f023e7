"""docs/orchestrator/low-level-tools.md is generated from the registry and must be current."""

from __future__ import annotations

from pathlib import Path

from orchestrator.tools import docs
from orchestrator.tools.registry import TOOLS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "orchestrator" / "low-level-tools.md"


def test_the_committed_tool_table_is_current() -> None:
    assert PAGE.read_text() == docs.render(), (
        "regenerate: python -m orchestrator.tools.docs > docs/orchestrator/low-level-tools.md"
    )


def test_the_page_lists_every_tool_with_its_risk() -> None:
    text = PAGE.read_text()
    for tool in TOOLS.values():
        assert f"| `{tool.name}` | {tool.risk} |" in text
