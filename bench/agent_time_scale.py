"""Agent time: the same small agent-integration suite at Herdr's real time and at 0.1×.

A generated pytest suite of the kind an agent author writes, on the plugin's fixtures and
the simulator's fake agents: start an agent, prompt it and read the reply, a working turn
awaited to idle, a question answered. It runs twice in fresh interpreters
(``sys.executable -m pytest``), both with Herdr's own 3 s settle delay
(``--herdr-settle-ms 3000``; the plugin's default is shorter): once at
``--herdr-time-scale 1`` (the baseline: Herdr's real timers) and once at 0.1. The row is the
wall time of the run at 0.1 against the run at 1; what stays unscaled (pytest, Python and
shell start-up, the fake agents' own drawing) is why the ratio is above 0.1.

Target (issue 14): the suite at 0.1× takes under 40 % of its time at 1×.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchkit
from benchkit import Result

TARGET_RATIO = 0.4

SUITE = """
def test_start(herdr_fake_agent):
    agent = herdr_fake_agent.start("pi")
    assert agent.status == "idle"


def test_prompt_and_reply(herdr_fake_agent):
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("hello there"))
    assert agent.prompt("hi")["agent_status"] == "idle"
    assert "hello there" in agent.read()


def test_working_turn_then_idle(herdr_fake_agent, herdr_wait):
    scenario = herdr_fake_agent.scenario().wait(2000).reply("done")
    agent = herdr_fake_agent.start("pi", scenario)
    agent.prompt("work", wait=False)
    herdr_wait.for_agent(agent.name, "working")
    assert herdr_wait.for_agent(agent.name, "idle")["agent_status"] == "idle"
    assert "done" in agent.read()


def test_question_answered(herdr_fake_agent):
    scenario = herdr_fake_agent.scenario().ask("Proceed?").reply("went ahead")
    agent = herdr_fake_agent.start("pi", scenario)
    assert agent.prompt("go", until=("blocked",))["agent_status"] == "blocked"
    agent.send_keys("y", "Enter")
    assert agent.wait("idle")["agent_status"] == "idle"
    assert "went ahead" in agent.read()
"""


def _suite(directory: Path, scale: str) -> float:
    """Run the suite at ``scale``; its wall time (the run must pass)."""
    env = benchkit.clean_env()
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
            "--herdr-settle-ms", "3000", "--herdr-time-scale", scale, "test_agent.py"]  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run(
        argv, cwd=directory, env=env, capture_output=True, text=True, timeout=150, check=False
    )
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(
            f"suite at {scale}× failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
        )
    return wall


def run(args: argparse.Namespace) -> list[Result]:
    """Measure the suite at 1× and at 0.1× (best of two at 0.1 unless ``--quick``)."""
    with tempfile.TemporaryDirectory(prefix="bench-time-scale-") as name:
        directory = Path(name)
        (directory / "test_agent.py").write_text(SUITE)
        real = _suite(directory, "1")
        fast = min(_suite(directory, "0.1") for _ in range(1 if args.quick else 2))
    ratio = fast / real
    return [
        Result(
            name="agent-integration suite (4 tests, fake pi) at --herdr-time-scale 0.1 (wall)",
            value=fast * 1e3,
            unit="ms",
            baseline_name="the same suite at 1 (Herdr's real timers)",
            baseline_value=real * 1e3,
            ratio=ratio,
            target=f"ratio < {TARGET_RATIO:g}",
            passed=ratio < TARGET_RATIO,
            details={"saved": f"{real - fast:.1f} s"},
        )
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
