"""One entry point over the per-kind homes: prepare the private home of any real agent."""

from __future__ import annotations

from pathlib import Path

from ..fake_agent.personas import LAUNCHER_KINDS
from .claude import prepare_claude_home
from .codex import prepare_codex_home
from .home import AgentHome
from .opencode import prepare_opencode_home
from .pi import prepare_pi_home

__all__ = ["REAL_KINDS", "prepare_home"]

#: the real agents the project can install and run offline: the kinds it fakes, in the order
#: they were tried
REAL_KINDS = LAUNCHER_KINDS


def prepare_home(
    kind: str, directory: Path, llm_url: str, cwd: Path, *, integration: bool = True
) -> AgentHome:
    """A fresh private home for ``kind`` in ``directory``, pointed at the fake LLM at
    ``llm_url`` (its root URL, without ``/v1``), with the project's Herdr integration for
    ``kind`` unless ``integration`` is false."""
    openai_url = llm_url.rstrip("/") + "/v1"
    if kind == "pi":
        return prepare_pi_home(directory, openai_url, extension=integration)
    if kind == "claude":
        return prepare_claude_home(directory, llm_url, cwd, integration=integration)
    if kind == "codex":
        return prepare_codex_home(directory, openai_url, cwd, integration=integration)
    if kind == "opencode":
        return prepare_opencode_home(directory, openai_url, integration=integration)
    raise ValueError(f"no real agent {kind!r}; real kinds: {', '.join(REAL_KINDS)}")
