"""The pytest plugin's cost: ``herdr_server`` with one pane per test, and a suite of small tests.

Two runs of pytest in fresh interpreters (``sys.executable -m pytest``), each on a generated
test directory:

1. ``N`` tests that take ``herdr_pane`` (a fresh simulator, its event recorder, a workspace
   and its shell) and ``N`` empty tests. A conftest hook collects each test's setup and
   teardown durations from pytest's own reports; the row is the median setup + teardown of
   the fixture tests, against the same median of the empty tests (pytest's own floor).
2. A suite of 100 small tests, each running one command in its pane and waiting for the
   output, against a suite of 100 empty tests: wall time of the whole pytest run, and the
   cost per test beyond the empty suite.

Target (issue 4): fixture setup + teardown under 150 ms per test (median).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit
from benchkit import Result, median, ms

TARGET = 0.150

COLLECTOR = """
import json, os
DURATIONS = {}

def pytest_runtest_logreport(report):
    if report.when in ("setup", "teardown"):
        DURATIONS[report.nodeid] = DURATIONS.get(report.nodeid, 0.0) + report.duration

def pytest_sessionfinish(session):
    with open(os.environ["BENCH_DURATIONS"], "w") as handle:
        json.dump(DURATIONS, handle)
"""


def _tests(count: int, body: str, fixtures: str = "") -> str:
    return "".join(f"def test_{n}({fixtures}):\n    {body.format(n=n)}\n\n" for n in range(count))


def _pytest(directory: Path, *files: str, durations: Path | None = None) -> float:
    """Run pytest on ``files`` in ``directory``; its wall time (the run must pass)."""
    env = benchkit.clean_env(BENCH_DURATIONS=str(durations or directory / "unused.json"))
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
        cwd=directory, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"pytest failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return wall


def run(args: argparse.Namespace) -> list[Result]:
    """Measure both rows."""
    count = 10 if args.quick else 40
    suite = 30 if args.quick else 100
    with tempfile.TemporaryDirectory(prefix="bench-plugin-") as name:
        directory = Path(name)
        (directory / "conftest.py").write_text(COLLECTOR)
        (directory / "test_fixture.py").write_text(_tests(count, "pass", "herdr_pane"))
        (directory / "test_empty.py").write_text(_tests(count, "pass"))
        durations = directory / "durations.json"
        _pytest(directory, "test_fixture.py", "test_empty.py", durations=durations)
        measured: dict[str, float] = json.loads(durations.read_text())
        fixture = [v for k, v in measured.items() if k.startswith("test_fixture.py")]
        empty = [v for k, v in measured.items() if k.startswith("test_empty.py")]

        (directory / "test_suite.py").write_text(
            _tests(
                suite,
                'herdr_pane.run("echo n{n}"); herdr_pane.wait_for(regex="^n{n}$")',
                "herdr_pane",
            )
        )
        (directory / "test_empty_suite.py").write_text(_tests(suite, "pass"))
        suite_wall = _pytest(directory, "test_suite.py")
        empty_wall = _pytest(directory, "test_empty_suite.py")
    fixture_p50, empty_p50 = median(fixture), median(empty)
    per_test = (suite_wall - empty_wall) / suite
    return [
        Result(
            name="herdr_pane setup + teardown (fresh simulator, one pane)",
            value=fixture_p50 * 1e3,
            unit="ms",
            baseline_name="empty test setup + teardown",
            baseline_value=empty_p50 * 1e3,
            ratio=fixture_p50 / max(empty_p50, 1e-6),
            target=f"median < {TARGET * 1e3:g} ms",
            passed=fixture_p50 < TARGET,
            details={"max": ms(max(fixture)), "tests": str(len(fixture))},
        ),
        Result(
            name=f"suite of {suite} small pane tests (wall)",
            value=suite_wall * 1e3,
            unit="ms",
            baseline_name=f"suite of {suite} empty tests",
            baseline_value=empty_wall * 1e3,
            ratio=suite_wall / empty_wall,
            target="informational",
            passed=None,
            details={"per test beyond empty": ms(per_test)},
        ),
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
