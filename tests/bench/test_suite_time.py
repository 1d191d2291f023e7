"""``bench/suite_time.py`` judges a JUnit report: a test over 5 s must say why it is slow.

The script runs on a small hand-written report and a small source tree (never the real
suite): the slow test whose docstring (or class docstring) says "slow because" passes,
one without it, or whose source cannot be found, fails the row, and the ten slowest are
printed slowest first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "suite_time.py"
MARKER = "BENCH-JSON "

SOURCE = '''
def test_quick():
    """Fast."""


def test_explained():
    """Starts a real agent: slow because the agent boots for 6 s."""


def test_silent():
    """No reason given."""


class TestGroup:
    """Slow because every test here builds a fleet."""

    def test_in_class(self):
        pass
'''


def _report(cases: list[tuple[str, str, float]]) -> str:
    rows = "".join(f'<testcase classname="{c}" name="{n}" time="{t}"/>' for c, n, t in cases)
    return (
        '<?xml version="1.0" encoding="utf-8"?><testsuites>'
        f'<testsuite name="pytest" tests="{len(cases)}" time="42.5">{rows}</testsuite>'
        "</testsuites>"
    )


def _judge(tmp_path: Path, cases: list[tuple[str, str, float]]) -> tuple[int, dict[str, Any]]:
    pkg = tmp_path / "src" / "tests" / "demo"
    pkg.mkdir(parents=True)
    (pkg / "test_demo.py").write_text(SOURCE)
    junit = tmp_path / "junit.xml"
    junit.write_text(_report(cases))
    argv = [sys.executable, str(SCRIPT), "--json", "--junit", str(junit)]
    done = subprocess.run(
        [*argv, "--root", str(tmp_path / "src")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith(MARKER))
    [row] = json.loads(line[len(MARKER) :])
    assert isinstance(row, dict)
    return done.returncode, row


def test_explained_slow_tests_pass(tmp_path: Path) -> None:
    module = "tests.demo.test_demo"
    code, row = _judge(
        tmp_path,
        [
            (module, "test_quick", 0.01),
            (module, "test_explained[one]", 6.5),
            (f"{module}.TestGroup", "test_in_class", 7.25),
            (module, "test_silent", 4.99),
        ],
    )
    assert code == 0 and row["passed"] is True
    assert row["value"] == 42.5  # the report's wall time
    assert row["baseline_value"] == pytest.approx(18.75)
    details = row["details"]
    assert details["slowest 1"].startswith("7.25 s") and details["slowest 1"].endswith(
        "TestGroup::test_in_class"
    )
    assert details["slowest 2"].startswith("6.50 s")
    assert not any(key.startswith("UNEXPLAINED") for key in details)


def test_an_unexplained_slow_test_fails_the_row(tmp_path: Path) -> None:
    module = "tests.demo.test_demo"
    code, row = _judge(
        tmp_path,
        [
            (module, "test_silent", 5.5),
            ("tests.demo.test_gone", "test_moved", 9.0),
            (module, "test_explained", 6.0),
        ],
    )
    assert code == 1 and row["passed"] is False
    unexplained = {k: v for k, v in row["details"].items() if k.startswith("UNEXPLAINED")}
    assert unexplained == {
        f"UNEXPLAINED {module}::test_silent": "5.50 s, no 'slow because' in its docstring",
        "UNEXPLAINED tests.demo.test_gone::test_moved": "9.00 s, its source was not found",
    }
