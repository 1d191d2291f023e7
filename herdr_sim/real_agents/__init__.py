"""Real coding agents for tests: installed once per machine, configured offline per test.

``install`` puts a pinned agent (pi 1.6 with its Node; Claude Code, Codex and opencode as
their native binaries from npm) into a cache outside the repository; ``pi``, ``claude``,
``codex`` and ``opencode`` each prepare a private home that points the agent at the fake LLM
(:mod:`herdr_sim.fake_llm`), answers its first-run questions and holds the project's Herdr
integration for it; ``kinds.prepare_home`` picks the right one. The pytest fixture
``herdr_real_agent`` puts them together. See docs/simulator/real-agents.md.
"""

from __future__ import annotations

from .home import AgentHome
from .install import (
    NODE_VERSION,
    PI_VERSION,
    AgentInstallError,
    InstalledAgent,
    agents_cache,
    find_agent,
    find_pi,
    install_agent,
    install_pi,
)
from .kinds import REAL_KINDS, prepare_home
from .pi import PiHome, install_extension, prepare_pi_home

__all__ = [
    "NODE_VERSION",
    "PI_VERSION",
    "REAL_KINDS",
    "AgentHome",
    "AgentInstallError",
    "InstalledAgent",
    "PiHome",
    "agents_cache",
    "find_agent",
    "find_pi",
    "install_agent",
    "install_extension",
    "install_pi",
    "prepare_home",
    "prepare_pi_home",
]
