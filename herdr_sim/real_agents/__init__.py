"""Real coding agents for tests: installed once per machine, configured offline per test.

``install`` puts a pinned agent (pi 1.6 with its Node) into a cache outside the repository;
``pi`` prepares a private ``$PI_CODING_AGENT_DIR`` that points pi at the fake LLM
(:mod:`herdr_sim.fake_llm`) and holds the project's Herdr extension for pi. The pytest
fixture ``herdr_real_agent`` puts them together. See docs/simulator/real-agents.md.
"""

from __future__ import annotations

from .install import (
    NODE_VERSION,
    PI_VERSION,
    AgentInstallError,
    InstalledAgent,
    agents_cache,
    find_pi,
    install_pi,
)
from .pi import PiHome, install_extension, prepare_pi_home

__all__ = [
    "NODE_VERSION",
    "PI_VERSION",
    "AgentInstallError",
    "InstalledAgent",
    "PiHome",
    "agents_cache",
    "find_pi",
    "install_extension",
    "install_pi",
    "prepare_pi_home",
]
