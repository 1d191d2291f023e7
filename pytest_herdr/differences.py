"""Known differences between the simulator and a real Herdr, as data.

A test that cannot hold on one backend says which difference it meets with
``@pytest.mark.herdr_difference("id")``, and a fixture that cannot exist on a backend
(fault injection on a real Herdr) skips with the difference's reason. There is no
``if backend == "real"`` anywhere else: a new difference is one entry here, documented in
``docs/pytest-plugin/fixtures.md`` and ``docs/simulator/fidelity.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from .settings import Backend

Effect = Literal["skip", "xfail"]


@dataclass(frozen=True)
class Difference:
    """One known difference: where it applies and what happens to a test that meets it."""

    id: str
    #: the backends on which the behaviour differs from what the test expects
    backends: tuple[Backend, ...]
    reason: str
    effect: Effect = "skip"


DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "fault-injection",
        ("real",),
        "only the simulator can make its socket slow, drop replies or refuse connections",
    ),
    Difference(
        "integration-check",
        ("real",),
        "the integration check drives the agent in simulators of its own (it restarts them, "
        "slows and refuses their socket), never in a real Herdr; run it with "
        "--herdr-backend sim",
    ),
    Difference(
        "simulator-internals",
        ("real",),
        "the test reads the simulator's own state (events log, engine records, run_in_loop)",
    ),
    Difference(
        "settle-delay",
        ("real",),
        "a real Herdr's agent.start settle delay is fixed at 3 s; --herdr-settle-ms only "
        "shortens the simulator's",
    ),
    Difference(
        "fake-agent-detection",
        ("real",),
        "the fake agents are Python scripts; a real Herdr may not recognise their process "
        "as the agent they imitate, so its process and screen detection can differ",
        "xfail",
    ),
    Difference(
        "request-log",
        ("real",),
        "a real Herdr's socket cannot be tapped: the requests its pane processes make "
        "(reports, releases, their answers) and why an agent was released are seen only by "
        "the simulator",
    ),
    Difference(
        "ui-methods",
        ("sim",),
        "the simulator has no terminal UI: UI, plugin, worktree and graphics methods answer "
        "not_supported_by_simulator (docs/simulator/supported-methods.md)",
    ),
)

BY_ID = {difference.id: difference for difference in DIFFERENCES}


def lookup(difference_id: str) -> Difference:
    """The difference named ``difference_id``; an unknown id is a usage error (a typo must
    not silently run a test that was meant to be skipped)."""
    try:
        return BY_ID[difference_id]
    except KeyError:
        known = ", ".join(sorted(BY_ID))
        raise pytest.UsageError(
            f"unknown Herdr difference {difference_id!r} (known: {known})"
        ) from None


def applies(difference: Difference, backend: Backend) -> bool:
    """Whether ``difference`` shows on ``backend``."""
    return backend in difference.backends


def skip_for(difference_id: str, backend: Backend) -> None:
    """Skip the running test when ``difference_id`` applies to ``backend`` (for fixtures)."""
    difference = lookup(difference_id)
    if applies(difference, backend):
        pytest.skip(f"herdr difference {difference.id} on {backend}: {difference.reason}")


def mark_item(item: pytest.Item, backend: Backend) -> None:
    """Apply the item's ``herdr_difference`` markers for ``backend`` (skip or xfail)."""
    for marker in item.iter_markers("herdr_difference"):
        for difference_id in marker.args:
            difference = lookup(difference_id)
            if not applies(difference, backend):
                continue
            reason = f"herdr difference {difference.id} on {backend}: {difference.reason}"
            if difference.effect == "skip":
                item.add_marker(pytest.mark.skip(reason=reason))
            else:
                item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
