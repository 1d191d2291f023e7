"""docs/orchestrator/low-level-tools.md is generated from the registry and must be current."""

from __future__ import annotations

from pathlib import Path

from orchestrator.pipeline.registry import TOOLS
from orchestrator.tools import docs

PAGE = Path(__file__).resolve().parents[2] / "docs" / "orchestrator" / "low-level-tools.md"


def test_the_committed_tool_table_is_current() -> None:
    assert PAGE.read_text() == docs.render(), (
        "regenerate: python -m orchestrator.tools.docs > docs/orchestrator/low-level-tools.md"
    )


def test_the_page_lists_every_tool_with_its_risk() -> None:
    text = PAGE.read_text()
    for tool in TOOLS.values():
        assert f"| `{tool.name}` | {tool.risk} |" in text


AGENT_PAGE = PAGE.with_name("agent-tools.md")


def test_the_agent_tools_table_shows_each_tools_risk_and_mcp_hints() -> None:
    from orchestrator.agent_tools.tools import AGENT_TOOLS
    from orchestrator.tools.hints import hint_names

    text = AGENT_PAGE.read_text()
    for tool in AGENT_TOOLS.values():
        hints = ", ".join(f"`{name}`" for name in hint_names(tool))
        assert f"[`{tool.name}`](#{tool.name}) | {tool.risk} | {hints} |" in text, tool.name


def test_the_low_level_page_shows_the_hints_a_host_sees() -> None:
    text = PAGE.read_text()
    assert "| `_dsh_herdr_pane_run` | R2 | `destructiveHint`, `openWorldHint` |" in text
    assert "| `_dsh_herdr_pane_list` | R0 | `readOnlyHint`, `idempotentHint` |" in text
