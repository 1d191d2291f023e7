"""A low-level tool call over MCP Streamable HTTP with TLS against the same call over stdio,
and 50 concurrent HTTPS clients making 100 calls each.

One simulator, two ``herdr-orchestrator mcp`` processes on it: one on stdio (spoken to through
the MCP SDK's stdio client, as a local host does), one with ``--http`` behind TLS (a ``trustme``
CA and certificate) and a token file (the SDK's ``streamable_http_client``). Both sessions are
initialised once; then ``_dsh_herdr_pane_list`` is called on each in turn, interleaved, so load
from elsewhere hits both alike.

* **HTTPS / stdio**: median of the HTTPS calls against the median of the stdio calls. What
  HTTP adds per call is a POST, the guard's checks, a JSON response and TLS records; the
  target (ours; issue 18 asks for the ratio) is ≤ 3×.
* **50 × 100**: fifty sessions, each its own HTTPS connection pool, call the tool a hundred
  times each, all at once; every call's latency is kept. Targets (ours): zero errors (a
  refused or failed call, an exception) and p99 ≤ 2 s on this 2-core machine, where the
  clients, the server and the simulator share the cores. The baseline is the single-client
  HTTPS median of the first row.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import benchkit
import httpx2
import trustme
from benchkit import Result, median, percentile
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOL = "_dsh_herdr_pane_list"
RATIO_TARGET = 3.0
P99_TARGET = 2.0  # seconds
TOKEN = "bench-token-2c9f4e1a7b"


def _tls(directory: Path) -> tuple[Path, Path, Path]:
    ca = trustme.CA()
    issued = ca.issue_cert("localhost")
    paths = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    ca.cert_pem.write_to_path(str(paths[0]))
    issued.cert_chain_pems[0].write_to_path(str(paths[1]))
    issued.private_key_pem.write_to_path(str(paths[2]))
    return paths


def _start_http(env: dict[str, str], directory: Path, cert: Path, key: Path) -> tuple[Any, str]:
    token_file = directory / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    tls = ["--tls-cert", str(cert), "--tls-key", str(key), "--token-file", str(token_file)]
    with (directory / "http.stderr").open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "mcp", "--http", "127.0.0.1:0", *tls],
            env=env,
            stdin=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"serving MCP at (\S+)", (directory / "http.stderr").read_text())
        if found:
            return process, found.group(1).replace("127.0.0.1", "localhost")
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError((directory / "http.stderr").read_text())


@asynccontextmanager
async def _https(url: str, ca: Path) -> AsyncIterator[ClientSession]:
    import ssl

    context = ssl.create_default_context(cafile=str(ca))
    async with (
        httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {TOKEN}"}, verify=context, timeout=60.0
        ) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def _stdio(env: dict[str, str], errlog: TextIO) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "orchestrator", "mcp"], env=env
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def _call(session: ClientSession) -> float:
    began = time.perf_counter()
    result = await session.call_tool(TOOL, {})
    elapsed = time.perf_counter() - began
    if result.is_error:
        raise RuntimeError(f"{TOOL} failed: {result.content}")
    return elapsed


async def _measure(
    env: dict[str, str],
    url: str,
    ca: Path,
    rounds: int,
    clients: int,
    calls: int,
    log: TextIO,
    server_pid: int,
) -> tuple[list[float], list[float], list[float], int, float, dict[str, str]]:
    async with AsyncExitStack() as stack:
        stdio = await stack.enter_async_context(_stdio(env, log))
        https = await stack.enter_async_context(_https(url, ca))
        for _ in range(5):  # warm both paths (imports, the Herdr client, TLS sessions)
            await _call(stdio)
            await _call(https)
        stdio_times: list[float] = []
        https_times: list[float] = []
        for _ in range(rounds):
            stdio_times.append(await _call(stdio))
            https_times.append(await _call(https))

    loaded: list[float] = []
    errors = 0

    async def client() -> None:
        nonlocal errors
        attempted = 0
        try:
            async with _https(url, ca) as session:
                for _ in range(calls):
                    attempted += 1
                    try:
                        loaded.append(await _call(session))
                    except Exception:
                        errors += 1
        except Exception:  # the session itself failed: every call not attempted is an error
            errors += calls - attempted

    began, own_cpu = time.perf_counter(), time.process_time()
    server_cpu = benchkit.cpu_seconds(server_pid)
    async with anyio.create_task_group() as group:
        for _ in range(clients):
            group.start_soon(client)
    wall = time.perf_counter() - began
    cpu = {  # where the cores went: the server process; this one (clients and simulator)
        "server CPU": f"{benchkit.cpu_seconds(server_pid) - server_cpu:.1f} s",
        "clients + simulator CPU": f"{time.process_time() - own_cpu:.1f} s",
    }
    return stdio_times, https_times, loaded, errors, wall, cpu


def run(args: argparse.Namespace) -> list[Result]:
    rounds = 30 if args.quick else 200
    clients, calls = (10, 20) if args.quick else (50, 100)
    with benchkit.work_dir() as directory, benchkit.simulator(directory) as sim:
        benchkit.api(sim, "workspace.create", cwd=str(directory))
        env = benchkit.clean_env(
            HERDR_SOCKET_PATH=str(sim.socket_path),
            HERDR_BIN_PATH=str(sim.cli_path),
            HERDR_ORCHESTRATOR_STATE_DIR=str(directory / "state"),
            PYTHONPATH=str(Path(__file__).resolve().parent.parent),
        )
        ca, cert, key = _tls(directory)
        process, url = _start_http(env, directory, cert, key)
        try:
            with (directory / "stdio.stderr").open("w") as log:
                stdio_times, https_times, loaded, errors, wall, cpu = anyio.run(
                    _measure, env, url, ca, rounds, clients, calls, log, process.pid
                )
        finally:
            process.terminate()
            process.wait(10)
    stdio_p50, https_p50 = median(stdio_times), median(https_times)
    p99 = percentile(loaded, 99) if loaded else float("inf")
    ratio = https_p50 / stdio_p50
    return [
        Result(
            name=f"tool call over HTTPS ({TOOL})",
            value=https_p50 * 1e3,
            unit="ms",
            baseline_name="the same call over stdio",
            baseline_value=stdio_p50 * 1e3,
            ratio=ratio,
            target=f"<= {RATIO_TARGET:g}x stdio",
            passed=ratio <= RATIO_TARGET,
            details={"rounds": str(rounds), "https p99": benchkit.ms(percentile(https_times, 99))},
        ),
        Result(
            name=f"{clients} HTTPS clients x {calls} calls, p99",
            value=p99 * 1e3,
            unit="ms",
            baseline_name="one HTTPS client, p50",
            baseline_value=https_p50 * 1e3,
            ratio=p99 / https_p50,
            target=f"p99 <= {P99_TARGET * 1e3:g} ms and 0 errors",
            passed=p99 <= P99_TARGET and errors == 0,
            details={
                "errors": str(errors),
                "calls done": str(len(loaded)),
                "p50": benchkit.ms(median(loaded)) if loaded else "-",
                "wall": f"{wall:.2f} s ({len(loaded) / wall:.0f} calls/s)",
                **cpu,
            },
        ),
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
