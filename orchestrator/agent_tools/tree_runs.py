"""One working-tree snapshot for many askers: concurrent requests share a run that starts
after each of them asked.

Why: a fleet spawned at once in one repository took one snapshot of the same working tree
per task (a temporary index, ``git config``, ``git add -A``, ``git write-tree``), and its
harvests one more each: twenty spawns started some 160 git processes on a 2-core machine,
where they competed with the agents themselves (docs/benchmarks.md). A tree object names
the working tree's content at the moment its ``add`` ran, so a caller may take any tree whose
``add`` started after it asked: nothing it could have seen is missing from it.

:class:`TreeRuns` keeps, per working tree, at most one *pending* run that new callers join
and one *running* run. The first caller of a pending run leads it: it waits for the running
run to end, closes the join window (later callers start the next pending run), computes and
hands the result, or the error, to every caller that joined. Twenty callers arriving
together therefore cost two runs, and each gets a tree taken after its own request.

Every wait is bounded: a run is at most three git commands, each bounded by
``GIT_TIMEOUT``; a caller that waits longer than :attr:`TreeRuns.wait_s` gets an error
instead of hanging.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

__all__ = ["TreeRunTimeout", "TreeRuns"]


class TreeRunTimeout(TimeoutError):
    """A shared snapshot did not finish within the bound (a git command hung)."""


class _Run:
    __slots__ = ("callers", "done", "error", "value")

    def __init__(self) -> None:
        #: how many calls share this run (its leader included)
        self.callers = 0
        self.done = threading.Event()
        self.value: str | None = None
        self.error: BaseException | None = None


class TreeRuns:
    """Single-flight runs per key (a working tree), each started after all its callers asked."""

    def __init__(self, wait_s: float) -> None:
        #: the longest a caller waits for the run before it (or the run it joined) ends
        self.wait_s = wait_s
        self._guard = threading.Lock()
        self._pending: dict[Hashable, _Run] = {}
        self._serial: dict[Hashable, threading.Lock] = {}

    def tree(self, key: Hashable, compute: Callable[[], str]) -> str:
        """``compute()``'s result from a run that started after this call; shared with the
        calls that joined the same run."""
        with self._guard:
            run = self._pending.get(key)
            leads = run is None
            if run is None:
                run = self._pending[key] = _Run()
            run.callers += 1
            serial = self._serial.setdefault(key, threading.Lock())
        if not leads:
            if not run.done.wait(2 * self.wait_s):  # the run before ours, then ours
                raise TreeRunTimeout(f"a shared snapshot did not finish in {2 * self.wait_s:g} s")
            if run.error is not None:
                raise run.error
            assert run.value is not None
            return run.value
        if not serial.acquire(timeout=self.wait_s):
            with self._guard:
                self._pending.pop(key, None)
            run.error = TreeRunTimeout(f"the snapshot before did not finish in {self.wait_s:g} s")
            run.done.set()
            raise run.error
        try:
            with self._guard:
                del self._pending[key]  # the window closes: who asks now starts the next run
            try:
                run.value = compute()
            except BaseException as exc:
                run.error = exc
                raise
            finally:
                run.done.set()
        finally:
            serial.release()
        return run.value
