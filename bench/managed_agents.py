"""Managed agents (seed 002) with fake pi children: delegate → result, attention, a fleet of 20.

One simulator (settle delay 0.5 s, Herdr's 300 ms submit delay), the fake pi playing the
scenario in the run's ``scenario.json`` (``HERDR_SIM_FAKE_SCENARIO`` in every pane), one
lead controller outside Herdr (so ``agent_list`` is the pull path that delivers), every call
through ``run_tool`` as MCP makes it:

* **delegate → result**: ``agent_delegate`` with the fake pi's default reply, then
  ``agent_list`` every 20 ms until the result is delivered; the wall time from the delegate
  call to the delivery. Against ``herdr_spawn_agent`` → ``completed`` on the same task in the
  same run (rounds alternate). Median of N each; the ratio is the measure issue 15 asks for.
* **attention latency after a child blocks**: the child's first turn calls ``ask_owner``;
  from the ask record's ``createdAt`` (the child blocked) to the ``agent_list`` call that
  delivered it, polling every 20 ms (so up to 20 ms of it is the poll). Median of N.
* **twenty concurrent managed agents**: twenty threads delegate at once; the wall time until
  ``agent_list`` has delivered all twenty results, against twenty ``herdr_spawn_agent`` from
  twenty threads (``maxConcurrent`` 20) in the same run.

Targets (ours): delegate → result p50 ≤ 1.5× spawn → completed (the mailbox round trip and
the readiness proof must not cost more than half again a spawn's harvest); attention p50 ≤
250 ms; the fleet of twenty ≤ 2× the twenty spawns (launches share the controller's lock
only to claim a label, so the fleet must not serialise).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import benchkit
from benchkit import Result, median

from herdr_sim import Simulator
from orchestrator.managed.mailbox import Kind, Mailbox
from orchestrator.pipeline.registry import run_tool

SETTLE = 0.5
SUBMIT_DELAY = 0.3
FLEET = 20
POLL_S = 0.02
TIMEOUT_S = 120.0
RESULT_TARGET = 1.5
ATTENTION_TARGET_MS = 250.0
FLEET_TARGET = 2.0
DEFINITION = "---\nname: worker\ndescription: Does the benchmark's task\n---\nWork.\n"


@contextlib.contextmanager
def _simulator(directory: Path, scenario: Path) -> Iterator[Simulator]:
    home = directory / "home"
    home.mkdir(exist_ok=True)
    env = benchkit.clean_env(
        HOME=str(home),
        HERDR_SIM_CONFIG_DIR=str(directory / "cfg"),
        HERDR_SIM_FAKE_SCENARIO=str(scenario),
    )
    sim = Simulator(
        socket_path=directory / "herdr.sock",
        base_env=env,
        runtime_dir=directory / "rt",
        agent_start_settle=SETTLE,
        agent_prompt_submit_delay=SUBMIT_DELAY,
        persist=False,
    )
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()


def _ok(result: dict[str, Any]) -> dict[str, Any]:
    if result.get("ok") is not True:
        raise RuntimeError(f"call failed: {result}")
    return result


class Controller:
    """One lead controller (one context, as one MCP server has) and what it was delivered."""

    def __init__(self, sim: Simulator, env: dict[str, str]) -> None:
        self.ctx = benchkit.agent_tools_context(sim, env)
        self.lock = threading.Lock()
        self.delivered: dict[tuple[str, str], float] = {}

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        return _ok(run_tool(name, arguments, self.ctx))

    def poll(self) -> None:
        listed = self.call("agent_list")
        now = time.time()
        with self.lock:
            for delivery in listed["deliveries"]:
                self.delivered.setdefault((delivery["kind"], delivery["agent"]), now)

    def wait(self, keys: set[tuple[str, str]]) -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            self.poll()
            with self.lock:
                if keys <= set(self.delivered):
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"not delivered in {TIMEOUT_S:g} s: {keys}")
            time.sleep(POLL_S)


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    rounds = 3 if args.quick else 8
    managed: list[float] = []
    spawned: list[float] = []
    attention: list[float] = []
    spawn = benchkit.spawn_via_tool  # a fresh context per call, each must complete
    with benchkit.work_dir() as directory:
        scenario = directory / "scenario.json"
        scenario.write_text("{}")
        work = directory / "work"
        work.mkdir()
        agent_dir = directory / "pi"
        (agent_dir / "agents").mkdir(parents=True)
        (agent_dir / "agents" / "worker.md").write_text(DEFINITION)
        with _simulator(directory, scenario) as sim:
            env = benchkit.clean_env(
                HOME=str(directory / "home"),
                HERDR_SOCKET_PATH=str(sim.socket_path),
                HERDR_BIN_PATH=str(sim.cli_path),
                HERDR_ORCHESTRATOR_STATE_DIR=str(directory / "state"),
                HERDR_ORCHESTRATOR_MAX_CONCURRENT=str(FLEET),
                HERDR_ORCHESTRATOR_TRANSPORT="socket",
                HERDR_ORCHESTRATOR_ALLOW_CWD=str(directory),
                PI_CODING_AGENT_DIR=str(agent_dir),
            )
            with contextlib.chdir(work):
                lead = Controller(sim, env)
                spawn(sim, env, work, "warm-up")
                lead.call("agent_delegate", definition="worker", task="warm up", label="warm")
                lead.wait({("result", "warm")})
                for i in range(rounds):
                    spawned.append(benchkit.timed(partial(spawn, sim, env, work, f"s{i}")))

                    def delegate(i: int = i) -> None:
                        lead.call(
                            "agent_delegate", definition="worker", task="say ok", label=f"m{i}"
                        )
                        lead.wait({("result", f"m{i}")})

                    managed.append(benchkit.timed(delegate))
                scenario.write_text(
                    json.dumps({"turns": [{"steps": [{"ask_owner": "Which one?"}]}]})
                )
                store_root = directory / "state" / "managed"
                for i in range(rounds):
                    started = lead.call(
                        "agent_delegate", definition="worker", task="ask", label=f"a{i}"
                    )
                    lead.wait({("ask", f"a{i}")})
                    box = Mailbox(store_root, started["workspace_id"], f"a{i}")
                    (ask,) = [m for m in box.history() if m.kind is Kind.ASK]
                    attention.append(lead.delivered[("ask", f"a{i}")] - ask.created_at)
                    lead.call("agent_close", agent=f"a{i}")
                scenario.write_text("{}")
                fleet = benchkit.run_batch(
                    [
                        partial(
                            lead.call,
                            "agent_delegate",
                            definition="worker",
                            task="say ok",
                            label=f"f{n}",
                        )
                        for n in range(FLEET)
                    ],
                    join_timeout=TIMEOUT_S,
                )
                began = time.perf_counter()
                lead.wait({("result", f"f{n}") for n in range(FLEET)})
                fleet += time.perf_counter() - began
                spawns = benchkit.run_batch(
                    [partial(spawn, sim, env, work, f"p{n}") for n in range(FLEET)],
                    join_timeout=TIMEOUT_S,
                )
    managed_p50, spawned_p50, attention_p50 = median(managed), median(spawned), median(attention)
    return [
        Result(
            name="agent_delegate -> result delivered (fake pi reply)",
            value=managed_p50 * 1e3,
            unit="ms",
            baseline_name="herdr_spawn_agent -> completed",
            baseline_value=spawned_p50 * 1e3,
            ratio=managed_p50 / spawned_p50,
            target=f"<= {RESULT_TARGET}x",
            passed=managed_p50 / spawned_p50 <= RESULT_TARGET,
            details={
                "managed_ms": str([round(v * 1e3) for v in managed]),
                "spawn_ms": str([round(v * 1e3) for v in spawned]),
            },
        ),
        Result(
            name="attention latency: ask_owner -> delivered by agent_list",
            value=attention_p50 * 1e3,
            unit="ms",
            baseline_name="agent_list poll interval",
            baseline_value=POLL_S * 1e3,
            ratio=attention_p50 / POLL_S,
            target=f"p50 <= {ATTENTION_TARGET_MS:g} ms",
            passed=attention_p50 * 1e3 <= ATTENTION_TARGET_MS,
            details={"attention_ms": str([round(v * 1e3) for v in attention])},
        ),
        Result(
            name=f"{FLEET} concurrent managed agents -> all results delivered",
            value=fleet * 1e3,
            unit="ms",
            baseline_name=f"{FLEET} parallel herdr_spawn_agent -> completed",
            baseline_value=spawns * 1e3,
            ratio=fleet / spawns,
            target=f"<= {FLEET_TARGET}x",
            passed=fleet / spawns <= FLEET_TARGET,
        ),
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
