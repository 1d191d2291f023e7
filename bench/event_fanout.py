"""Event fan-out: 50 subscribers to output and lifecycle events while 10 panes print.

One simulator, ten panes in one tab, each running a small printer (a bash loop that clears
the screen and shows each line it reads, so the visible screen is the latest line). Every
subscriber is one ``events.subscribe`` connection with eleven subscriptions: Herdr has no
``pane.output_changed`` subscription (its ``pane_output_changed`` event has no emitter), so
output is ``pane.output_matched`` on each of the ten panes (regex ``^M\\d+$`` on the visible
screen: edge-triggered, it re-arms on a read without a match), plus the lifecycle types
``pane.created`` and ``pane.closed``. Each round the benchmark sends a marker line
``M<n>`` to all ten panes and, 100 ms later, a line that re-arms the match, and splits a
pane and closes it again (two lifecycle events); rounds start every 200 ms.

Delivery latency, per event and subscriber, is the time the subscriber read the event
minus its cause: for output, the moment the marker was sent to the pane (so it includes
bash and the pty, a millisecond); for lifecycle events, the moment the server published
it (a listener on the simulator's event hub). One selector thread reads every subscriber
socket, in a process of its own (``--in-process``: a thread of the simulator's process, as
before 2026-12-06), and only timestamps what it receives; the lines are decoded after the
rounds, so the benchmark's own JSON decoding does not delay its later reads. The same
rounds run first with one subscriber (the baseline), then with fifty, on the same
simulator. Target (issue 17): p99 <= 20 ms with fifty, and no subscriber dropped:
each one still connected at the end and holding every marker and lifecycle event sent.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import selectors
import socket
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import benchkit
from benchkit import Result, percentile
from idle_cpu import fill_tab

from herdr_sim import Simulator

SUBSCRIBERS = 50
PANES = 10
TARGET_P99 = 0.020
PERIOD = 0.2
REARM_AFTER = 0.1
PRINTER = "stty -echo; while IFS= read -r l; do printf '\\033[2J\\033[H%s' \"$l\"; done"
LIFECYCLE = ("pane.created", "pane.closed")


@dataclass
class Phase:
    """What one phase sent and what its subscribers read."""

    sent: dict[tuple[str, str], float] = field(default_factory=dict)  # (kind, key) -> cause
    received: dict[int, dict[tuple[str, str], float]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    closed: set[int] = field(default_factory=set)  # subscribers whose stream ended
    #: lines each subscriber has received so far (one per event), counted while reading
    lines: dict[int, int] = field(default_factory=lambda: defaultdict(int))


def subscribe(socket_path: Path, panes: list[str]) -> socket.socket:
    """One subscriber connection, its acknowledgement read; the socket is non-blocking."""
    subscriptions: list[dict[str, Any]] = [{"type": kind} for kind in LIFECYCLE]
    subscriptions += [
        {
            "type": "pane.output_matched",
            "pane_id": pane,
            "source": "visible",
            "match": {"type": "regex", "value": r"^M\d+$"},
        }
        for pane in panes
    ]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(str(socket_path))
    request = {
        "id": "sub",
        "method": "events.subscribe",
        "params": {"subscriptions": subscriptions},
    }
    sock.sendall(json.dumps(request).encode() + b"\n")
    ack = b""
    while not ack.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise RuntimeError("subscription closed before its acknowledgement")
        ack += chunk
    if json.loads(ack)["result"]["type"] != "subscription_started":
        raise RuntimeError(f"not subscribed: {ack!r}")
    sock.setblocking(False)
    return sock


def event_key(line: bytes) -> tuple[str, str] | None:
    """(kind, key) of one event line: the pane and marker, or the pane created/closed."""
    message = json.loads(line)
    kind, data = message.get("event"), message.get("data", {})
    if kind == "pane.output_matched":
        return (f"M:{data['pane_id']}", data["matched_line"].strip())
    if kind == "pane_created":
        return ("pane_created", data["pane"]["pane_id"])
    if kind == "pane_closed":
        return ("pane_closed", data["pane_id"])
    return None


def read_all(socks: list[socket.socket], phase: Phase, stop: threading.Event) -> None:
    """Read every subscriber's events until ``stop`` (one thread, one selector).

    While the rounds run the reader only receives and timestamps what arrives; the lines
    are decoded after ``stop``: fifty JSON decodes per event in the reading loop made the
    later sockets' reads (and so their timestamps) wait for the benchmark's own decoding.
    """
    selector = selectors.DefaultSelector()
    chunks: list[tuple[int, float, bytes]] = []
    for index, sock in enumerate(socks):
        selector.register(sock, selectors.EVENT_READ, index)
    while not stop.is_set() and len(phase.closed) < len(socks):
        for key, _ in selector.select(timeout=0.05):
            now = time.perf_counter()
            try:
                chunk = key.fileobj.recv(1 << 16)  # type: ignore[union-attr]
            except BlockingIOError:
                continue
            if not chunk:
                phase.closed.add(key.data)
                selector.unregister(key.fileobj)
                continue
            chunks.append((key.data, now, chunk))
            phase.lines[key.data] += chunk.count(b"\n")
    selector.close()
    buffers = dict.fromkeys(range(len(socks)), b"")
    for index, now, chunk in chunks:
        *lines, buffers[index] = (buffers[index] + chunk).split(b"\n")
        for line in lines:
            found = event_key(line)
            if found is not None:
                phase.received[index].setdefault(found, now)


def _subscribe_and_read(
    socket_path: Path, panes: list[str], subscribers: int, conn: Connection
) -> None:
    """The subscriber process: subscribe, say so, read until told to stop, send what it read."""
    socks = [subscribe(socket_path, panes) for _ in range(subscribers)]
    phase = Phase()
    stop = threading.Event()
    reader = threading.Thread(target=read_all, args=(socks, phase, stop), daemon=True)
    reader.start()
    conn.send("subscribed")
    expected = conn.recv()  # the rounds are over: this many events were sent
    wait_for_all(phase, subscribers, expected)
    stop.set()
    reader.join(timeout=5)
    for sock in socks:
        sock.close()
    conn.send((dict(phase.received), phase.closed))


def wait_for_all(phase: Phase, subscribers: int, expected: int) -> None:
    """Until every subscriber read ``expected`` events, for at most 2 s (the last arrive)."""
    deadline = time.perf_counter() + 2.0
    while time.perf_counter() < deadline and not all(
        phase.lines[i] >= expected for i in range(subscribers)
    ):
        time.sleep(0.05)


@contextmanager
def subscribers_of(
    sim: Simulator, panes: list[str], subscribers: int, phase: Phase, in_process: bool
) -> Iterator[None]:
    """``subscribers`` streams reading into ``phase`` while the block runs.

    They are read in a process of their own (a fresh interpreter) unless ``in_process``:
    Herdr's subscribers are other programs, and fifty streams' JSON decoded on a thread of
    the simulator's process would share its GIL and delay the deliveries being measured.
    Both processes read ``time.perf_counter`` (``CLOCK_MONOTONIC``, one clock per machine).
    """
    if in_process:
        socks = [subscribe(sim.socket_path, panes) for _ in range(subscribers)]
        stop = threading.Event()
        reader = threading.Thread(target=read_all, args=(socks, phase, stop), daemon=True)
        reader.start()
        try:
            yield
            wait_for_all(phase, subscribers, len(phase.sent))
        finally:
            stop.set()
            reader.join(timeout=5)
            for sock in socks:
                sock.close()
        return
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    args = (sim.socket_path, panes, subscribers, child)
    process = context.Process(target=_subscribe_and_read, args=args, daemon=True)
    process.start()
    child.close()
    try:
        if not parent.poll(60) or parent.recv() != "subscribed":
            raise RuntimeError("the subscriber process did not subscribe within 60 s")
        yield
        parent.send(len(phase.sent))
        if not parent.poll(30):
            raise RuntimeError("the subscriber process did not report what it read")
        received, closed = parent.recv()
        phase.received.update(received)
        phase.closed.update(closed)
    finally:
        process.join(10)
        if process.is_alive():
            process.kill()
            process.join(10)


def run_phase(
    sim: Simulator, panes: list[str], subscribers: int, rounds: int, in_process: bool
) -> Phase:
    """Subscribe ``subscribers`` times, run ``rounds`` rounds, collect what each one read."""
    phase = Phase()

    def published(envelope: dict[str, Any]) -> None:  # on the simulator's thread
        kind, data = envelope["event"], envelope["data"]
        if kind == "pane_created":
            phase.sent.setdefault(("pane_created", data["pane"]["pane_id"]), time.perf_counter())
        elif kind == "pane_closed":
            phase.sent.setdefault(("pane_closed", data["pane_id"]), time.perf_counter())

    sim.run_in_loop(lambda rt: rt.hub.add_listener(published))
    try:
        with subscribers_of(sim, panes, subscribers, phase, in_process):
            for n in range(rounds):
                began = time.perf_counter()
                for pane in panes:
                    marker = f"M{n}"
                    phase.sent[(f"M:{pane}", marker)] = time.perf_counter()
                    benchkit.api(sim, "pane.send_text", pane_id=pane, text=marker + "\n")
                split = benchkit.api(sim, "pane.split", target_pane_id=panes[0], direction="down")
                benchkit.api(sim, "pane.close", pane_id=split["pane"]["pane_id"])
                time.sleep(max(0.0, began + REARM_AFTER - time.perf_counter()))
                for pane in panes:
                    benchkit.api(sim, "pane.send_text", pane_id=pane, text="-\n")
                time.sleep(max(0.0, began + PERIOD - time.perf_counter()))
    finally:
        sim.run_in_loop(lambda rt: rt.hub.remove_listener(published))
    return phase


def latencies(
    phase: Phase, subscribers: int, only: str | None = None
) -> tuple[list[float], int, int]:
    """(every delivery latency in s, deliveries missing, subscribers that missed any).

    ``only``: ``"output"`` (the markers) or ``"lifecycle"``; None: both.
    """
    sent = {
        key: cause
        for key, cause in phase.sent.items()
        if only is None or (key[0].startswith("M:")) == (only == "output")
    }
    values: list[float] = []
    missing = short = 0
    for index in range(subscribers):
        got = phase.received[index]
        lost = sum(1 for key in sent if key not in got)
        missing += lost
        short += 1 if lost or index in phase.closed else 0
        values.extend(got[key] - cause for key, cause in sent.items() if key in got)
    return values, missing, short


def spread(values: list[float]) -> str:
    """p50 / p99 / max in ms."""
    picks = (percentile(values, 50), percentile(values, 99), max(values))
    return " / ".join(f"{v * 1e3:.2f}" for v in picks) + " ms"


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    rounds = 15 if args.quick else 50
    with benchkit.work_dir() as directory, benchkit.simulator(directory) as sim:
        created = benchkit.api(sim, "workspace.create", cwd=str(directory))
        panes = fill_tab(sim, created["root_pane"]["pane_id"], PANES)
        for pane in panes:
            benchkit.wait_prompt(sim, pane)
            benchkit.api(sim, "pane.send_text", pane_id=pane, text=PRINTER + "\n")
        for pane in panes:  # the printer runs: its first line clears the screen
            benchkit.api(sim, "pane.send_text", pane_id=pane, text="-\n")
            benchkit.wait_output(sim, pane, r"^-$")
        one = run_phase(sim, panes, 1, rounds, args.in_process)
        many = run_phase(sim, panes, SUBSCRIBERS, rounds, args.in_process)
    one_values, one_missing, _ = latencies(one, 1)
    values, missing, short = latencies(many, SUBSCRIBERS)
    p99, base_p99 = percentile(values, 99), percentile(one_values, 99)
    dropped = len(many.closed)
    return [
        Result(
            name=f"event delivery p99, {SUBSCRIBERS} subscribers, {PANES} panes printing",
            value=p99 * 1e3,
            unit="ms",
            baseline_name="one subscriber",
            baseline_value=base_p99 * 1e3,
            ratio=p99 / base_p99,
            target=f"p99 <= {TARGET_P99 * 1e3:g} ms, no subscriber dropped",
            passed=p99 <= TARGET_P99 and not dropped and not missing,
            details={
                "p50 / p99 / max, 50 subscribers": spread(values),
                "  output markers only": spread(latencies(many, SUBSCRIBERS, "output")[0]),
                "  lifecycle only": spread(latencies(many, SUBSCRIBERS, "lifecycle")[0]),
                "p50 / p99 / max, 1 subscriber": spread(one_values),
                "  output markers only ": spread(latencies(one, 1, "output")[0]),
                "  lifecycle only ": spread(latencies(one, 1, "lifecycle")[0]),
                "events sent per phase (markers + lifecycle)": str(len(many.sent)),
                "deliveries, 50 subscribers": str(len(values)),
                "deliveries missing (50 / 1)": f"{missing} / {one_missing}",
                "subscribers that missed any / whose stream ended": f"{short} / {dropped}",
                "rounds": f"{rounds}, every {PERIOD * 1e3:g} ms",
            },
        )
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
