"""Scriptable fake coding agents (pi, claude, codex, opencode, and a third-party persona).

See :mod:`herdr_sim.fake_agent.scenario` for scripting, :mod:`herdr_sim.fake_agent.personas`
for what each kind looks like and reports, and :func:`install_fake_agents` to put the
launchers into a directory for a pane's ``PATH``.
"""

from __future__ import annotations

# Lazy, as the package roots are (orchestrator.client._lazy): a fake agent's launcher imports
# ``herdr_sim.fake_agent.app`` and so this package first, and the installer's file-trust
# modules it has no use for were a fifth of every fake agent's start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .install import LAUNCHER_KINDS, install_fake_agents
    from .scenario import Scenario, ScenarioError, Step, Turn

_LAZY = {
    "LAUNCHER_KINDS": "install",
    "install_fake_agents": "install",
    "Scenario": "scenario",
    "ScenarioError": "scenario",
    "Step": "scenario",
    "Turn": "scenario",
}

__all__ = ["LAUNCHER_KINDS", "Scenario", "ScenarioError", "Step", "Turn", "install_fake_agents"]


def __getattr__(name: str) -> Any:
    from orchestrator.client._lazy import resolve

    return resolve(__name__, _LAZY, name)
