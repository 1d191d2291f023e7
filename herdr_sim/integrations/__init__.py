"""The simulator's own agent integrations: ``integration.list/install/uninstall`` and the
``herdr integration`` CLI.

Herdr installs hook scripts and plugins into each agent's config directory so the agent
reports its state and session to the pane's Herdr. The simulator does the same for the
agents it fakes (pi, claude, codex, opencode): the same files in the same places with the
same config edits as Herdr's ``src/integration/``, holding our own scripts that report the
way Herdr's integration guide describes. Paths resolve against an environment: the server
methods use the panes' environment (HOME the fakes' sandbox, herdr_sim/services/agent_home.py), so
nothing is ever written into the user's real home by the simulator.
"""

from __future__ import annotations

from .actions import PROVIDED, IntegrationError, install, uninstall
from .status import integration_list, state_of, version_in
from .targets import TARGETS, Target, target

__all__ = [
    "PROVIDED",
    "TARGETS",
    "IntegrationError",
    "Target",
    "install",
    "integration_list",
    "state_of",
    "target",
    "uninstall",
    "version_in",
]
