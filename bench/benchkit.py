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
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from herdr_sim import Simulator
from herdr_sim.client import call

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


def api(sim: Simulator, method: str, **params: Any) -> dict[str, Any]:
    """One request over the simulator's socket; the result, or ``RequestFailed``."""
    return call(sim.socket_path, method, params)


def wait_prompt(sim: Simulator, pane_id: str, timeout: float = 10.0) -> None:
    """Block (server side) until the pane's screen shows the shell prompt."""
    api(
        sim,
        "pane.wait_for_output",
        pane_id=pane_id,
        source="visible",
        match={"type": "regex", "value": PROMPT_REGEX},
        timeout_ms=int(timeout * 1000),
    )


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
    args = parser.parse_args()
    return report(run(args), args.json)
