"""The pending-idle hold of screen detection: a working agent whose screen shows a plain idle
frame (no visible idle marker, no blocker) stays working until that frame has persisted for
``idle_hold`` seconds, so a half-drawn frame between two bursts of output never flips the
agent to idle and never releases a waiter early. Driven on the loop's screen rule directly,
with a scripted screen and clock, so the boundary is exact."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

from herdr_sim.detection.engine import Detection
from herdr_sim.services.detection_loop import DetectionLoop, DetectionTiming, _Watch

HOLD = 0.3


@dataclass
class _Screen:
    """A terminal stand-in: each new frame bumps ``changes``, as the real terminal does."""

    text: str = ""
    changes: int = 0
    title: str | None = None

    def show(self, text: str) -> None:
        self.text, self.changes = text, self.changes + 1

    def read(self, _reader: str) -> tuple[str, int]:
        return self.text, self.changes


class _Manifests:
    """Reads the frame's first word as the state (``idle!`` is an idle with a visible marker)."""

    def detect(self, _agent: str, text: str, *, osc_title: str = "") -> Detection:
        if text == "idle!":
            return Detection(state="idle", visible_idle=True)
        return Detection(state=text)


def _states(frames: list[tuple[float, str]]) -> list[str]:
    """The state the loop reports for each ``(time, frame)`` of a working agent."""

    async def run() -> list[str]:
        loop = DetectionLoop(
            cast(Any, SimpleNamespace()),
            cast(Any, _Manifests()),
            DetectionTiming(idle_hold=HOLD),
            report=cast(Any, lambda *_: None),
        )
        # the hold schedules a re-check on the event loop; it never runs (the loop ends first)
        screen = _Screen()
        proc = cast(Any, SimpleNamespace(terminal=screen))
        watch = _Watch(shell_pid=1)
        state = "working"
        seen: list[str] = []
        for now, frame in frames:
            screen.show(frame)
            state = loop._screen_state(1, proc, watch, "pi", cast(Any, state), now)
            seen.append(state)
        return seen

    return asyncio.run(run())


def test_a_plain_idle_frame_is_held_as_working_until_the_hold_passes() -> None:
    """Planted-bug check: ``_screen_state`` without the pending-idle hold reports idle on
    the first plain idle frame and fails here."""
    seen = _states([(10.0, "idle"), (10.0 + HOLD / 2, "idle"), (10.0 + HOLD + 0.01, "idle")])
    assert seen == ["working", "working", "idle"], (
        "a working agent's plain idle frame must be held as working for the pending-idle "
        f"hold ({HOLD}s) and become idle only after it: got {seen}"
    )


def test_working_output_inside_the_hold_starts_it_again() -> None:
    seen = _states(
        [(10.0, "idle"), (10.1, "working"), (10.2, "idle"), (10.2 + HOLD - 0.01, "idle")]
    )
    assert seen == ["working", "working", "working", "working"], (
        f"a working frame inside the hold must restart it (idle only {HOLD}s later): {seen}"
    )


def test_a_visible_idle_marker_is_idle_at_once() -> None:
    seen = _states([(10.0, "idle!")])
    assert seen == ["idle"], f"a visible idle marker needs no hold: {seen}"
