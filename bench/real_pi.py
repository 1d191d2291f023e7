"""The real pi against the fake pi: start until usable, and a one-turn prompt round trip.

Issue 11's measures: real pi's start to ``interactive_ready`` and a one-turn round trip, each
as a ratio to the same steps with the fake pi in the same run. Two simulators with the same
settle delay and submit delay: one with the fake agents on its panes' PATH, one without them
and with the installed real pi (``herdr-sim install-agent pi``) first on the workspace's PATH,
offline against a fake LLM that answers every prompt at once. Each round opens a workspace,
waits for its shell prompt and sends ``agent.start`` (kind ``pi``); *start* ends when the
agent is ``interactive_ready`` and its interface is up (the footer shows the model and, for
pi with the extension, the session was reported — a prompt sent earlier is lost); then one
``agent.prompt`` with ``wait`` is timed. The fake pi's scenario answers at once, like the
fake LLM. No targets (the issue sets none): the rows are informational.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import benchkit
from benchkit import Result, median, ms

from herdr_sim.fake_llm import FakeLLM, Script, Turn
from herdr_sim.real_agents import find_pi, prepare_pi_home

SETTLE = 0.5
SUBMIT_DELAY = 0.3
POLL = 0.01


def _until(sim: Any, name: str, footer: str, session: bool, timeout: float = 30.0) -> None:
    deadline = time.perf_counter() + timeout
    while True:
        agent = benchkit.api(sim, "agent.get", target=name)["agent"]
        screen = benchkit.api(sim, "agent.read", target=name, source="visible")["read"]["text"]
        if (
            agent.get("interactive_ready") is True
            and footer in screen
            and (not session or "agent_session" in agent)
        ):
            return
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{name} never came up: {agent}")
        time.sleep(POLL)


def _rounds(sim: Any, directory: Path, rounds: int, real: dict[str, Any] | None) -> tuple[
    list[float], list[float]
]:  # fmt: skip
    starts: list[float] = []
    prompts: list[float] = []
    for index in range(rounds):
        params: dict[str, Any] = {"cwd": str(directory)}
        args: list[str] = []
        if real is not None:
            home = prepare_pi_home(directory / f"pi-home-{index}", real["llm"].openai_base_url)
            params["env"] = home.env(real["pi"], path=real["path"])
            args = ["--model", home.model]
        else:
            scenario = directory / "scenario.json"
            scenario.write_text('{"default_reply": "ok", "turns": []}')
            args = ["--scenario", str(scenario)]
        pane = benchkit.api(sim, "workspace.create", **params)["root_pane"]["pane_id"]
        benchkit.wait_prompt(sim, pane)
        name = f"bench-{index}"
        began = time.perf_counter()
        benchkit.api(sim, "agent.start", name=name, kind="pi", pane_id=pane, args=args)
        # real pi: its footer names the model once its editor is up; the fake is up at once
        _until(sim, name, "fake-model" if real else "", session=real is not None)
        starts.append(time.perf_counter() - began)
        began = time.perf_counter()
        done = benchkit.api(
            sim, "agent.prompt", target=name, text="hello", wait={"timeout_ms": 20_000}
        )
        prompts.append(time.perf_counter() - began)
        assert done["agent"]["agent_status"] in ("idle", "done"), done
    return starts, prompts


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    pi = find_pi()
    if pi is None:
        print("real pi is not installed (`herdr-sim install-agent pi`): nothing measured")
        return []
    rounds = 2 if args.quick else 5
    settings: dict[str, Any] = {
        "agent_start_settle": SETTLE,
        "agent_prompt_submit_delay": SUBMIT_DELAY,
        "persist": False,
    }
    with benchkit.work_dir() as directory, benchkit.simulator(directory, **settings) as sim:
        fake_starts, fake_prompts = _rounds(sim, directory, rounds, None)
    llm = FakeLLM(Script(fallback=Turn(text="ok", repeat=True))).start()
    try:
        with (
            benchkit.work_dir() as directory,
            benchkit.simulator(
                directory, fake_agents=False, agent_manifests_dir=None, **settings
            ) as sim,
        ):
            real = {"llm": llm, "pi": pi, "path": benchkit.clean_env()["PATH"]}
            project = Path(tempfile.mkdtemp(dir=directory))
            real_starts, real_prompts = _rounds(sim, project, rounds, real)
    finally:
        llm.stop()
    rows = []
    for what, real_values, fake_values in (
        ("agent.start -> usable", real_starts, fake_starts),
        ("agent.prompt wait round trip", real_prompts, fake_prompts),
    ):
        real_p50, fake_p50 = median(real_values), median(fake_values)
        rows.append(
            Result(
                name=f"{what} (real pi 1.6)",
                value=real_p50 * 1e3,
                unit="ms",
                baseline_name="fake pi, same run",
                baseline_value=fake_p50 * 1e3,
                ratio=real_p50 / fake_p50,
                target="none (informational)",
                passed=None,
                details={
                    "real p50 / max": f"{ms(real_p50)} / {ms(max(real_values))}",
                    "fake p50 / max": f"{ms(fake_p50)} / {ms(max(fake_values))}",
                    "rounds": str(len(real_values)),
                },
            )
        )
    return rows


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
