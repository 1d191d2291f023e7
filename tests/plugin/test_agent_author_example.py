"""The agent author's worked example (docs/pytest-plugin/agent-author.md) with a bug put in
on purpose: the suite fails for that bug, and its failure output says so in its first line
(issue 14's acceptance; its wall time is measured by bench/agent_author_example.py, and the
healthy example runs from a pip-only install in tests/e2e/test_new_project.py).

Also: ``--herdr-time-scale`` reaches the integration check's simulators like every other
simulator of the test (it did not: the check ran at Herdr's real timers)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

EXAMPLE = (
    Path(__file__).resolve().parents[2] / "docs" / "pytest-plugin" / "examples" / "agent-author"
)
RELEASE = "            herdr.release()  # release the pane only when the user really exits\n"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def inject(project: Path, line: str, replacement: str) -> None:
    """Replace ``line`` of the example agent (which must have it) by ``replacement``."""
    agent = project / "bin" / "my-agent"
    text = agent.read_text()
    assert text.count(line) == 1, "the example agent changed: update the injected bug"
    agent.write_text(text.replace(line, replacement))


def copy_example(pytester: pytest.Pytester) -> Path:
    shutil.copytree(EXAMPLE, pytester.path, dirs_exist_ok=True)
    return pytester.path


def test_an_agent_that_never_releases_fails_first_for_the_missing_release(
    pytester: pytest.Pytester,
) -> None:
    """Slow because it runs the example's whole suite in a pytest subprocess: the integration
    check drives the example agent through every rule, three more tests start it on their own
    simulators.
    """
    project = copy_example(pytester)
    inject(project, RELEASE, "            pass  # the bug: the pane is never released\n")
    artifacts = project / "artifacts"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", f"--herdr-artifacts={artifacts}"
    )
    result.assert_outcomes(passed=11, failed=2)
    lines = result.outlines
    header = next(i for i, line in enumerate(lines) if line.startswith("=") and "FAILURES" in line)
    # the first failure: its title, then its first line names the bug
    assert "test_herdr_integration[release]" in lines[header + 1]
    assert lines[header + 2] == "FAIL release: no release when the agent exited"
    # the request-log test names the same bug, and what released the pane instead
    first_error = next(line for line in lines if line.startswith("E "))
    assert "no pane.release_agent request from 'my-agent'" in first_error
    assert "released by safety-net" in first_error
    # the HTML index's row of the failed rule shows its FAIL line, as a fixture test's row
    # shows its assertion (not the check's closing "(check of … in 5.8s)")
    [row] = [
        line
        for line in (artifacts / "index.html").read_text().splitlines()
        if "test_herdr_integration[release]" in line
    ]
    assert row.endswith("<td>FAIL release: no release when the agent exited</td></tr>"), row
    failed = [line for line in lines if line.startswith("FAILED ")]
    assert failed[0].startswith("FAILED test_integration.py::test_herdr_integration[release] ")
    assert failed[1].startswith(
        "FAILED test_my_agent.py::test_a_turn_is_reported_and_the_exit_releases "
    )


def test_the_time_scale_reaches_the_integration_checks_simulators(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    seen = tmp_path / "scale.txt"
    agent = (
        f"import os; open({str(seen)!r}, 'a').write(os.environ.get('HERDR_SIM_TIME_SCALE', '1'))"
    )
    pytester.makepyfile(
        f"""
        import pytest, sys

        AGENT = [sys.executable, "-c", {agent!r}]

        @pytest.mark.herdr_integration(AGENT, rules=["states"], timeout=2)
        def test_check(herdr_integration_rule):
            herdr_integration_rule.check()
        """
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--herdr-time-scale", "0.1"
    )
    result.assert_outcomes(failed=1)  # the agent never reports: that is not what is tested
    assert seen.read_text() == "0.1"


def test_the_pages_code_is_the_example_projects() -> None:
    """agent-author.md quotes the project rather than running its blocks: each quoted
    block must be in the project's files as written, so the page cannot drift from what runs."""
    page = (EXAMPLE.parents[1] / "agent-author.md").read_text()
    blocks = re.findall(r"```(?:python|ini)\n(.*?)```", page, re.DOTALL)
    sources = "\n".join(path.read_text() for path in EXAMPLE.iterdir() if path.is_file())
    assert len(blocks) >= 4
    for block in blocks:
        assert block.strip() in sources, block
