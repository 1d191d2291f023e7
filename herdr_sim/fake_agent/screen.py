"""The fake agent's screen: the whole frame redrawn from its state, on the alternate screen.

Why one place: every change a user could see (a transcript line, the state, a typed key)
goes through :meth:`Screen.say`, :meth:`Screen.set_state` or :meth:`Screen.draw`, and
what a frame looks like per kind is :func:`herdr_sim.fake_agent.personas.render`'s.

How a fake takes the pane's terminal and gives it back is its real agent's, recorded in the
simulator (``tests/real_agents/screens/<kind>.json``, held to the fakes by
``tests/sim/test_fake_agent_screen_fidelity.py``): pi 1.6, Claude Code 2.1.332 and Codex
0.171 all draw on the alternate screen (``ESC [ ? 1049 h``), so the output before them
stays on the main screen and in its history, which Herdr hides while the alternate screen
is up (scroll metrics ``0/0``) and shows again when the agent leaves it. On exit Claude
Code and Codex leave nothing of their screen behind; pi prints its last frame onto the main
screen. opencode has no real agent here to compare with: its fake does as Claude Code.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Sequence

from .agent_state import AgentState
from .personas import render

__all__ = ["ENTER", "LEAVE", "REPRINTS_LAST_FRAME", "Screen", "farewell_frame"]

#: switch to the alternate screen, saving the cursor (xterm's mode 1049)
ENTER = b"\x1b[?1049h"
#: back to the main screen and the cursor saved by :data:`ENTER`
LEAVE = b"\x1b[?1049l"
#: the kinds whose real agent prints its last frame on the main screen after leaving the
#: alternate screen
REPRINTS_LAST_FRAME = frozenset({"pi"})


def farewell_frame(kind: str, frame: Sequence[str]) -> str:
    """What ``kind`` prints on the main screen after leaving the alternate screen, before its
    goodbye: pi's last ``frame`` with every run of blank rows cut to one (not pi's own
    layout: it prints its content without the space between transcript and editor),
    nothing for the others."""
    if kind not in REPRINTS_LAST_FRAME:
        return ""
    rows: list[str] = []
    for row in (line.rstrip() for line in frame):
        if row or (rows and rows[-1]):
            rows.append(row)
    while rows and not rows[-1]:
        rows.pop()
    return "".join(row + "\r\n" for row in rows)


class Screen(AgentState):
    """Drawing the fake agent's screen (module docstring)."""

    #: the last frame drawn (pi prints it again on exit: :func:`farewell_frame`)
    _frame: tuple[str, ...] = ()
    #: the alternate screen is up (:meth:`enter_screen`); nothing is drawn once it is left
    _on_screen = False

    def draw(self) -> None:
        """Redraw the whole screen (and the terminal title)."""
        if self.headless:
            return
        with self.lock:
            if not self._on_screen:
                return
            try:
                cols, rows = os.get_terminal_size(sys.stdout.fileno())
            except OSError:
                cols, rows = 0, 0
            cols, rows = cols or 80, rows or 24
            elapsed = int(time.monotonic() - self.turn_started) if self.state != "idle" else 0
            title, lines = render(
                self.kind,
                state=self.state,
                width=cols,
                height=rows,
                transcript=self.transcript,
                typed=self.typed.replace("\n", " "),
                question=self.question,
                frame=self.frame,
                elapsed_s=elapsed,
                model=self.model,
                cwd=self.cwd,
                provider=self.provider,
            )
            self._frame = tuple(lines)
            out = f"\x1b]0;{title}\x07\x1b[H\x1b[2J" + "\r\n".join(lines)
            os.write(sys.stdout.fileno(), out.encode())

    def enter_screen(self) -> None:
        """Draw on the alternate screen from now on, as the real agents do (module
        docstring): the pane's earlier output stays on the main screen and in its history."""
        if self.headless:
            return
        with self.lock:
            os.write(sys.stdout.fileno(), ENTER)
            self._on_screen = True

    def leave_screen(self) -> None:
        """Back to the main screen (on exit, and on a scripted crash, as the real agents'
        exit handlers do); no frame is drawn after this."""
        with self.lock:
            if self._on_screen:
                self._on_screen = False
                with contextlib.suppress(OSError):
                    os.write(sys.stdout.fileno(), LEAVE)

    def say(self, line: str) -> None:
        """Add a transcript line and redraw."""
        with self.lock:
            self.transcript.append(line)
        self.draw()

    def set_state(self, state: str) -> None:
        """Change the visible state and redraw."""
        with self.lock:
            self.state = state
        self.draw()
