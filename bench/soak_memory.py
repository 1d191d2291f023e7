"""Resident memory of a simulator that creates and closes workspaces for a long time.

``.venv/bin/python bench/soak_memory.py [--duration SECONDS]`` (default 600 s: ten minutes;
``--quick`` makes it 30 s). The simulator runs in this process; one client loop creates a
workspace (a real shell on a real pty), reports metadata on it, reads its pane, closes it,
and sends one request that fails to parse, over and over. The warm-up lasts until the
bounded logs are full (the simulator's lifecycle event list holds ``Simulator.EVENTS_KEPT``
events; until then it grows by design), at least a tenth of the run and at most half of it;
then the resident memory is the baseline, sampled every few seconds until the end. A server
that keeps anything per request or per event without a bound (lifecycle events, handler
errors, metadata of closed workspaces, notifications) grows here; a bounded one stays flat.
The RATIO is the final RSS over the baseline; target: at most 10% growth (allocator noise).
Not part of ``run_all.py``: ten minutes is its point.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path

import benchkit
from benchkit import Result

from herdr_sim import Simulator

TARGET_GROWTH = 0.10
SAMPLE_EVERY = 5.0


def rss_mib() -> float:
    """This process's resident memory, MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def bad_request(sim: Simulator) -> None:
    """One request line that does not parse (answered ``invalid_request``)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(sim.socket_path))
        sock.sendall(b'{"id":"soak","method":"ping","params":{"x":' + b"[" * 4096 + b"\n")
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(65536):
            pass


def cycle(sim: Simulator, cwd: str) -> None:
    """Create a workspace, use it a little, close it; plus one bad request."""
    created = benchkit.api(sim, "workspace.create", cwd=cwd)
    ws = created["workspace"]["workspace_id"]
    pane = created["root_pane"]["pane_id"]
    benchkit.api(
        sim, "workspace.report_metadata", workspace_id=ws, source="soak", tokens={"k": "v"}
    )
    benchkit.api(sim, "pane.read", pane_id=pane, source="visible")
    benchkit.api(sim, "notification.show", title="soak")
    benchkit.api(sim, "workspace.close", workspace_id=ws)
    bad_request(sim)


def run(args: argparse.Namespace) -> list[Result]:
    """Soak; see the module docstring."""
    duration = 30.0 if args.quick and args.duration is None else (args.duration or 600.0)
    with benchkit.work_dir() as directory, benchkit.simulator(directory) as sim:
        cwd = str(directory)
        started = time.monotonic()
        cycles = 0
        while True:
            elapsed = time.monotonic() - started
            full = len(sim.events) >= Simulator.EVENTS_KEPT
            if elapsed >= duration / 2 or (full and elapsed >= duration / 10):
                break
            cycle(sim, cwd)
            cycles += 1
        warmup = time.monotonic() - started
        baseline = rss_mib()
        samples = [baseline]
        next_sample = time.monotonic() + SAMPLE_EVERY
        while time.monotonic() - started < duration:
            cycle(sim, cwd)
            cycles += 1
            if time.monotonic() >= next_sample:
                samples.append(rss_mib())
                next_sample += SAMPLE_EVERY
        final = rss_mib()
        samples.append(final)
        events = len(sim.events)
        server = sim.socket_server
        errors = 0 if server is None else len(server.handler_errors)
        meta = sim.run_in_loop(lambda rt: len(rt.meta))
    ratio = final / baseline
    return [
        Result(
            name=f"resident memory after {duration:g} s of create/close",
            value=final,
            unit="MiB",
            baseline_name=f"after a {warmup:.0f} s warm-up"
            + ("" if full else " (event list not yet full)"),
            baseline_value=baseline,
            ratio=ratio,
            target=f"<= {1 + TARGET_GROWTH:.2f}x",
            passed=ratio <= 1 + TARGET_GROWTH,
            details={
                "cycles (create, metadata, read, notify, close, bad request)": str(cycles),
                "RSS samples min / max": f"{min(samples):.1f} / {max(samples):.1f} MiB",
                "lifecycle events kept": f"{events} (cap {Simulator.EVENTS_KEPT})",
                "handler errors kept": str(errors),
                "metadata stores left": str(meta),
            },
        )
    ]


def main() -> int:
    """The common options plus ``--duration``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    parser.add_argument("--quick", action="store_true", help="a 30 s run unless --duration")
    parser.add_argument("--profile", action="store_true", help="accepted, unused")
    parser.add_argument(
        "--duration", type=float, default=None, help="seconds to soak (default 600)"
    )
    args = parser.parse_args()
    return benchkit.report(run(args), args.json)


if __name__ == "__main__":
    sys.exit(main())
