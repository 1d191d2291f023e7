"""How an agent's screen treats the pane it starts in, as a Herdr client sees it.

A pane holds 60 numbered lines of earlier output; an agent starts below them, shows its
input box, and exits. :func:`observe` records, through the API (``pane.read`` and the
scroll metrics of ``pane.get``) and the simulator's terminal model, what a client that
archives a pane's history or scrapes its screen depends on:

* whether the earlier lines stay in the pane's history (``recent`` read) while the agent
  runs and after it exits;
* whether they stay on the visible screen above the agent's own rows (an inline renderer
  draws below them; a full-screen one clears them away);
* whether the agent is on the alternate screen, as the simulator's terminal model knows it;
  a client sees it as Herdr's ``0/0`` scroll metrics there (``scroll_metrics`` in
  ``src/pane/terminal.rs``), though the main screen has a history, and that is checked to
  agree;
* where the input box sits: the row, counted from the bottom of the screen, that shows text
  typed into it (not yet submitted);
* what of the agent's last frame stays readable after it exits.

The real agents' observations are recorded by ``tests/real_agents/test_agent_screens.py``
into ``tests/real_agents/screens/<kind>.json``; the fakes are held to them by
``tests/sim/test_fake_agent_screen_fidelity.py``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pytest_herdr import Pane
from pytest_herdr.backends import HerdrServer
from tests.waits import wait_until

__all__ = [
    "EARLIER",
    "EXIT",
    "READY",
    "RECORDS",
    "TYPED",
    "fill",
    "observe",
    "recorded",
    "short_directory",
    "terminal_model",
]

#: how many numbered lines the pane holds before the agent starts
EARLIER = 60
#: typed into the input box (never submitted) to find the box's row
TYPED = "zqxjv"
#: the real agents' recorded observations, one file per kind
RECORDS = Path(__file__).parent / "real_agents" / "screens"
#: what each fake kind shows once its screen is drawn
READY = {"pi": "─" * 20, "claude": "❯", "codex": "›", "opencode": "╹▀▀▀"}
#: how each kind is told to exit from its input box
EXIT = {"pi": "/quit", "claude": "/exit", "codex": "/exit", "opencode": "/exit"}


@contextlib.contextmanager
def short_directory() -> Iterator[Path]:
    """A new private directory of a short path (``/tmp/hs-XXXXXXXX``), removed afterwards:
    the agents' status rows name their working directory, and a long one wraps."""
    directory = Path(tempfile.mkdtemp(prefix="hs-", dir="/tmp"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def fill(pane: Pane) -> None:
    """Print the earlier lines in the pane's shell and wait until the shell is back."""
    pane.run(f"seq -f 'line-%g' 1 {EARLIER}; echo filled-$((6*7))")
    wait_until(lambda: "filled-42" in pane.read("visible"), 20, what="the earlier lines")


def _rows(text: str) -> list[str]:
    return [row.rstrip() for row in text.split("\n")]


def _earlier_in(text: str) -> list[int]:
    """The numbers of the earlier lines present (as whole rows) in ``text``."""
    rows = {row.strip() for row in _rows(text)}
    return [n for n in range(1, EARLIER + 1) if f"line-{n}" in rows]


def _history(pane: Pane) -> str:
    return pane.read("recent", lines=1000)


def terminal_model(server: HerdrServer, pane: Pane) -> Callable[[], bool]:
    """Whether ``pane``'s terminal (in the simulator ``server`` runs) is on the alternate
    screen now, read from the terminal model on the simulator's thread."""
    sim = server.sim
    assert sim is not None, "the screens are observed in the simulator"

    def alternate() -> bool:
        return sim.run_in_loop(
            lambda rt: rt.process(rt.pane(pane.pane_id)).terminal.alternate_screen
        )

    return alternate


def _moment(pane: Pane, alternate: Callable[[], bool]) -> dict[str, Any]:
    """The history and screen facts common to both moments (running, exited)."""
    on_alternate = alternate()
    scroll = pane.info["scroll"]
    # Herdr's client-side view of the alternate screen: no history to scroll
    assert (scroll["max_offset_from_bottom"] == 0) == on_alternate, scroll
    return {
        "earlier_lines_in_history": len(_earlier_in(_history(pane))),
        "earlier_lines_on_screen": bool(_earlier_in(pane.read("visible"))),
        "alternate_screen": on_alternate,
    }


def _input_row_from_bottom(pane: Pane) -> int:
    """Type :data:`TYPED` into the input box and find its row (0: the screen's last row)."""
    height = int(pane.info["scroll"]["viewport_rows"])
    pane.send(TYPED)
    seen: list[tuple[int | None, float]] = []

    def row() -> tuple[int] | None:
        """The row, once it has stayed put for a second (an agent that has just started may
        still redraw its footer)."""
        hits = [i for i, text in enumerate(_rows(pane.read("visible"))) if TYPED in text]
        now = (height - 1 - hits[-1]) if hits else None
        if not seen or seen[-1][0] != now:
            seen.append((now, time.monotonic()))
        value, since = seen[-1]
        return (value,) if value is not None and time.monotonic() - since >= 1.0 else None

    found = wait_until(row, 30, interval=0.1, what="the typed text's row to settle")
    pane.send("", *["Backspace"] * len(TYPED))
    wait_until(lambda: TYPED not in pane.read("visible"), 20, what="the typed text erased")
    return found[0]


def observe(pane: Pane, kind: str, alternate: Callable[[], bool]) -> dict[str, Any]:
    """Observe the agent of ``kind`` running in ``pane`` (its input box up and idle), exit it
    with its exit command, wait until Herdr no longer sees an agent in the pane, and observe
    again; ``alternate()``: whether the pane's terminal is on the alternate screen."""
    running = _moment(pane, alternate)
    running["input_row_from_bottom"] = _input_row_from_bottom(pane)
    frame = [row.strip() for row in _rows(pane.read("visible")) if row.strip()]
    pane.send(EXIT[kind], "Enter")
    wait_until(lambda: "agent" not in pane.info, 60, interval=0.1, what=f"{kind} to exit")
    after = _moment(pane, alternate)
    history = {row.strip() for row in _rows(_history(pane))}
    kept = [row for row in frame if row in history and not row.startswith("line-")]
    after["last_frame_rows_kept"] = "all" if len(kept) == len(frame) else "some" if kept else "none"
    return {"rows": pane.info["scroll"]["viewport_rows"], "running": running, "exited": after}


def recorded(kind: str) -> dict[str, Any]:
    """The real ``kind``'s recorded observations."""
    data: dict[str, Any] = json.loads((RECORDS / f"{kind}.json").read_text())
    return data
