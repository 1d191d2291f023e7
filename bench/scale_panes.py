"""Scale: the simulator hosting 500 live idle panes (10 workspaces x 5 tabs x 10 panes).

The same measurement as ``idle_cpu.py`` (:func:`idle_cpu.measure`: the process's CPU over a
window while nothing talks to the simulator, against the same simulator with one pane,
measured before the others exist) at the size issue 17 asks for. Memory per pane is
reported two ways: the simulator's resident growth divided by the added panes (screens,
scrollback, pty readers), and the proportional set size of each pane's bash.
Target (issue 17): < 5% of one core.
"""

from __future__ import annotations

import argparse

import benchkit
from benchkit import Result
from idle_cpu import measure

WORKSPACES, TABS, PANES_PER_TAB = 10, 5, 10


def run(args: argparse.Namespace) -> list[Result]:
    """Measure; see the module docstring."""
    return [measure(WORKSPACES, TABS, PANES_PER_TAB, args.quick)]


if __name__ == "__main__":
    raise SystemExit(benchkit.main(run, __doc__))
