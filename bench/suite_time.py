"""The project's own suite: wall time of ``pytest -n 2``, its ten slowest tests, and why.

``.venv/bin/python bench/suite_time.py`` runs ``sys.executable -m pytest -n 2`` in the
repository with a JUnit XML report in a private directory and times it; ``--junit PATH``
reads a report an earlier run wrote instead (nothing is run, and the wall time is the
report's own). It prints the wall time, the ten slowest tests (setup + call + teardown, as
the report counts them) and every test over :data:`SLOW_SECONDS` whose docstring does not
say why it is slow: the house rule is that such a test's docstring (or its class's)
contains :data:`SLOW_MARKER`, e.g. "slow because it starts the real pi twice". The row
FAILs when one does not. Its baseline is the summed test time (what one worker would
take), so the RATIO is the share of that the parallel run needed. Not part of
``run_all.py`` unless asked (``--suite``): it runs the whole suite.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import benchkit
from benchkit import Result

ROOT = Path(__file__).resolve().parents[1]
#: a test that takes longer than this (seconds) must say why in its docstring
SLOW_SECONDS = 5.0
#: the words that say why (case-insensitive, anywhere in the test's or its class's docstring)
SLOW_MARKER = "slow because"
SHOWN = 10


@dataclass(frozen=True)
class Case:
    """One test of a JUnit report."""

    classname: str  # dotted module path, then any classes: tests.sim.test_pty.TestRead
    name: str  # the test's name with its parameters: test_read[visible]
    seconds: float

    @property
    def nodeid(self) -> str:
        """A readable id (module path, classes, name)."""
        return f"{self.classname}::{self.name}"


def read_junit(path: Path) -> tuple[list[Case], float]:
    """The test cases of a JUnit XML report and the run's wall time (its ``time``)."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    cases = [
        Case(case.get("classname", ""), case.get("name", ""), float(case.get("time", "0")))
        for suite in suites
        for case in suite.iter("testcase")
    ]
    return cases, max((float(suite.get("time", "0")) for suite in suites), default=0.0)


def docstrings(case: Case, root: Path) -> list[str] | None:
    """The docstrings of ``case``'s function and its classes (None: its source not found).

    The module is the longest prefix of the dotted ``classname`` that names a file under
    ``root``; the rest are classes. The source is parsed, never imported.
    """
    parts = case.classname.split(".")
    for cut in range(len(parts), 0, -1):
        path = root.joinpath(*parts[:cut]).with_suffix(".py")
        if path.is_file():
            classes, module = parts[cut:], ast.parse(path.read_text(encoding="utf-8"))
            break
    else:
        return None
    found: list[str] = []
    scope: list[ast.stmt] = module.body
    for name in classes:
        cls = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == name), None)
        if cls is None:
            return None
        found.append(ast.get_docstring(cls) or "")
        scope = cls.body
    function = case.name.split("[", 1)[0]
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    node = next((n for n in scope if isinstance(n, defs) and n.name == function), None)
    if node is None:
        return None
    return [ast.get_docstring(node) or "", *found]


def unexplained(cases: list[Case], root: Path) -> list[tuple[Case, str]]:
    """Tests over :data:`SLOW_SECONDS` whose docstrings lack :data:`SLOW_MARKER`, and why."""
    missing: list[tuple[Case, str]] = []
    for case in cases:
        if case.seconds <= SLOW_SECONDS:
            continue
        texts = docstrings(case, root)
        if texts is None:
            missing.append((case, "its source was not found"))
        elif not any(SLOW_MARKER in text.lower() for text in texts):
            missing.append((case, f"no {SLOW_MARKER!r} in its docstring"))
    return sorted(missing, key=lambda item: -item[0].seconds)


def run_suite(workers: int) -> tuple[Path, float, int]:
    """Run the suite with ``workers`` xdist workers; (report path, wall seconds, exit status)."""
    report = Path(tempfile.mkdtemp(prefix="hb-suite-", dir="/tmp")) / "junit.xml"
    argv = [sys.executable, "-m", "pytest", "-n", str(workers), "-q", f"--junitxml={report}"]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, check=False)
    return report, time.perf_counter() - started, done.returncode


def run(args: argparse.Namespace) -> list[Result]:
    """Measure (or read a report); see the module docstring."""
    if args.junit is not None:
        cases, wall = read_junit(args.junit)
        source, status = f"report {args.junit}", "not run here"
    else:
        report, wall, code = run_suite(args.workers)
        cases, _ = read_junit(report)
        source, status = f"pytest -n {args.workers}", f"exit status {code}"
    total = sum(case.seconds for case in cases)
    slowest = sorted(cases, key=lambda case: -case.seconds)[:SHOWN]
    missing = unexplained(cases, args.root)
    details = {"source": source, "suite": status, "tests": str(len(cases))}
    for rank, case in enumerate(slowest, 1):
        details[f"slowest {rank}"] = f"{case.seconds:.2f} s  {case.nodeid}"
    for case, why in missing:
        details[f"UNEXPLAINED {case.nodeid}"] = f"{case.seconds:.2f} s, {why}"
    return [
        Result(
            name=f"the project's suite, {source}",
            value=wall,
            unit="s",
            baseline_name="summed test time (one worker)",
            baseline_value=total,
            ratio=wall / total if total else 0.0,
            target=f"every test over {SLOW_SECONDS:g} s says {SLOW_MARKER!r} in its docstring",
            passed=not missing,
            details=details,
        )
    ]


def main() -> int:
    """The common options plus ``--junit``, ``--workers`` and ``--root``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    parser.add_argument("--quick", action="store_true", help="accepted, unused")
    parser.add_argument("--profile", action="store_true", help="accepted, unused")
    parser.add_argument("--junit", type=Path, default=None, help="read this report, run nothing")
    parser.add_argument("--workers", type=int, default=2, help="xdist workers (default 2)")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="where the tests' sources are (default: here)"
    )
    args = parser.parse_args()
    return benchkit.report(run(args), args.json)


if __name__ == "__main__":
    sys.exit(main())
