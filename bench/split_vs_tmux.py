"""Pane split to a visible shell prompt: the simulator vs tmux doing the same.

Simulator: ``pane.split`` over the socket, then ``pane.wait_for_output`` on the new
pane's visible screen until the prompt line (``$``) shows — the way a client waits.
tmux: ``tmux split-window`` on a private server (``tmux -L <name> -f /dev/null``), then
``tmux capture-pane -p`` until the same prompt line shows. Both panes run the same
deterministic shell (bash without the user's startup files, prompt ``$ ``) in a 120x40
area; each new pane is closed again (not timed) so every split starts from one pane.
The two sides alternate round by round; medians are compared. Target (issue 17): at most
1.3x tmux.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import benchkit
from benchkit import PROMPT_REGEX, Result, median, ms

TARGET_RATIO = 1.3
_PROMPT = re.compile(PROMPT_REGEX, re.MULTILINE)


class Tmux:
    """A private tmux server (own socket name, no config file) for the baseline."""

    def __init__(self, directory: Path) -> None:
        self.name = f"herdr-bench-{os.getpid()}"
        self.env = benchkit.clean_env(HOME=str(directory), PS1="$ ")
        self.shell = ["bash", "--noprofile", "--norc"]

    def __call__(self, *argv: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.name, "-f", "/dev/null", *argv],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def start(self) -> str:
        """Start the server with one 120x40 window; return its first pane's id."""
        first = self(
            "new-session", "-d", "-x", "120", "-y", "40", "-P", "-F", "#{pane_id}", *self.shell
        ).strip()
        self("set-option", "-g", "status", "off")
        return first

    def split_to_prompt(self, target: str, timeout: float = 10.0) -> tuple[str, float]:
        """Split ``target``; poll the new pane until the prompt shows. (pane id, seconds)."""
        start = time.perf_counter()
        pane = self("split-window", "-h", "-t", target, "-P", "-F", "#{pane_id}", *self.shell)
        pane = pane.strip()
        deadline = start + timeout
        while not _PROMPT.search(self("capture-pane", "-p", "-t", pane)):
            if time.perf_counter() > deadline:
                raise TimeoutError(f"tmux pane {pane} showed no prompt within {timeout} s")
        return pane, time.perf_counter() - start

    def kill_server(self) -> None:
        """Stop the private server (and its shells)."""
        subprocess.run(
            ["tmux", "-L", self.name, "kill-server"],
            env=self.env,
            capture_output=True,
            check=False,
        )


@contextmanager
def tmux_server(directory: Path) -> Iterator[tuple[Tmux, str]]:
    """A started private tmux server and its first pane; killed on exit."""
    tmux = Tmux(directory)
    try:
        first = tmux.start()
        yield tmux, first
    finally:
        tmux.kill_server()


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    if shutil.which("tmux") is None:
        print("split_vs_tmux: SKIP (tmux is not installed)")
        return []
    rounds = 5 if args.quick else 20
    sim_total: list[float] = []
    sim_split: list[float] = []
    tmux_total: list[float] = []
    with (
        benchkit.work_dir() as directory,
        benchkit.simulator(directory) as sim,
        tmux_server(directory) as (tmux, tmux_root),
    ):
        created = benchkit.api(sim, "workspace.create", cwd=str(directory))
        root = created["root_pane"]["pane_id"]
        benchkit.wait_prompt(sim, root)

        def sim_round() -> None:
            start = time.perf_counter()
            pane = benchkit.api(sim, "pane.split", target_pane_id=root, direction="right")
            new = pane["pane"]["pane_id"]
            split_done = time.perf_counter()
            benchkit.wait_prompt(sim, new)
            end = time.perf_counter()
            sim_split.append(split_done - start)
            sim_total.append(end - start)
            benchkit.api(sim, "pane.close", pane_id=new)

        def tmux_round() -> None:
            pane, seconds = tmux.split_to_prompt(tmux_root)
            tmux_total.append(seconds)
            tmux("kill-pane", "-t", pane)

        for _ in range(2):  # warm-up, not kept
            sim_round()
            tmux_round()
        del sim_total[:], sim_split[:], tmux_total[:]
        for _ in range(rounds):
            sim_round()
            tmux_round()

    sim_s, tmux_s = median(sim_total), median(tmux_total)
    ratio = sim_s / tmux_s
    return [
        Result(
            name="split to visible prompt",
            value=sim_s * 1e3,
            unit="ms",
            baseline_name="tmux split-window + capture-pane",
            baseline_value=tmux_s * 1e3,
            ratio=ratio,
            target=f"<= {TARGET_RATIO}x tmux",
            passed=ratio <= TARGET_RATIO,
            details={
                "simulator median / min": f"{ms(sim_s)} / {ms(min(sim_total))}",
                "  of which pane.split reply (median)": ms(median(sim_split)),
                "tmux median / min": f"{ms(tmux_s)} / {ms(min(tmux_total))}",
                "rounds": str(rounds),
            },
        )
    ]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
