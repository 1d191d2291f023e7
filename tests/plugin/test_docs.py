"""Every Python example in docs/pytest-plugin/ and the README runs as written.

A block that defines tests runs as a test module under pytester (the plugin autoloaded, no
conftest); a block headed ``# conftest.py`` runs as a conftest under a probe test; any other
block runs as a script. A block preceded by ``<!-- not run: reason -->`` is a sketch and
says why it is not run.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pytest-plugin"
BLOCK = re.compile(
    r"(?:<!-- not run: (?P<skip>[^>]*) -->\n)?```python\n(?P<code>.*?)```", re.DOTALL
)

pytestmark = pytest.mark.slow


def blocks() -> list[pytest.ParameterSet]:
    """(doc, index, code) for every Python block of the plugin docs."""
    found = []
    for doc in [
        *sorted(DOCS.glob("*.md")),
        DOCS.parents[1] / "README.md",
        DOCS.parent / "orchestrator" / "agent-tools.md",
    ]:
        for index, match in enumerate(BLOCK.finditer(doc.read_text()), start=1):
            marks = [pytest.mark.skip(reason=match["skip"])] if match["skip"] else []
            found.append(pytest.param(match["code"], id=f"{doc.name}-{index}", marks=marks))
    return found


def test_the_docs_have_examples() -> None:
    assert len(blocks()) >= 8


@pytest.mark.parametrize("code", blocks())
def test_example_runs(code: str, pytester: pytest.Pytester) -> None:
    if "\ndef test_" in f"\n{code}":
        pytester.makepyfile(test_example=code)
        result = pytester.runpytest("-p", "no:cacheprovider", "--herdr-settle-ms=50")
        assert result.ret == 0, result.stdout.str()[-3000:]
    elif code.startswith("# conftest.py"):
        pytester.makeconftest(code)
        pytester.makepyfile(
            test_probe="def test_probe(herdr_server):\n    assert herdr_server.sim is not None\n"
        )
        result = pytester.runpytest("-p", "no:cacheprovider")
        result.assert_outcomes(passed=1)
    else:
        script = pytester.path / "example.py"
        script.write_text(code)
        done = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr[-3000:]


README = DOCS.parents[1] / "README.md"


def test_the_readme_links_the_agent_authors_guide() -> None:
    assert "](docs/pytest-plugin/agent-author.md)" in README.read_text()


def test_the_readme_shows_both_calling_conventions_side_by_side() -> None:
    """The module function takes ``(socket_path, method, params)``, the fixture's client
    ``(method, **params)``: the README shows the embedded example's calls both ways (both
    blocks run above), so a reader of one is not surprised by the other."""
    code = [match["code"] for match in BLOCK.finditer(README.read_text())]
    embedded = next(c for c in code if "from herdr_sim.client import call" in c)
    fixture = next(c for c in code if "herdr_client.call(" in c)
    methods = re.compile(r'"(workspace\.create|pane\.send_input|pane\.wait_for_output)"')
    assert (
        methods.findall(embedded)
        == methods.findall(fixture)
        == [
            "workspace.create",
            "pane.send_input",
            "pane.wait_for_output",
        ]
    )
    assert 'call(sim.socket_path, "workspace.create", {' in embedded
    assert 'herdr_client.call("workspace.create", label=' in fixture
