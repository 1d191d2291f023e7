"""Idle CPU of the simulator hosting 200 live panes.

The simulator runs in this process (its own thread); 200 panes — real bash processes on
real ptys — are spread over 4 workspaces x 5 tabs x 10 panes, a shape a real session might have.
Once every pane shows its prompt and a short settle has passed, the process's
CPU time is sampled over a fixed window while nothing talks to the simulator: that is
the cost of keeping idle panes alive (pty readers, pidfds, timers), as % of one core.
The baseline is the same measurement on the same simulator with one pane, taken
before the other 199 are created, so the RATIO shows how idle cost grows with panes.
The agent-detection loop's own counters are printed too: its periodic tick checks only
panes that changed (issue 17), so over the idle window it should check none of the 200.
Target (from the issue): < 5% of one core. ``bench/scale_panes.py`` runs the same measurement
with 500 panes (:func:`measure`); both report memory per pane.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import benchkit
from benchkit import Result

from herdr_sim import Simulator
from herdr_sim.services.detection_loop import DetectionLoop

TARGET_PERCENT = 5.0
WORKSPACES, TABS, PANES_PER_TAB = 4, 5, 10
#: below this a CPU share is noise: the ratio uses at least this on both sides, so two
#: unmeasurably small shares compare as 1.00x ("no growth with panes")
FLOOR_PERCENT = 0.01


def cpu_percent(window: float) -> float:
    """This process's CPU time over ``window`` seconds of sleep, as % of one core."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    time.sleep(window)
    cpu1, wall1 = time.process_time(), time.perf_counter()
    return (cpu1 - cpu0) / (wall1 - wall0) * 100


def fill_tab(sim: Simulator, root: str, count: int) -> list[str]:
    """Split ``root``'s tab into ``count`` panes, level by level, so none gets tiny."""
    panes = [root]
    level = 0
    while len(panes) < count:
        direction = "right" if level % 2 == 0 else "down"
        for target in list(panes):
            if len(panes) == count:
                break
            new = benchkit.api(sim, "pane.split", target_pane_id=target, direction=direction)
            panes.append(new["pane"]["pane_id"])
        level += 1
    return panes


def wait_quiet(detection: DetectionLoop | None, bound: float = 20.0) -> float:
    """Seconds until the detection tick watches no pane (every pane quiet at its prompt for
    ten ticks), at most ``bound``."""
    began = time.perf_counter()
    while detection is not None and detection.watching and time.perf_counter() - began < bound:
        time.sleep(0.05)
    return time.perf_counter() - began


def shells_pss_mib(pids: list[int]) -> float:
    """Summed proportional set size of the given live processes, MiB (shared pages split)."""
    kib = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        kib += sum(int(line.split()[1]) for line in lines if line.startswith("Pss:"))
    return kib / 1024


def measure(workspaces: int, tabs: int, panes_per_tab: int, quick: bool) -> Result:
    """Idle CPU of ``workspaces`` x ``tabs`` x ``panes_per_tab`` live panes vs one pane."""
    window = 2.0 if quick else 5.0
    settle = 1.0 if quick else 2.0
    total = workspaces * tabs * panes_per_tab
    with benchkit.work_dir() as directory, benchkit.simulator(directory) as sim:
        first = benchkit.api(sim, "workspace.create", cwd=str(directory))
        first_root = first["root_pane"]["pane_id"]
        benchkit.wait_prompt(sim, first_root)
        time.sleep(settle)
        base = cpu_percent(window)
        rss_one = benchkit.rss_mib()

        started = time.perf_counter()
        panes: list[str] = []
        for w in range(workspaces):
            if w == 0:
                ws_id, root = first["workspace"]["workspace_id"], first_root
            else:
                created = benchkit.api(sim, "workspace.create", cwd=str(directory))
                ws_id, root = created["workspace"]["workspace_id"], created["root_pane"]["pane_id"]
            for t in range(tabs):
                if t > 0:
                    tab = benchkit.api(sim, "tab.create", workspace_id=ws_id, cwd=str(directory))
                    root = tab["root_pane"]["pane_id"]
                panes.extend(fill_tab(sim, root, panes_per_tab))
        for pane in panes:
            benchkit.wait_prompt(sim, pane, timeout=120)
        create_s = time.perf_counter() - started
        listed = benchkit.api(sim, "pane.list")["panes"]
        assert len(listed) == total == len(panes), (len(listed), len(panes))
        shell_pids = [
            benchkit.api(sim, "pane.process_info", pane_id=pane)["process_info"]["shell_pid"]
            for pane in panes
        ]

        time.sleep(settle)
        detection = sim.runtime.detection
        quiet_s = wait_quiet(detection)
        checks0, ticks0 = (detection.checks, detection.ticks) if detection else (0, 0)
        shells0 = benchkit.cpu_seconds(*shell_pids)
        loaded = cpu_percent(window)
        shells = (benchkit.cpu_seconds(*shell_pids) - shells0) / window * 100
        rss_all = benchkit.rss_mib()
        checks, ticks = (
            (detection.checks - checks0, detection.ticks - ticks0) if detection else (0, 0)
        )
        shells_pss = shells_pss_mib(shell_pids)

    ratio = max(loaded, FLOOR_PERCENT) / max(base, FLOOR_PERCENT)
    server_per_pane = (rss_all - rss_one) / (total - 1) * 1024
    return Result(
        name=f"idle CPU, {total} panes",
        value=loaded,
        unit="% core",
        baseline_name="same simulator, 1 pane",
        baseline_value=base,
        ratio=ratio,
        target=f"< {TARGET_PERCENT:g}% of one core",
        passed=loaded < TARGET_PERCENT,
        details={
            "window": f"{window:g} s after a {settle:g} s settle",
            f"{total} pane shells' own CPU over the window": f"{shells:.3f}% core",
            "agent-detection pane checks over the window": f"{checks} in {ticks} ticks",
            "  (after the tick's list emptied": f"{quiet_s:.1f} s after the settle)",
            f"creating {total} panes until every prompt showed": f"{create_s:.1f} s",
            "resident memory, 1 pane -> all panes": f"{rss_one:.0f} -> {rss_all:.0f} MiB",
            "server memory per pane (RSS growth / added panes)": f"{server_per_pane:.0f} KiB",
            "pane shell memory per pane (PSS of its bash)": (
                f"{shells_pss / total * 1024:.0f} KiB"
            ),
            "ratio floor (noise level)": f"{FLOOR_PERCENT}% core",
        },
    )


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    return [measure(WORKSPACES, TABS, PANES_PER_TAB, args.quick)]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
