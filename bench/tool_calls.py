"""A low-level tool call over the socket transport and over the CLI transport, against ``ping``.

One simulator; three interleaved series of the same read, so machine noise hits all alike:

* a bare ``ping`` round trip (one connection, one line each way): the floor of any call;
* ``_dsh_herdr_pane_list`` through ``run_tool`` with the ``socket`` transport: argument
  validation, the request, the CLI-shaped result (``command``, ``stdout`` rendered as the CLI
  prints it, parsed ``data``);
* the same tool with the ``cli`` transport: a fresh ``herdr pane list`` process per call
  (the simulator's CLI, on ``sys.executable``), its output parsed into the same result.

Each row is the median against the ping median of the same run. Targets (ours; the issue
asks for the ratios): socket ≤ 10× ping (the tool layer must stay cheap next to the
request itself); CLI informational (a process start dominates it).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import benchkit
from benchkit import Result, median, ms

from herdr_sim.client import request
from orchestrator.client.sync import HerdrClient
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import run_tool

SOCKET_TARGET = 10.0


def _timed_calls(fn: Any, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return times


def run(args: argparse.Namespace) -> list[Result]:
    """Measure the three series, interleaved."""
    rounds = 20 if args.quick else 100
    with benchkit.work_dir() as directory, benchkit.simulator(directory) as sim:
        benchkit.api(sim, "workspace.create", cwd=str(directory))
        env = {"HERDR_SOCKET_PATH": str(sim.socket_path), "HERDR_BIN_PATH": str(sim.cli_path)}
        contexts = {
            kind: ToolContext.with_client(
                HerdrClient.build(kind, socket_path=sim.socket_path, herdr=sim.cli_path, env=env),
                env,
            )
            for kind in ("socket", "cli")
        }

        def tool(kind: str) -> None:
            result = run_tool("_dsh_herdr_pane_list", {}, contexts[kind])
            assert result["ok"] and result["transport"] == kind, result

        def ping() -> None:
            assert "result" in request(sim.socket_path, "ping", {})

        for warm in (ping, lambda: tool("socket"), lambda: tool("cli")):
            warm()
        pings: list[float] = []
        sockets: list[float] = []
        clis: list[float] = []
        for _ in range(rounds):
            pings += _timed_calls(ping, 1)
            sockets += _timed_calls(lambda: tool("socket"), 1)
            clis += _timed_calls(lambda: tool("cli"), 1)
    ping_p50, socket_p50, cli_p50 = median(pings), median(sockets), median(clis)
    return [
        Result(
            name="tool call, socket transport (_dsh_herdr_pane_list)",
            value=socket_p50 * 1e3,
            unit="ms",
            baseline_name="bare ping round trip",
            baseline_value=ping_p50 * 1e3,
            ratio=socket_p50 / ping_p50,
            target=f"<= {SOCKET_TARGET:g}x ping",
            passed=socket_p50 / ping_p50 <= SOCKET_TARGET,
            details={"rounds": str(rounds)},
        ),
        Result(
            name="tool call, CLI transport (_dsh_herdr_pane_list)",
            value=cli_p50 * 1e3,
            unit="ms",
            baseline_name="bare ping round trip",
            baseline_value=ping_p50 * 1e3,
            ratio=cli_p50 / ping_p50,
            target="informational (a process per call)",
            passed=None,
            details={"rounds": str(rounds), "p50 over socket": ms(socket_p50)},
        ),
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
