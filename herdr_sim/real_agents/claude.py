"""A private, offline home for the real Claude Code: the fake LLM, no first-run questions.

Claude Code reads its state from ``$CLAUDE_CONFIG_DIR`` (default ``~/.claude``; its global
state file then is ``$CLAUDE_CONFIG_DIR/.claude.json``), so a test gives it a fresh
directory, and a private ``HOME`` besides. There ``.claude.json`` answers the first-run
dialogs ahead (onboarding done, a theme, the dummy API key approved — Claude Code keys the
approval by the key's last 20 characters — and the project directory trusted), and the
environment points the Anthropic client at the fake LLM (``ANTHROPIC_BASE_URL``, a dummy
``ANTHROPIC_API_KEY``) with telemetry, error reports, the auto-updater and all other
non-essential traffic off. The project's Herdr integration is what ``herdr integration
install claude`` installs: a ``SessionStart`` hook in ``settings.json`` running
``hooks/herdr-agent-state.sh session``, which reports the session id and transcript path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .home import files_by_age, install_session_hook, path_with, session_start_hooks
from .install import InstalledAgent

__all__ = ["API_KEY", "ClaudeHome", "prepare_claude_home"]

#: a dummy key; the fake LLM accepts anything
API_KEY = "sk-ant-pytest-herdr-fake-key-0000000000"


@dataclass(frozen=True)
class ClaudeHome:
    """A prepared private ``HOME`` and ``$CLAUDE_CONFIG_DIR`` for Claude Code."""

    home: Path
    base_url: str
    #: Claude Code's ``--permission-mode`` (``default`` asks before a tool runs)
    permission_mode: str = "default"
    ready_text: str = "? for shortcuts"
    #: its configuration answers every start-up dialog
    session_at_start: bool = True
    dialogs: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def agent_dir(self) -> Path:
        """``$CLAUDE_CONFIG_DIR``."""
        return self.home / ".claude"

    @property
    def sessions_dir(self) -> Path:
        """Where Claude Code keeps its transcripts (``<cwd with / as ->/<session id>.jsonl``)."""
        return self.agent_dir / "projects"

    def session_files(self) -> list[Path]:
        """Every transcript Claude Code wrote so far, oldest first."""
        return files_by_age(self.sessions_dir, "*.jsonl")

    def args(self) -> list[str]:
        """``--permission-mode`` as configured."""
        return ["--permission-mode", self.permission_mode]

    def env(self, agent: InstalledAgent, path: str | None = None) -> dict[str, str]:
        """The fake LLM's URL and a dummy key; nothing else leaves the machine."""
        return {
            "PATH": path_with(agent, path),
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.agent_dir),
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
        }


def global_state(cwd: Path) -> dict[str, object]:
    """``.claude.json``: every first-run question answered for the project ``cwd``."""
    return {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "numStartups": 1,
        "autoUpdates": False,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {
            str(cwd): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True,
                       "allowedTools": []},
        },
    }  # fmt: skip


def prepare_claude_home(
    home: Path, base_url: str, cwd: Path, *, integration: bool = True,
    permission_mode: str = "default",
) -> ClaudeHome:  # fmt: skip
    """Write ``.claude.json`` and ``settings.json`` (with the Herdr hook) under ``home``."""
    prepared = ClaudeHome(home, base_url, permission_mode)
    config = prepared.agent_dir
    config.mkdir(parents=True, exist_ok=True)
    (config / ".claude.json").write_text(json.dumps(global_state(cwd), indent=2) + "\n")
    settings: dict[str, object] = {}
    if integration:
        hook = install_session_hook(config / "hooks", "claude")
        settings["hooks"] = session_start_hooks(hook)
    (config / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    return prepared
