"""A pane's live side: its pty, its terminal emulator and the signal fired on output.

Kept apart from :mod:`herdr_sim.services.runtime` so the services the runtime owns (detection, the
agent service) can name it without importing the runtime that owns them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from herdr_sim.host.pty import PtyProcess
from herdr_sim.services.events import Signal
from herdr_sim.terminal import Terminal

__all__ = ["PaneProcess"]


@dataclass
class PaneProcess:
    """A pane's pty, its terminal emulator and a signal fired on every output chunk."""

    pty: PtyProcess
    terminal: Terminal
    output: Signal = field(default_factory=Signal)
