"""The README's main job, `herdr-orchestrator demo`, runs every step and shows the agent's work."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_the_demo_runs_every_step_through_the_tools() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "demo"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    steps = [line for line in out.splitlines() if line[:1].isdigit()]
    assert len(steps) == 7 and all("[ok ]" in line for line in steps), out
    assert "herdr pane split w1:p1 --direction right --no-focus" in out
    assert "matched 'hello from a fake pi'" in out
    assert "Wrote hello.txt (21 bytes) and checked it." in out  # the agent's reply, read back
    assert "every pane process was reaped" in out
