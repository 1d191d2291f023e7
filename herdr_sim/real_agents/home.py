"""What the fixture needs from any real agent's private home, whatever the agent.

Each kind's module (``pi``, ``claude``, ``codex``, ``opencode``) prepares a directory in the
test's temporary space that points the agent at the fake LLM, turns off everything that would
leave the machine, answers its first-run questions ahead, and installs the project's Herdr
integration for it; the result satisfies :class:`AgentHome`. A shared helper installs the
session-reporting hook that Claude Code and Codex both run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from .install import InstalledAgent

__all__ = [
    "SESSION_HOOK_ASSET",
    "SESSION_HOOK_NAME",
    "AgentHome",
    "files_by_age",
    "hook_command",
    "install_session_hook",
    "path_with",
    "session_start_hooks",
]  # fmt: skip

#: the project's SessionStart hook (package data), a template naming its agent ``@AGENT@``
SESSION_HOOK_ASSET = Path(__file__).parent / "assets" / "session-hook" / "herdr-agent-state.sh"
#: the name ``herdr integration install`` gives Herdr's hook (Claude Code, Codex)
SESSION_HOOK_NAME = "herdr-agent-state.sh"


class AgentHome(Protocol):
    """A prepared private home of one real agent."""

    @property
    def agent_dir(self) -> Path:
        """The agent's configuration directory (where its integration is installed)."""
        ...

    @property
    def sessions_dir(self) -> Path:
        """Where the agent keeps its transcripts."""
        ...

    @property
    def ready_text(self) -> str:
        """Text the agent's screen shows once its interface takes input."""
        ...

    @property
    def session_at_start(self) -> bool:
        """Whether the integration reports the session as soon as the agent starts (pi,
        Claude Code) rather than at the first prompt (Codex runs its SessionStart hooks then)."""
        ...

    @property
    def dialogs(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Start-up dialogs no configuration file answers: (text on screen, keys that answer
        it), e.g. Codex's review of new hooks."""
        ...

    def env(self, agent: InstalledAgent, path: str | None = None) -> dict[str, str]:
        """The pane's environment: ``agent.bin_dir`` first on ``PATH``, this home, offline."""
        ...

    def args(self) -> list[str]:
        """Arguments the agent is started with (before the test's own)."""
        ...

    def session_files(self) -> list[Path]:
        """The agent's transcripts so far, oldest first."""
        ...


def path_with(agent: InstalledAgent, path: str | None) -> str:
    """``PATH`` with the agent's ``bin`` first (``path`` defaults to this process's)."""
    rest = os.environ.get("PATH", "") if path is None else path
    return os.pathsep.join([str(agent.bin_dir), rest]) if rest else str(agent.bin_dir)


def install_session_hook(directory: Path, agent: str) -> Path:
    """Write the project's session hook for ``agent`` as ``directory/herdr-agent-state.sh``."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / SESSION_HOOK_NAME
    target.write_text(SESSION_HOOK_ASSET.read_text().replace("@AGENT@", agent))
    target.chmod(0o755)
    return target


def hook_command(hook: Path, action: str = "session") -> str:
    """The hook entry's command, as Herdr writes it: ``bash '<path>' <action>``."""
    quoted = "'" + str(hook).replace("'", "'\"'\"'") + "'"
    return f"bash {quoted} {action}"


def session_start_hooks(hook: Path) -> dict[str, object]:
    """A ``hooks`` object (Claude Code's settings, Codex's ``hooks.json``) running ``hook``
    at every session start."""
    entry = {"type": "command", "command": hook_command(hook), "timeout": 10}
    return {"SessionStart": [{"hooks": [entry]}]}


def files_by_age(directory: Path, pattern: str) -> list[Path]:
    """``pattern`` files under ``directory`` (recursively), oldest first; [] if none."""
    if not directory.is_dir():
        return []
    return sorted(directory.rglob(pattern), key=lambda p: p.stat().st_mtime_ns)
