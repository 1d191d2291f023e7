"""Scriptable fake coding agents (pi, claude, codex, opencode, and a third-party persona).

See :mod:`herdr_sim.fake_agent.scenario` for scripting, :mod:`herdr_sim.fake_agent.personas`
for what each kind looks like and reports, and :func:`install_fake_agents` to put the
launchers into a directory for a pane's ``PATH``.
"""

from __future__ import annotations

from .install import LAUNCHER_KINDS, install_fake_agents
from .scenario import Scenario, ScenarioError, Step, Turn

__all__ = ["LAUNCHER_KINDS", "Scenario", "ScenarioError", "Step", "Turn", "install_fake_agents"]
