"""The fake agent's screen: the whole frame redrawn from its state, and the scrollback kept.

Why one place: every change a user could see (a transcript line, the state, a typed key)
goes through :meth:`Screen.say`, :meth:`Screen.set_state` or :meth:`Screen.draw`, and
what a frame looks like per kind is :func:`herdr_sim.fake_agent.personas.render`'s.
"""

from __future__ import annotations

import os
import sys
import time

from .agent_state import AgentState
from .personas import render

__all__ = ["Screen"]


class Screen(AgentState):
    """Drawing the fake agent's screen (module docstring)."""

    def draw(self) -> None:
        """Redraw the whole screen (and the terminal title)."""
        if self.headless:
            return
        with self.lock:
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
            out = f"\x1b]0;{title}\x07\x1b[H\x1b[2J" + "\r\n".join(lines)
            os.write(sys.stdout.fileno(), out.encode())

    def keep_scrollback(self) -> None:
        """Scroll what the terminal shows into its scrollback before the first frame.

        Every frame starts with ``ESC [ H ESC [ 2 J``, which erases the screen without
        saving it (Herdr's terminal, libghostty, saves it only when the last row is a
        marked shell prompt). The real agents draw inline, below the shell's output, so the
        output stays in the pane's history; one newline per row from the cursor (which the
        shell left below that output) moves it all into the scrollback first.
        """
        if self.headless:
            return
        try:
            rows = os.get_terminal_size(sys.stdout.fileno()).lines
        except OSError:
            return
        os.write(sys.stdout.fileno(), b"\n" * max(rows, 1))

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
