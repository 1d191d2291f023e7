"""Soak: a simulator used for a long time stays flat in memory, file descriptors and threads.

``.venv/bin/python bench/soak.py [--duration SECONDS]`` (default 600 s: ten minutes;
``--quick`` makes it 60 s). The simulator runs in this process. One client loop repeats a
cycle until the time is up: create a workspace (a real shell on a real pty), report
metadata on it, split its pane, run a command in the new pane and wait for its output,
read both panes, close the split, show a notification, close the workspace, send one
request that fails to parse, and give a long-lived fake pi one turn (``agent.prompt`` with
``wait``); every fifth cycle also starts a fresh fake pi in a new tab and closes the tab.

The simulator's recorder of lifecycle events (``Simulator.events``) keeps the last
``Simulator.EVENTS_KEPT`` events and grows by design until it holds that many; at the
default 10,000 and ~15 events a cycle it would fill only near the end of a ten-minute run
(and an earlier fill with smaller events is outgrown as the cycles' bigger events replace
them: the first version of this soak read 1.10x that way). So the soak sets the cap to
:data:`EVENTS_KEPT` (1,000; ``tests/sim/test_bounded_memory.py`` proves the bound itself)
and the warm-up cycles until the recorder is full and at least a tenth of the run has
passed (minute 1 of the default ten), at most half. Then resident memory, open file
descriptors and threads of the process are the baseline, sampled every few seconds until
the end. Threads and fds come and go with
the work in flight, so their rows compare the fewest over the last fifth of the run with
the most over the baseline and the next two samples (each taken once the counts are
steady for 50 ms, a second at most): a leak raises the floor. A server that
keeps anything per request, per pane or per agent without a bound grows here; one that
leaks an fd or a thread per cycle shows it at once. Targets (issue 17): memory <= 1.05x
the baseline, fds and threads no more than at the baseline. Not run by ``run_all.py``
unless asked (``--soak``): its point is its length.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import benchkit
from benchkit import Result

from herdr_sim import Simulator
from herdr_sim.client import call

TARGET_GROWTH = 0.05
SAMPLE_EVERY = 5.0
AGENT_EVERY = 5
#: the soak's cap on the simulator's event recorder (its default: 10,000)
EVENTS_KEPT = 1_000
TIMEOUT_MS = 30_000


@dataclass(frozen=True)
class Sample:
    """What the process holds at one moment."""

    seconds: float
    rss_mib: float
    fds: int
    threads: int


def fd_count() -> int:
    """Open file descriptors of this process."""
    return sum(1 for _ in Path("/proc/self/fd").iterdir())


def sample(started: float) -> Sample:
    """RSS, fds and threads, once the fd and thread counts are steady (1 s at most)."""
    deadline = time.monotonic() + 1.0
    counts = (fd_count(), benchkit.proc_status("Threads"))
    while time.monotonic() < deadline:
        time.sleep(0.05)
        again = (fd_count(), benchkit.proc_status("Threads"))
        if again == counts:
            break
        counts = again
    return Sample(time.monotonic() - started, benchkit.rss_mib(), *counts)


def bad_request(sim: Simulator) -> None:
    """One request line that does not parse (answered ``invalid_request``)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(sim.socket_path))
        sock.sendall(b'{"id":"soak","method":"ping","params":{"x":' + b"[" * 4096 + b"\n")
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(65536):
            pass


def agent_turn(sim: Simulator, name: str) -> None:
    """One prompt to the agent ``name``, waited for until the turn settles."""
    wait = {"until": ["idle", "done"], "timeout_ms": TIMEOUT_MS}
    params = {"target": name, "text": "say ok", "wait": wait}
    done = call(sim.socket_path, "agent.prompt", params, timeout=TIMEOUT_MS / 1000 + 10)
    if done["agent"]["agent_status"] not in ("idle", "done"):
        raise RuntimeError(f"agent turn settled as {done['agent']['agent_status']}")


def start_agent(sim: Simulator, workspace: str, cwd: str, name: str) -> str:
    """A fake pi in a new tab of ``workspace``, interactive; its tab id."""
    tab = benchkit.api(sim, "tab.create", workspace_id=workspace, cwd=cwd, focus=False)
    pane = tab["root_pane"]["pane_id"]
    benchkit.api(sim, "agent.start", name=name, kind="pi", pane_id=pane, timeout_ms=TIMEOUT_MS)
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not benchkit.api(sim, "agent.get", target=name)["agent"].get("interactive_ready"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} never became interactive_ready")
        time.sleep(0.05)
    return str(tab["tab"]["tab_id"])


def cycle(sim: Simulator, cwd: str, number: int, agents_ws: str) -> None:
    """One round of everything a session does; see the module docstring."""
    created = benchkit.api(sim, "workspace.create", cwd=cwd)
    ws = created["workspace"]["workspace_id"]
    pane = created["root_pane"]["pane_id"]
    benchkit.api(
        sim, "workspace.report_metadata", workspace_id=ws, source="soak", tokens={"k": "v"}
    )
    split = benchkit.api(sim, "pane.split", target_pane_id=pane, direction="right")
    other = split["pane"]["pane_id"]
    benchkit.wait_prompt(sim, other)
    benchkit.api(sim, "pane.send_text", pane_id=other, text=f"echo soak-$(({number}+1))\n")
    benchkit.wait_output(sim, other, f"^soak-{number + 1}$", source="recent")
    benchkit.api(sim, "pane.read", pane_id=other, source="recent", lines=50)
    benchkit.api(sim, "pane.read", pane_id=pane, source="visible")
    benchkit.api(sim, "pane.close", pane_id=other)
    benchkit.api(sim, "notification.show", title="soak")
    benchkit.api(sim, "workspace.close", workspace_id=ws)
    bad_request(sim)
    agent_turn(sim, "soak-agent")
    if number % AGENT_EVERY == 0:
        name = f"fresh-{number}"
        tab = start_agent(sim, agents_ws, cwd, name)
        agent_turn(sim, name)
        benchkit.api(sim, "tab.close", tab_id=tab)


def run(args: argparse.Namespace) -> list[Result]:
    """Soak; see the module docstring."""
    duration = 60.0 if args.quick and args.duration is None else (args.duration or 600.0)
    settings = benchkit.agent_sim_settings()
    Simulator.EVENTS_KEPT = EVENTS_KEPT  # this process only; see the module docstring
    with benchkit.work_dir() as directory, benchkit.simulator(directory, **settings) as sim:
        cwd = str(directory)
        agents = benchkit.api(sim, "workspace.create", cwd=cwd, label="agents")
        agents_ws = agents["workspace"]["workspace_id"]
        start_agent(sim, agents_ws, cwd, "soak-agent")
        started = time.monotonic()
        cycles = 0
        while True:
            elapsed = time.monotonic() - started
            full = len(sim.events) >= EVENTS_KEPT
            if elapsed >= duration / 2 or (full and elapsed >= duration / 10):
                break
            cycle(sim, cwd, cycles, agents_ws)
            cycles += 1
        baseline = sample(started)
        samples = [baseline]
        next_sample = time.monotonic() + SAMPLE_EVERY
        while time.monotonic() - started < duration:
            cycle(sim, cwd, cycles, agents_ws)
            cycles += 1
            if time.monotonic() >= next_sample:
                samples.append(sample(started))
                next_sample += SAMPLE_EVERY
        final = sample(started)
        samples.append(final)
        events = len(sim.events)
        server = sim.socket_server
        errors = 0 if server is None else len(server.handler_errors)
        meta = sim.run_in_loop(lambda rt: len(rt.meta))
        panes = len(benchkit.api(sim, "pane.list")["panes"])
    ratio = final.rss_mib / baseline.rss_mib
    # Threads and fds come and go with the work in flight (a pane being torn down, an
    # executor thread): a leak is a floor that rises, so the fewest over the last fifth of
    # the run is compared with the most over the baseline and the two samples after it.
    head = samples[:3]
    tail = [s for s in samples if s.seconds >= 0.8 * duration] or [final]
    fds_then, fds_now = max(s.fds for s in head), min(s.fds for s in tail)
    threads_then, threads_now = max(s.threads for s in head), min(s.threads for s in tail)
    warmup = f"after a {baseline.seconds:.0f} s warm-up"
    common = {
        "cycles (workspace, split, run, read, close, bad request, agent turn)": str(cycles),
        f"fresh agents started and closed (every {AGENT_EVERY}th cycle)": str(
            (cycles + AGENT_EVERY - 1) // AGENT_EVERY
        ),
        "RSS samples min / max": f"{min(s.rss_mib for s in samples):.1f} / "
        f"{max(s.rss_mib for s in samples):.1f} MiB",
        "fds samples min / max": f"{min(s.fds for s in samples)} / {max(s.fds for s in samples)}",
        "threads samples min / max": f"{min(s.threads for s in samples)} / "
        f"{max(s.threads for s in samples)}",
        "lifecycle events kept": f"{events} (cap {EVENTS_KEPT}, set for the soak)",
        "event recorder full at the baseline": "yes" if full else "NO",
        "handler errors kept": str(errors),
        "metadata stores left": str(meta),
        "panes left (the agents' workspace)": str(panes),
    }
    return [
        Result(
            name=f"soak {duration:g} s: resident memory",
            value=final.rss_mib,
            unit="MiB",
            baseline_name=warmup,
            baseline_value=baseline.rss_mib,
            ratio=ratio,
            target=f"<= {1 + TARGET_GROWTH:.2f}x",
            passed=ratio <= 1 + TARGET_GROWTH,
            details=common,
        ),
        Result(
            name=f"soak {duration:g} s: open file descriptors (fewest, last fifth)",
            value=fds_now,
            unit="fds",
            baseline_name=warmup,
            baseline_value=fds_then,
            ratio=fds_now / fds_then,
            target="no more than at the baseline",
            passed=fds_now <= fds_then,
        ),
        Result(
            name=f"soak {duration:g} s: threads (fewest, last fifth)",
            value=threads_now,
            unit="threads",
            baseline_name=warmup,
            baseline_value=threads_then,
            ratio=threads_now / threads_then,
            target="no more than at the baseline",
            passed=threads_now <= threads_then,
        ),
    ]


def main() -> int:
    """The common options plus ``--duration``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    parser.add_argument("--quick", action="store_true", help="a 60 s run unless --duration")
    parser.add_argument("--profile", action="store_true", help="accepted, unused")
    parser.add_argument(
        "--duration", type=float, default=None, help="seconds to soak (default 600)"
    )
    args = parser.parse_args()
    return benchkit.report(run(args), args.json)


if __name__ == "__main__":
    sys.exit(main())
