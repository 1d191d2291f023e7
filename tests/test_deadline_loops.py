"""Deadline loops are written once (``orchestrator.client.poll``), not by hand in each module.

A hand-written deadline loop computes ``time.monotonic() + timeout`` (or ``perf_counter()``)
and then loops on it: the same few lines in every module that waits, each with its own
idea of what a time-out says. :func:`orchestrator.client.poll.wait_until` polls a probe and
:class:`orchestrator.client.poll.Deadline` bounds a loop that blocks on something else; a
loop that can use neither (its clock is not the process's, say) may stay, with a comment
``# own deadline: <why>`` on or just above its deadline line. This test finds them by AST
and fails above :data:`LIMIT`, listing them.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TREES = ("herdr_sim", "orchestrator", "pytest_herdr", "tests")
CLOCKS = frozenset({"monotonic", "perf_counter"})
#: how many hand-written deadline loops may stay
LIMIT = 8
MARK = "# own deadline:"


def _is_clock_sum(node: ast.AST) -> bool:
    """``<clock>() + …`` somewhere in ``node``."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Add):
            call = sub.left
            if isinstance(call, ast.Call):
                func = call.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in CLOCKS:
                    return True
    return False


def _names_in(nodes: list[ast.AST]) -> set[str]:
    return {
        sub.id if isinstance(sub, ast.Name) else sub.attr
        for node in nodes
        for sub in ast.walk(node)
        if isinstance(sub, ast.Name | ast.Attribute)
    }


def deadline_loops(path: Path) -> list[tuple[int, bool]]:
    """``(line, marked)`` of each hand-written deadline loop in ``path``: a deadline
    assigned from a clock sum in a function whose ``while`` loop uses it."""
    source = path.read_text(encoding="utf-8")
    if not any(clock in source for clock in CLOCKS):
        return []  # no clock is called: nothing to find (most files; parsing them all was 8 s)
    lines = source.splitlines()
    found = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        loops: list[ast.AST] = [n for n in ast.walk(func) if isinstance(n, ast.While)]
        if not loops:
            continue
        used = _names_in(loops)
        for node in ast.walk(func):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if _is_clock_sum(node.value) and _names_in(list(targets)) & used:
                    near = lines[max(0, node.lineno - 3) : node.lineno]
                    found.append((node.lineno, any(MARK in line for line in near)))
    return sorted(set(found))


@cache  # two tests read it; walking every file twice took 8 s
def all_deadline_loops() -> tuple[tuple[str, int, bool], ...]:
    return tuple(
        (str(path.relative_to(REPO)), line, marked)
        for tree in TREES
        for path in sorted((REPO / tree).rglob("*.py"))
        for line, marked in deadline_loops(path)
    )


def test_at_most_a_few_hand_written_deadline_loops_are_left() -> None:
    loops = all_deadline_loops()
    listing = "\n".join(f"{path}:{line}" for path, line, _ in loops)
    assert len(loops) <= LIMIT, f"{len(loops)} hand-written deadline loops:\n{listing}"


def test_each_hand_written_deadline_loop_says_why() -> None:
    unmarked = [f"{path}:{line}" for path, line, marked in all_deadline_loops() if not marked]
    assert unmarked == [], f"add `{MARK} <why>` on or above the deadline line"


def test_the_finder_sees_a_deadline_loop(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import time\n"
        "def f(t):\n"
        "    # own deadline: a test of the finder\n"
        "    end = time.monotonic() + t\n"
        "    while time.monotonic() < end:\n"
        "        pass\n"
        "def g(t):\n"
        "    stamp = time.monotonic() + t\n"
        "    return stamp\n"
    )
    assert deadline_loops(sample) == [(4, True)]
