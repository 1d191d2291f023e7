"""What `herdr-sim record` adds to a request: `ping` through the recording proxy vs direct.

The recorder runs as users run it, its own process (``herdr-sim record --upstream SIM
--socket PROXY --out CASSETTE``) in front of a simulator; the client sends `ping` with one
connection per request like Herdr's CLI, in alternating blocks through the proxy and
straight to the simulator, so load from elsewhere hits both. Each proxied ping is four
cassette records (open, send, recv, close) written to disk. Target (from the issue): the
recorder adds under 1 ms at p50. The recorder's own CPU time per proxied ping is printed too:
on a loaded machine the added latency is mostly waiting for a core, which that number is not.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from functools import partial

import benchkit
from benchkit import Result, median, ms, percentile

from herdr_sim.cassette.format import load
from herdr_sim.client import request

TARGET_ADDED_P50_MS = 1.0


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    blocks, per_block = (4, 200) if args.quick else (10, 400)
    direct: list[float] = []
    proxied: list[float] = []
    with benchkit.work_dir() as directory, benchkit.simulator(directory) as sim:
        proxy, cassette = directory / "rec" / "proxy.sock", directory / "bench.jsonl"
        recorder = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "herdr_sim",
                "record",
                "--upstream",
                str(sim.socket_path),
                "--socket",
                str(proxy),
                "--out",
                str(cassette),
            ],
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while not proxy.exists():
                if time.monotonic() > deadline or recorder.poll() is not None:
                    raise RuntimeError("the recorder did not start")
                time.sleep(0.02)
            for path in (sim.socket_path, proxy) * 200:  # warm-up
                assert request(path, "ping")["result"]["type"] == "pong"
            recorder_cpu = 0.0
            for _ in range(blocks):
                for path, times in ((sim.socket_path, direct), (proxy, proxied)):
                    before = benchkit.cpu_seconds(recorder.pid)
                    for _ in range(per_block):
                        times.append(benchkit.timed(partial(request, path, "ping")))
                    if path == proxy:
                        recorder_cpu += benchkit.cpu_seconds(recorder.pid) - before
        finally:
            recorder.send_signal(signal.SIGINT)
            recorder.wait(30)
        recorded = len(load(cassette).by_conn)

    p50, base50 = median(proxied), median(direct)
    added = (p50 - base50) * 1e3
    return [
        Result(
            name="recorder's added ping p50",
            value=added,
            unit="ms",
            baseline_name="direct ping p50",
            baseline_value=base50 * 1e3,
            ratio=p50 / base50,
            target=f"added p50 < {TARGET_ADDED_P50_MS} ms",
            passed=added < TARGET_ADDED_P50_MS,
            details={
                "through the recorder p50 / p99": f"{ms(p50)} / {ms(percentile(proxied, 99))}",
                "direct p50 / p99": f"{ms(base50)} / {ms(percentile(direct, 99))}",
                "recorder CPU per proxied ping (load-independent)": ms(recorder_cpu / len(proxied)),
                "connections in the cassette": str(recorded),
                "requests": f"{len(proxied)} each",
            },
        )
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
