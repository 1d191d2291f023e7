"""Shared plumbing of the benchmarks: results, a private simulator, statistics, output.

Every benchmark in this directory is a script (``.venv/bin/python bench/<name>.py``) whose
``run()`` returns :class:`Result` rows. Each row compares the measured value with a
baseline measured in the same run (the RATIO) and with the benchmark's target
(PASS/FAIL). ``--json`` prints the rows as one machine-readable line as well, which is
how ``bench/run_all.py`` collects them.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from herdr_sim import Simulator
from herdr_sim.client import call
from herdr_sim.machines.endpoints import EndpointCatalog
from herdr_sim.machines.host import SshHost
from herdr_sim.machines.ssh_servers import new_ssh_host
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.spawn import WORKSPACE_LABEL
from orchestrator.agent_tools.start_watch import SESSION_POLL_S
from orchestrator.client.errors import NotFound
from orchestrator.client.protocol.startup import POLL_INTERVAL as START_POLL_INTERVAL
from orchestrator.client.sync import HerdrClient
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import run_tool

#: prefix of the machine-readable line ``--json`` prints (``run_all.py`` looks for it)
JSON_MARKER = "BENCH-JSON "

#: the prompt line of the deterministic pane shell (and of the tmux baseline's bash)
PROMPT_REGEX = r"^\$ ?$"


@dataclass
class Result:
    """One benchmark row: a measurement, its same-run baseline, and its target."""

    name: str
    value: float
    unit: str
    baseline_name: str
    baseline_value: float
    ratio: float
    target: str
    passed: bool | None  # None: no target to judge (informational row)
    details: dict[str, str] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """PASS, FAIL or INFO."""
        if self.passed is None:
            return "INFO"
        return "PASS" if self.passed else "FAIL"


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0 < q <= 100) of ``values``."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    """The median (nearest-rank 50th percentile, a value that was actually measured)."""
    return percentile(values, 50)


def ms(seconds: float) -> str:
    """Seconds as milliseconds, three significant decimals."""
    return f"{seconds * 1e3:.3f} ms"


def clean_env(**extra: str) -> dict[str, str]:
    """A small, fixed environment for every process a benchmark starts.

    Only ``PATH`` comes from the caller; Python start-up variables (``PYTHONPATH``,
    ``PYTHONDONTWRITEBYTECODE``…) are left out so both sides of a comparison start alike.
    """
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
    }
    env.update(extra)
    return env


@contextmanager
def work_dir() -> Iterator[Path]:
    """A short private directory under /tmp (Unix socket paths are limited to ~108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="hb-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextmanager
def simulator(directory: Path, **settings: Any) -> Iterator[Simulator]:
    """A simulator on ``directory/herdr.sock`` with its own HOME; stopped on exit."""
    home = directory / "home"
    home.mkdir(exist_ok=True)
    env = clean_env(HOME=str(home), HERDR_SIM_CONFIG_DIR=str(directory / "cfg"))
    sim = Simulator(
        socket_path=directory / "herdr.sock",
        base_env=env,
        runtime_dir=directory / "rt",
        **settings,
    )
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()
    sim.check()


class SimulatorLike(Protocol):
    """What a benchmark's client side needs of a simulator: its socket and its ``herdr``."""

    @property
    def socket_path(self) -> Path: ...

    @property
    def cli_path(self) -> Path: ...


@dataclass(frozen=True)
class SimulatorProcess:
    """A simulator served by a child process of its own (:func:`simulator_process`)."""

    socket_path: Path
    cli_path: Path
    pid: int


def _serve(directory: Path, settings: dict[str, Any], conn: Connection) -> None:
    """The child of :func:`simulator_process`: serve until the parent says stop."""
    with simulator(directory, **settings) as sim:
        conn.send((sim.socket_path, sim.cli_path))
        conn.recv()
    conn.send("stopped")  # after the stop and ``check()``: nothing was left behind


@contextmanager
def simulator_process(directory: Path, **settings: Any) -> Iterator[SimulatorProcess]:
    """:func:`simulator`, served by a fresh interpreter of its own (``spawn``, not ``fork``).

    Herdr is a process of its own beside its clients; a simulator on a thread of the
    benchmark's process shares one GIL with the client side it is measured against, so a
    client that runs Python (the tool layer) slows the server down too, and a client that
    does not (the direct calls) does not. The rows comparing the two serve from here.
    """
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_serve, args=(directory, settings, child), daemon=True)
    process.start()
    child.close()
    try:
        if not parent.poll(60):
            raise RuntimeError("the simulator process did not start within 60 s")
        socket_path, cli_path = parent.recv()
    except BaseException:
        process.kill()
        process.join(10)
        raise
    try:
        yield SimulatorProcess(socket_path, cli_path, process.pid or 0)
    finally:
        parent.send("stop")
        stopped = parent.poll(60) and parent.recv() == "stopped"
        process.join(30)
        if process.is_alive():
            process.kill()
            process.join(10)
        if not stopped:
            raise RuntimeError(f"the simulator process failed at stop (exit {process.exitcode})")


def fleet_simulator(
    directory: Path, in_process: bool, **settings: Any
) -> AbstractContextManager[SimulatorLike]:
    """The simulator of a tool-layer-against-direct row: its own process unless ``in_process``."""
    if in_process:
        return simulator(directory, **settings)
    return simulator_process(directory, **settings)


def api(sim: SimulatorLike, method: str, **params: Any) -> dict[str, Any]:
    """One request over the simulator's socket; the result, or ``RequestFailed``."""
    return call(sim.socket_path, method, params)


def wait_output(
    sim: SimulatorLike, pane_id: str, regex: str, source: str = "visible", timeout: float = 10.0
) -> None:
    """Block (server side) until a line of the pane's ``source`` matches ``regex``."""
    api(
        sim,
        "pane.wait_for_output",
        pane_id=pane_id,
        source=source,
        match={"type": "regex", "value": regex},
        timeout_ms=int(timeout * 1000),
    )


def wait_prompt(sim: SimulatorLike, pane_id: str, timeout: float = 10.0) -> None:
    """Block (server side) until the pane's screen shows the shell prompt."""
    wait_output(sim, pane_id, PROMPT_REGEX, timeout=timeout)


def cpu_seconds(*pids: int) -> float:
    """Summed user + system CPU seconds of the given processes so far (Linux ``/proc``); a
    process that is gone counts 0."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def proc_status(field: str) -> int:
    """One integer field of ``/proc/self/status`` (``VmRSS`` in KiB, ``Threads``…)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise LookupError(field)


def rss_mib() -> float:
    """This process's resident memory, MiB."""
    return proc_status("VmRSS") / 1024


def timed(fn: Callable[[], object]) -> float:
    """Seconds ``fn()`` took (``perf_counter``)."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# -- fleets of fake agents: herdr_spawn_agent against the same Herdr calls made directly --

#: the simulator's agent settle delay and Herdr's submit delay in the agent benchmarks
AGENT_SETTLE = 0.5
AGENT_SUBMIT_DELAY = 0.3
#: every wait of a fleet benchmark (agent start, prompt, tool call)
AGENT_TIMEOUT_MS = 60_000


def agent_manifests() -> Path | None:
    """Herdr's detection manifests (``../shared/contracts/agent-detection``), if present."""
    env = os.environ.get("HERDR_CONTRACTS_DIR")
    base = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "contracts"
    found = base / "agent-detection"
    return found if found.is_dir() else None


def agent_sim_settings() -> dict[str, Any]:
    """:func:`simulator` settings of the agent benchmarks (settle, submit delay, manifests)."""
    return {
        "agent_start_settle": AGENT_SETTLE,
        "agent_prompt_submit_delay": AGENT_SUBMIT_DELAY,
        "agent_manifests_dir": agent_manifests(),
        "persist": False,
    }


def git_repo(path: Path) -> Path:
    """A fresh git repository with one commit at ``path`` (the tasks' ``cwd``)."""
    path.mkdir()
    (path / "README.md").write_text("bench\n")
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for argv in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *ident, *argv], cwd=path, check=True, capture_output=True)
    return path


def agent_tools_env(directory: Path, sim: SimulatorLike, max_concurrent: int) -> dict[str, str]:
    """The ``HERDR_ORCHESTRATOR_*`` environment of the agent tools under ``directory``."""
    return clean_env(
        HOME=str(directory / "home"),
        XDG_CONFIG_HOME=str(directory / "config"),
        HERDR_SOCKET_PATH=str(sim.socket_path),
        HERDR_BIN_PATH=str(sim.cli_path),
        HERDR_ORCHESTRATOR_STATE_DIR=str(directory / "state"),
        HERDR_ORCHESTRATOR_MAX_CONCURRENT=str(max_concurrent),
        HERDR_ORCHESTRATOR_TRANSPORT="socket",
    )


def agent_tools_context(sim: SimulatorLike, env: dict[str, str]) -> AgentToolsContext:
    """A fresh agent-tools context with its own socket client (what one MCP call builds)."""
    client = HerdrClient.build("socket", socket_path=sim.socket_path, herdr=sim.cli_path, env=env)
    return AgentToolsContext.create(env, client=client)


def spawn_on(context: ToolContext, repo: Path, name: str) -> dict[str, Any]:
    """One ``herdr_spawn_agent`` on ``context`` (through ``run_tool``); it must complete."""
    arguments = {"prompt": "say ok", "cwd": str(repo), "name": name, "timeout_ms": AGENT_TIMEOUT_MS}
    result = run_tool("herdr_spawn_agent", arguments, context)
    if result.get("status") != "completed":
        raise RuntimeError(f"spawn {name} did not complete: {result}")
    return result


def spawn_via_tool(
    sim: SimulatorLike, env: dict[str, str], repo: Path, name: str
) -> dict[str, Any]:
    """One ``herdr_spawn_agent`` (through ``run_tool``, a fresh context as one MCP call has)."""
    return spawn_on(agent_tools_context(sim, env), repo, name)


def spawn_direct(sim: SimulatorLike, workspace: str, repo: Path, name: str) -> None:
    """The Herdr calls under one spawn, straight over the socket.

    ``tab.create`` -> ``agent.start``, ``agent.get`` every 100 ms until ``interactive_ready``
    (the loop Herdr's CLI runs around the method) -> ``agent.get`` every 50 ms until pi's
    session report -> ``agent.prompt`` with ``wait``. The session wait is what any client
    must do before it prompts pi (real pi drops a prompt typed before its session started,
    and its integration's report is the only sign: ``start_watch.wait_for_session``); the
    rows before 2026-12-06 left it out, and compared the tool, which waits, with a client
    that did not (``docs/benchmarks.md``).
    """
    tab = api(sim, "tab.create", workspace_id=workspace, cwd=str(repo), label=name, focus=False)
    pane = tab["root_pane"]["pane_id"]
    api(sim, "agent.start", name=name, kind="pi", pane_id=pane, timeout_ms=AGENT_TIMEOUT_MS)
    deadline = time.perf_counter() + AGENT_TIMEOUT_MS / 1000
    while not api(sim, "agent.get", target=name)["agent"].get("interactive_ready"):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{name} never became interactive_ready")
        time.sleep(START_POLL_INTERVAL)
    while api(sim, "agent.get", target=name)["agent"].get("agent_session") is None:
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{name} never reported its session")
        time.sleep(SESSION_POLL_S)
    wait = {"until": ["idle", "done", "blocked"], "timeout_ms": AGENT_TIMEOUT_MS}
    params = {"target": name, "text": "say ok", "wait": wait}
    # the server bounds the wait; the socket must outlast it (``api`` gives up after 30 s)
    done = call(sim.socket_path, "agent.prompt", params, timeout=AGENT_TIMEOUT_MS / 1000 + 10)
    status = done["agent"]["agent_status"]
    if status not in ("idle", "done"):
        raise RuntimeError(f"{name} settled as {status}")


class BatchFailed(RuntimeError):
    """Some jobs of a batch raised or did not end in time."""

    def __init__(self, wall: float, errors: list[BaseException], hung: int) -> None:
        super().__init__(f"batch failed ({len(errors)} errors, {hung} hung): {errors[:3]}")
        self.wall, self.errors, self.hung = wall, errors, hung

    def summary(self) -> str:
        """How many jobs failed how (the error type and its first words), most common first."""
        kinds = Counter(f"{type(e).__name__}: {str(e)[:60]}" for e in self.errors)
        parts = [f"{count}x {kind}" for kind, count in kinds.most_common(3)]
        if self.hung:
            parts.append(f"{self.hung} still running")
        return "; ".join(parts)


def run_batch(jobs: Sequence[Callable[[], object]], join_timeout: float = 120.0) -> float:
    """Wall seconds from a common start until the last of ``jobs`` (one thread each) ends."""
    barrier = threading.Barrier(len(jobs) + 1)
    errors: list[BaseException] = []

    def run(job: Callable[[], object]) -> None:
        barrier.wait()
        try:
            job()
        except BaseException as exc:  # reported after the batch
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    barrier.wait()
    began = time.perf_counter()
    deadline = began + join_timeout
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.perf_counter()))
    wall = time.perf_counter() - began
    hung = sum(1 for thread in threads if thread.is_alive())
    if errors or hung:
        raise BatchFailed(wall, errors, hung)
    return wall


def agents_workspace(sim: SimulatorLike) -> str:
    """The id of the workspace ``herdr_spawn_agent`` puts its tabs in."""
    workspaces = api(sim, "workspace.list")["workspaces"]
    return str(next(w["workspace_id"] for w in workspaces if w.get("label") == WORKSPACE_LABEL))


def close_agent_tabs(sim: SimulatorLike, workspace: str) -> None:
    """Close every tab of ``workspace`` but its first (and with them the agents)."""
    tabs = api(sim, "tab.list", workspace_id=workspace)["tabs"]
    for tab in tabs[1:]:
        with suppress(NotFound):  # its last pane exited meanwhile, which closed it
            api(sim, "tab.close", tab_id=tab["tab_id"])


# -- a saved machine: a second simulator behind an SSH server, in the local catalog --


@contextmanager
def saved_machine(
    directory: Path, remote: Simulator, env: dict[str, str], name: str = "box"
) -> Iterator[SshHost]:
    """``remote`` behind an SSH server, saved as machine ``name`` in ``env``'s catalog.

    The server keeps its files under ``directory`` (``ssh``, ``rhome``, ``rcfg``); the
    client's SSH config goes to ``env``'s ``HERDR_SIM_CONFIG_DIR``. Stopped on exit.
    """
    host = new_ssh_host(directory / "ssh", directory / "rhome", directory / "rcfg", name)
    host.start()
    try:
        host.install_remote_herdr()
        host.link_session(remote.socket_path)
        config = Path(env["HERDR_SIM_CONFIG_DIR"])
        (config / "ssh").mkdir(mode=0o700, parents=True, exist_ok=True)
        (config / "ssh" / "config").write_text(host.client_config())
        catalog = EndpointCatalog.load(env)
        catalog.add(name, name, "default")
        catalog.store(env)
        yield host
    finally:
        host.stop()


def ssh_server_name(host: SshHost) -> str:
    """Which SSH server played the machine (a detail row of the machine benchmarks)."""
    return "OpenSSH sshd" if type(host) is SshHost else "asyncssh, in-process"


def format_result(result: Result) -> str:
    """The human-readable block of one row."""
    baseline = f"baseline {result.baseline_name}: {result.baseline_value:.3f} {result.unit}"
    lines = [
        f"{result.name}: {result.value:.3f} {result.unit}  ({baseline})",
        f"  RATIO {result.ratio:.2f}x   target {result.target}   {result.verdict}",
    ]
    lines.extend(f"  {key}: {value}" for key, value in result.details.items())
    return "\n".join(lines)


def report(results: list[Result], as_json: bool) -> int:
    """Print the rows; exit status 1 when any row failed its target."""
    for result in results:
        print(format_result(result))
    if as_json:
        print(JSON_MARKER + json.dumps([asdict(result) for result in results]))
    sys.stdout.flush()
    return 1 if any(result.passed is False for result in results) else 0


def main(run: Callable[[argparse.Namespace], list[Result]], doc: str | None) -> int:
    """Parse the common options, run the benchmark, print its rows."""
    parser = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0])
    parser.add_argument("--json", action="store_true", help="also print one JSON line")
    parser.add_argument(
        "--quick", action="store_true", help="fewer repetitions (a smoke run, noisier numbers)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also print where the time goes (when supported)"
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="serve the simulator on a thread of the benchmark's own process, sharing its GIL"
        " (agent_tools, spawn_fanout, event_fanout; their rows before 2026-12-06)",
    )
    args = parser.parse_args()
    return report(run(args), args.json)
