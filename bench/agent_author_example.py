"""The agent author's worked example suite (docs/pytest-plugin/agent-author.md) with one bug
put in — ``my-agent`` never releases its pane — at ``--herdr-time-scale 0.1``.

It copies ``docs/pytest-plugin/examples/agent-author`` to a temporary project, removes the
agent's release and runs the suite in a fresh interpreter (``sys.executable -m pytest``)
twice: serially (``-p no:xdist``) and on two workers (``-n 2 --dist loadfile``: the
integration check's items on one worker, the fixture tests on the other). Each row is the
wall time; the suite must fail, for the missing release. The baseline is the healthy suite
(serial). ``tests/plugin/test_agent_author_example.py`` asserts what the run says; this
only times it.

Target (issue 14): the suite with the bug runs under 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit
from benchkit import Result

TARGET_S = 10.0
EXAMPLE = (
    Path(__file__).resolve().parents[1] / "docs" / "pytest-plugin" / "examples" / "agent-author"
)
RELEASE = "            herdr.release()  # release the pane only when the user really exits\n"


def _project(parent: Path, name: str, bug: bool) -> Path:
    project = parent / name
    shutil.copytree(EXAMPLE, project)
    if bug:
        agent = project / "bin" / "my-agent"
        text = agent.read_text()
        if text.count(RELEASE) != 1:
            raise RuntimeError("the example agent changed: update the injected bug")
        agent.write_text(text.replace(RELEASE, "            pass  # the bug\n"))
    return project


def _suite(project: Path, *workers: str, fails: bool) -> float:
    """Run the suite; its wall time (it must fail for the release, or pass)."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "--herdr-time-scale", "0.1", *workers]  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run(
        argv, cwd=project, env=benchkit.clean_env(), capture_output=True, text=True,
        timeout=150, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - began
    failed_for_release = done.returncode == 1 and "FAIL release" in done.stdout
    if (fails and not failed_for_release) or (not fails and done.returncode != 0):
        raise RuntimeError(f"unexpected outcome:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return wall


def run(args: argparse.Namespace) -> list[Result]:
    """Time the healthy suite, then the buggy one serially and on two workers."""
    del args
    with tempfile.TemporaryDirectory(prefix="bench-author-") as name:
        healthy = _suite(_project(Path(name), "healthy", bug=False), "-p", "no:xdist", fails=False)
        buggy = _project(Path(name), "buggy", bug=True)
        serial = _suite(buggy, "-p", "no:xdist", fails=True)
        parallel = _suite(buggy, "-n", "2", "--dist", "loadfile", fails=True)
    return [
        Result(
            name=f"example author suite, agent never releases, {label}, 0.1× (wall)",
            value=wall * 1e3,
            unit="ms",
            baseline_name="the healthy suite, serial, 0.1×",
            baseline_value=healthy * 1e3,
            ratio=wall / healthy,
            target=f"< {TARGET_S:g} s",
            passed=wall < TARGET_S,
        )
        for label, wall in (("serial", serial), ("-n 2", parallel))
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
