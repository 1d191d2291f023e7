"""Every upper bound a test puts on wall-clock time scales with ``HERDR_WAIT_SCALE``.

A loaded or slow machine stretches time, never shrinks it: a lower bound (``>= 0.3``, a delay
that must have passed) stays as it is, but an upper bound (``< 1``) written as a bare number
fails there for no fault of the code. So each one is multiplied by ``tests.waits.SCALE``
(or replaced by a time the server reports). This test finds the bare ones.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: an upper bound on a measured duration: ``monotonic() - started < 2``, ``elapsed < 1``
UPPER_BOUND = re.compile(
    r"assert .*(?:monotonic\(\) - \w+|\b(?:elapsed|took|wall)\b)"
    r"\s*<=?\s*\d+(?:\.\d+)?(?![\d.])(?!\s*\*)"
)


def test_wall_clock_upper_bounds_are_scaled() -> None:
    bare = [
        f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.resolve() != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if UPPER_BOUND.search(line)
    ]
    assert bare == [], "scale these bounds by tests.waits.SCALE:\n" + "\n".join(bare)


def test_the_check_finds_a_bare_bound() -> None:
    assert UPPER_BOUND.search("    assert time.monotonic() - started < 1.5")
    assert UPPER_BOUND.search("    assert 0.2 <= elapsed < 3")
    assert not UPPER_BOUND.search("    assert time.monotonic() - started < 1.5 * SCALE")
    assert not UPPER_BOUND.search("    assert time.monotonic() - began >= 0.6")
