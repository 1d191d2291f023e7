"""What users and models read names things by what they are, never by this project's history:
no "issue N" or "seed 00N" in the README, the user-facing docs (the contributor pages may cite
history), the changelog, the MCP server's instructions or any tool's description. History has
its place in ``CHANGELOG.md``'s prose and the commit log."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orchestrator.core.tool import Tool
from orchestrator.mcp_server import INSTRUCTIONS
from orchestrator.pipeline.registry import ALL_TOOLS

ROOT = Path(__file__).resolve().parents[1]
HISTORY = re.compile(r"\b(issues? \d+|seeds? 00\d|seeds? \d{3}/\d{3})\b", re.IGNORECASE)
#: pages for the project's own developers, where history is a fair citation
CONTRIBUTOR_PAGES = {"docs/architecture.md", "docs/testing.md", "docs/benchmarks.md"}


def user_pages() -> list[Path]:
    pages = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in pages if p.relative_to(ROOT).as_posix() not in CONTRIBUTOR_PAGES]


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_user_docs_cite_no_internal_history(page: Path) -> None:
    found = [
        f"{number}: {line.strip()[:120]}"
        for number, line in enumerate(page.read_text().splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert found == []


def test_the_mcp_instructions_cite_no_internal_history() -> None:
    assert HISTORY.findall(INSTRUCTIONS) == []


@pytest.mark.parametrize("tool", list(ALL_TOOLS.values()), ids=lambda tool: tool.name)
def test_tool_descriptions_cite_no_internal_history(tool: Tool) -> None:
    # the description and every description inside the input schema, as a host lists them
    text = json.dumps({"description": tool.description, "schema": tool.input_schema})
    assert HISTORY.findall(text) == []
