"""What every part of a fake agent works on: its state, declared once.

Why a base of declarations: the fake agent is one object (one lock, one screen, one turn
at a time) whose parts live in the module of their responsibility: :mod:`.screen` draws,
:mod:`.terminal_mode` sets the terminal up, :mod:`.session_choice` opens the session the
command line names, :mod:`.reports` tells Herdr, :mod:`.turns` plays the scenario and
:mod:`.key_input` reads the keys; :class:`~herdr_sim.fake_agent.app.FakeAgent` puts them
together and sets this state up. Each part is a mixin over these declarations, so its
methods read as they did in one class.
"""

from __future__ import annotations

import os
import threading

from .extensions import PiExtension
from .options import Options
from .reporter import Reporter
from .scenario import Scenario, Turn
from .session import PiSession

__all__ = ["TICK", "AgentState"]

#: how often a fake agent looks at its keys, its running command and its startup (seconds)
TICK = 0.1


class AgentState:
    """The fake agent's state (set up by ``FakeAgent.__init__``; its comments say what each
    is)."""

    kind: str
    options: Options
    scenario: Scenario
    time_scale: float
    cwd: str
    provider: str
    model: str
    state: str
    transcript: list[str]
    typed: str
    question: str
    answer: str | None
    frame: int
    turn_started: float
    turn_index: int
    pending: list[tuple[str, Turn | None]]
    interrupt: threading.Event
    wake: threading.Event
    lock: threading.RLock
    exiting: bool
    starting_until: float
    worker: threading.Thread | None
    headless: bool
    last_answer: str
    last_error: str | None
    session_id: str
    session: PiSession
    env: dict[str, str] | os._Environ[str]
    managed: PiExtension | None
    asked_owner: bool
    pane_id: str
    reporter: Reporter | None
    source: str
    agent: str
