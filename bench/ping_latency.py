"""Socket round trip: `ping` on the simulator vs a bare asyncio line-echo server.

Each request opens a connection, sends one JSON line and reads one line back, exactly as
Herdr's CLI does (``herdr_sim.client.request``). The baseline is the smallest server of
the same shape — an asyncio Unix-socket server on its own thread that parses the line and
answers a JSON line — measured with the same client in the same run, in alternating
blocks. Target (from the issue): simulator p50 <= 1 ms; p99 is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import benchkit
from benchkit import Result, median, ms, percentile

from herdr_sim.client import request

TARGET_P50_MS = 1.0


@contextmanager
def echo_server(path: Path) -> Iterator[Path]:
    """A minimal JSON-line server (one request per connection) on its own loop thread."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    stop: asyncio.Future[None] | None = None

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        req = json.loads(line)
        writer.write(json.dumps({"id": req["id"], "result": {"type": "pong"}}).encode() + b"\n")
        await writer.drain()
        writer.close()

    async def serve() -> None:
        nonlocal stop
        stop = loop.create_future()
        server = await asyncio.start_unix_server(handle, path=str(path))
        ready.set()
        async with server:
            await stop

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield path
    finally:

        def finish() -> None:
            if stop is not None and not stop.done():
                stop.set_result(None)

        loop.call_soon_threadsafe(finish)
        thread.join(10)
        loop.close()


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    blocks, per_block = (4, 250) if args.quick else (10, 500)
    sim_times: list[float] = []
    echo_times: list[float] = []
    with (
        benchkit.work_dir() as directory,
        benchkit.simulator(directory) as sim,
        echo_server(directory / "echo.sock") as echo,
    ):
        pong = request(sim.socket_path, "ping")["result"]
        assert pong["type"] == "pong", pong
        for path in (sim.socket_path, echo) * 200:  # warm-up
            request(path, "ping")
        for _ in range(blocks):
            for path, times in ((sim.socket_path, sim_times), (echo, echo_times)):
                for _ in range(per_block):
                    times.append(benchkit.timed(partial(request, path, "ping")))

    p50, p99 = median(sim_times), percentile(sim_times, 99)
    base50, base99 = median(echo_times), percentile(echo_times, 99)
    return [
        Result(
            name="ping round trip p50",
            value=p50 * 1e3,
            unit="ms",
            baseline_name="asyncio echo server p50",
            baseline_value=base50 * 1e3,
            ratio=p50 / base50,
            target=f"p50 <= {TARGET_P50_MS} ms",
            passed=p50 * 1e3 <= TARGET_P50_MS,
            details={
                "simulator p50 / p99 / max": f"{ms(p50)} / {ms(p99)} / {ms(max(sim_times))}",
                "echo p50 / p99": f"{ms(base50)} / {ms(base99)}",
                "p99 ratio": f"{p99 / base99:.2f}x",
                "requests": f"{len(sim_times)} each",
            },
        )
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
