"""The README's main job, `herdr-orchestrator demo`, runs every step and shows the agent's work.

One run of the demo (a fresh process, as ``bash .ci/demo`` runs it) is shared by the tests:
the low-level tour, then the full loop through ``herdr_spawn_agent``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_output() -> str:
    """The stdout of one successful ``python -m orchestrator demo``."""
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "demo"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_demo_runs_every_step_through_the_tools(demo_output: str) -> None:
    out = demo_output
    steps = [line for line in out.splitlines() if line[:1].isdigit()]
    assert len(steps) == 8 and all("[ok ]" in line for line in steps), out
    assert "herdr pane split w1:p1 --direction right --no-focus" in out
    assert "matched 'hello from a fake pi'" in out
    assert "Wrote hello.txt (21 bytes)." in out  # the agent's reply, read back
    assert "every pane process was reaped" in out


def test_the_full_loop_spawn_completes_with_evidence_and_a_diff(demo_output: str) -> None:
    out = demo_output.split("the full loop", 1)[-1]
    assert "8. [ok ] herdr_spawn_agent" in out, demo_output
    header = next(line for line in out.splitlines() if "[completed] greeter (pi" in line)
    assert header.endswith("next: review"), header
    assert "- git: 1 file(s) changed against" in out
    assert "modified greet.sh (+1 -1)" in out
    assert '    │ +echo "Hello, ${1:-world}!"' in out  # the patch itself
    assert '    │ -echo "Hello, world!"' in out
    # result.md was written where the task envelope said, and harvested
    assert "- result.md: 106 characters (" in out
    assert "    │ - checked: sh greet.sh Ada -> Hello, Ada!" in out
    assert "greet.sh now greets by name" in out  # the final message
