"""Run every benchmark, each in a fresh interpreter, and print one summary table.

``.venv/bin/python bench/run_all.py [--quick] [--profile] [--only NAME...] [--soak] [--suite]``:
each benchmark runs as ``sys.executable bench/<name>.py --json`` (its own process, so one
benchmark's panes or threads cannot disturb the next), its full output is shown, and the
rows are collected from its JSON line. Exit status 1 when a benchmark failed its target or
broke. Two run only when asked, for their length: ``--soak`` adds ``soak.py`` (ten minutes,
one with ``--quick``) and ``--suite`` adds ``suite_time.py`` (the project's whole suite
under ``pytest -n 2``). CI runs no benchmark.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchkit import JSON_MARKER

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    "cli_startup",
    "machine_cli",
    "ping_latency",
    "record_overhead",
    "split_vs_tmux",
    "pane_read",
    "idle_cpu",
    "agent_start",
    "plugin_fixtures",
    "agent_time_scale",
    "agent_author_example",
    "tool_calls",
    "agent_tools",
    "managed_agents",
    "remote_spawn",
    "tool_list",
    "mcp_http",
    "real_pi",
    "scale_panes",
    "spawn_fanout",
    "event_fanout",
    "demo_setup",
]
#: run only with ``--soak`` / ``--suite``
SOAK, SUITE = "soak", "suite_time"
#: most benchmarks finish well within a minute; this only bounds a hung one
TIMEOUT = 180.0
#: the long ones (seconds): 500 panes, 2 x 100 agents, ten minutes, the whole suite
TIMEOUTS = {"scale_panes": 600.0, "spawn_fanout": 900.0, SOAK: 900.0, SUITE: 3600.0}


def run_one(name: str, extra: list[str]) -> tuple[list[dict[str, Any]], str | None, float]:
    """(rows, error or None, seconds) of one benchmark script."""
    start = time.perf_counter()
    timeout = TIMEOUTS.get(name, TIMEOUT)
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / f"{name}.py"), "--json", *extra],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return [], f"timed out after {timeout:g} s", time.perf_counter() - start
    seconds = time.perf_counter() - start
    rows: list[dict[str, Any]] | None = None
    for line in done.stdout.splitlines():
        if line.startswith(JSON_MARKER):
            rows = json.loads(line[len(JSON_MARKER) :])
        else:
            print(f"  {line}")
    if done.returncode not in (0, 1) or rows is None:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return [], tail[0], seconds
    return rows, None, seconds


def verdict(row: dict[str, Any]) -> str:
    """PASS, FAIL or INFO of a row."""
    passed = row["passed"]
    return "INFO" if passed is None else ("PASS" if passed else "FAIL")


def table(rows: list[dict[str, Any]]) -> str:
    """The summary as a Markdown table (readable as plain text too)."""
    header = ["benchmark", "measured", "baseline (same run)", "ratio", "target", "result"]
    body = [
        [
            row["name"],
            f"{row['value']:.3f} {row['unit']}",
            f"{row['baseline_name']}: {row['baseline_value']:.3f} {row['unit']}",
            f"{row['ratio']:.2f}x",
            row["target"],
            verdict(row),
        ]
        for row in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def fmt(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt(header), rule, *(fmt(line) for line in body)])


def main() -> int:
    """Run everything; print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--profile", action="store_true", help="pass --profile on")
    parser.add_argument(
        "--only", nargs="+", choices=[*BENCHMARKS, SOAK, SUITE], help="run just these"
    )
    parser.add_argument("--soak", action="store_true", help="also run soak.py (10 min)")
    parser.add_argument("--suite", action="store_true", help="also time the whole test suite")
    args = parser.parse_args()
    extra = [flag for flag, on in (("--quick", args.quick), ("--profile", args.profile)) if on]
    rows: list[dict[str, Any]] = []
    broken: list[str] = []
    names = list(args.only or BENCHMARKS)
    names += [name for name, on in ((SOAK, args.soak), (SUITE, args.suite)) if on]
    for name in dict.fromkeys(names):
        print(f"== {name}", flush=True)
        got, error, seconds = run_one(name, extra)
        print(f"   ({seconds:.1f} s)", flush=True)
        rows.extend(got)
        if error is not None:
            broken.append(f"{name}: {error}")
    print()
    print(table(rows))
    for problem in broken:
        print(f"BROKEN {problem}")
    failed = [row["name"] for row in rows if row["passed"] is False]
    print(
        f"\n{len(rows)} rows: {sum(1 for r in rows if r['passed'])} PASS, {len(failed)} FAIL, "
        f"{len(broken)} broken"
    )
    return 1 if failed or broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
