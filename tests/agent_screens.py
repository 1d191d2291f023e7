"""How an agent's screen treats the pane it starts in, as a Herdr client sees it.

A pane holds 60 numbered lines of earlier output; an agent starts below them, shows its
input box, and exits. :func:`observe` records, through the API only (``pane.read`` and the
scroll metrics of ``pane.get``), what a client that archives a pane's history or scrapes its
screen depends on:

* whether the earlier lines stay in the pane's history (``recent`` read) while the agent
  runs and after it exits;
* whether they stay on the visible screen above the agent's own rows (an inline renderer
  draws below them; a full-screen one clears them away);
* whether the agent is on the alternate screen: Herdr reports ``0/0`` scroll metrics there
  (``scroll_metrics`` in ``src/pane/terminal.rs``), though the main screen has a history;
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_herdr import Pane
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


def _moment(pane: Pane) -> dict[str, Any]:
    """The history and screen facts common to both moments (running, exited)."""
    scroll = pane.info.get("scroll", {})
    history = _history(pane)
    return {
        "earlier_lines_in_history": len(_earlier_in(history)),
        "earlier_lines_on_screen": bool(_earlier_in(pane.read("visible"))),
        "alternate_screen": scroll.get("max_offset_from_bottom") == 0,
    }


def _input_row_from_bottom(pane: Pane) -> int:
    """Type :data:`TYPED` into the input box and find its row (0: the screen's last row)."""
    height = int(pane.info["scroll"]["viewport_rows"])
    pane.send(TYPED)
    seen: list[tuple[int | None, float]] = []

    def row() -> tuple[int] | None:
        """The row, once it has stayed put for a second (a starting agent's footer can still
        grow a row or lose one: real Codex did, once)."""
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


def observe(pane: Pane, kind: str, exited: Any) -> dict[str, Any]:
    """Observe the agent of ``kind`` running in ``pane`` (its input box up and idle), exit it
    with its exit command, wait with ``exited()`` until it is gone, and observe again."""
    running = _moment(pane)
    running["input_row_from_bottom"] = _input_row_from_bottom(pane)
    frame = [row.strip() for row in _rows(pane.read("visible")) if row.strip()]
    pane.send(EXIT[kind], "Enter")
    wait_until(exited, 60, interval=0.1, what=f"{kind} to exit")
    after = _moment(pane)
    history = {row.strip() for row in _rows(_history(pane))}
    kept = [row for row in frame if row in history and not row.startswith("line-")]
    after["last_frame_rows_kept"] = "all" if len(kept) == len(frame) else "some" if kept else "none"
    return {"rows": pane.info.get("scroll", {}).get("viewport_rows"), "running": running,
            "exited": after}  # fmt: skip


def recorded(kind: str) -> dict[str, Any]:
    """The real ``kind``'s recorded observations."""
    data: dict[str, Any] = json.loads((RECORDS / f"{kind}.json").read_text())
    return data
