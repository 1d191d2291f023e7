"""The fake agent's terminal mode: raw input while it runs, the old mode back on exit."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from .agent_state import AgentState

__all__ = ["TerminalMode"]


class TerminalMode(AgentState):
    """Raw mode on the agent's terminal, and its undoing."""

    _saved: list[Any] | None = None

    def raw_terminal(self) -> None:
        """Put stdin in raw mode (when it is a terminal), remembering the old mode."""
        import termios

        try:
            fd = sys.stdin.fileno()
            self._saved = termios.tcgetattr(fd)
            mode = termios.tcgetattr(fd)
        except (termios.error, OSError, ValueError):
            return
        mode[0] &= ~(termios.ICRNL | termios.IXON | termios.INLCR)
        mode[3] &= ~(termios.ECHO | termios.ICANON | termios.ISIG | termios.IEXTEN)
        mode[6][termios.VMIN] = 1
        mode[6][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, mode)

    def restore_terminal(self) -> None:
        """Undo :meth:`raw_terminal`."""
        import termios

        if self._saved is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, self._saved)
