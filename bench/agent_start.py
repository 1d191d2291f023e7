"""`agent.start` to `interactive_ready`, and an `agent.prompt` wait round trip, with a fake pi.

Each round opens a fresh workspace, waits for its shell prompt, sends ``agent.start``
(kind ``pi``) and polls ``agent.get`` every 5 ms until the agent is ``interactive_ready``;
then it sends ``agent.prompt`` with ``wait`` a few times and times each until the fake
pi's turn has settled (its ``ok`` reply, reported over the socket like the real pi's
integration). The baseline of both rows is the settle delay the simulator is configured
with (``agent_start_settle``, shortened from Herdr's 3 s as test suites do), so the RATIO
says how much a launch or a turn costs beyond the one delay Herdr imposes on purpose.
Herdr's manifests are used when ``../shared/contracts/agent-detection`` (or
``$HERDR_CONTRACTS_DIR/agent-detection``) exists.

Targets (ours; the issue sets none): start → ready p50 <= settle + 300 ms (a fake agent
is drawn and detected in well under 300 ms, so the settle delay dominates), and the
prompt round trip p50 <= submit delay + 300 ms (Herdr types the text, presses Enter 300 ms
later by default; the turn itself is nearly free).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import benchkit
from benchkit import Result, median, ms, percentile

SETTLE = benchkit.AGENT_SETTLE
SUBMIT_DELAY = benchkit.AGENT_SUBMIT_DELAY
SLACK = 0.3
POLL = 0.005
PROMPTS_PER_AGENT = 3


def _until_ready(sim: Any, name: str, timeout: float = 15.0) -> dict[str, Any]:
    deadline = time.perf_counter() + timeout
    while True:
        agent: dict[str, Any] = benchkit.api(sim, "agent.get", target=name)["agent"]
        if agent.get("interactive_ready") is True:
            return agent
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{name} never became interactive_ready: {agent}")
        time.sleep(POLL)


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    rounds = 3 if args.quick else 10
    starts: list[float] = []
    prompts: list[float] = []
    settings = benchkit.agent_sim_settings()
    with benchkit.work_dir() as directory, benchkit.simulator(directory, **settings) as sim:
        for index in range(rounds):
            created = benchkit.api(sim, "workspace.create", cwd=str(directory))
            pane = created["root_pane"]["pane_id"]
            benchkit.wait_prompt(sim, pane)
            name = f"bench-{index}"
            began = time.perf_counter()
            benchkit.api(sim, "agent.start", name=name, kind="pi", pane_id=pane)
            _until_ready(sim, name)
            starts.append(time.perf_counter() - began)
            for _ in range(PROMPTS_PER_AGENT):
                began = time.perf_counter()
                done = benchkit.api(
                    sim, "agent.prompt", target=name, text="hello", wait={"timeout_ms": 10_000}
                )
                prompts.append(time.perf_counter() - began)
                assert done["agent"]["agent_status"] in ("idle", "done"), done
    start_p50, prompt_p50 = median(starts), median(prompts)
    start_target, prompt_target = SETTLE + SLACK, SUBMIT_DELAY + SLACK
    return [
        Result(
            name="agent.start -> interactive_ready (fake pi)",
            value=start_p50 * 1e3,
            unit="ms",
            baseline_name="configured settle delay",
            baseline_value=SETTLE * 1e3,
            ratio=start_p50 / SETTLE,
            target=f"p50 <= {start_target * 1e3:g} ms",
            passed=start_p50 <= start_target,
            details={
                "p50 / max": f"{ms(start_p50)} / {ms(max(starts))}",
                "launches": str(len(starts)),
                "manifests": str(settings["agent_manifests_dir"] or "none (known-agent idle)"),
            },
        ),
        Result(
            name="agent.prompt wait round trip (fake pi reply)",
            value=prompt_p50 * 1e3,
            unit="ms",
            baseline_name="configured settle delay",
            baseline_value=SETTLE * 1e3,
            ratio=prompt_p50 / SETTLE,
            target=f"p50 <= {prompt_target * 1e3:g} ms",
            passed=prompt_p50 <= prompt_target,
            details={
                "p50 / p99": f"{ms(prompt_p50)} / {ms(percentile(prompts, 99))}",
                "submit delay": ms(SUBMIT_DELAY),
                "prompts": str(len(prompts)),
            },
        ),
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
