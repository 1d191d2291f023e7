"""Every relative link in the README, the top-level guides and ``docs/`` points at a file that
exists, and every ``#anchor`` into a Markdown page names one of its headings: a newcomer who
follows a link never lands on nothing. The README's documentation list starts at the index."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")
PAGES = sorted([*(ROOT / name for name in TOP), *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to -."""
    found = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        missing = not resolved.exists()
        if missing or (anchor and resolved.suffix == ".md" and anchor not in anchors(resolved)):
            broken.append(target)
    assert broken == []


def test_the_readme_sends_readers_to_the_index_first() -> None:
    docs = (ROOT / "README.md").read_text().split("## Documentation", 1)[1]
    first = LINK.search(docs)
    assert first is not None and first[1] == "docs/index.md"
    index = (ROOT / "docs" / "index.md").read_text()
    for reader in ("agent", "CI", "MCP host", "Contributors"):
        assert reader in index
    assert "architecture.md" in index.split("## Contributors", 1)[1]
