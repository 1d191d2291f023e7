"""A private, offline home for the real Codex CLI: the fake LLM over the Responses API.

Codex reads everything from ``$CODEX_HOME`` (default ``~/.codex``), so a test gives it a
fresh directory, and a private ``HOME`` besides. ``config.toml`` declares a model provider
``fake`` with ``base_url`` the fake LLM's ``…/v1``, ``wire_api = "responses"`` and the dummy
key read from ``$HERDR_FAKE_LLM_KEY``, selects its model, trusts the project directory (no
trust dialog) and turns off update checks and analytics. The project's Herdr integration
is what ``herdr integration install codex`` installs: ``herdr-agent-state.sh`` in
``$CODEX_HOME``, a ``SessionStart`` hook naming it in ``hooks.json``, and ``hooks = true``
under ``[features]`` in ``config.toml``; the hook reports the session id and rollout path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .home import files_by_age, install_session_hook, path_with, session_start_hooks
from .install import InstalledAgent

__all__ = ["KEY_ENV", "MODEL_ID", "CodexHome", "prepare_codex_home"]

MODEL_ID = "fake-model"
#: the environment variable the provider's dummy key is read from
KEY_ENV = "HERDR_FAKE_LLM_KEY"


@dataclass(frozen=True)
class CodexHome:
    """A prepared private ``HOME`` and ``$CODEX_HOME`` for Codex."""

    home: Path
    base_url: str
    ready_text: str = MODEL_ID  # the footer names the model
    #: with the integration: Codex asks the user to trust a new hook before running it (the
    #: trust is stored as a hash in ``config.toml`` that cannot be written ahead), so the
    #: fixture picks "2. Trust all and continue"
    dialogs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Codex runs its SessionStart hooks when the first prompt starts the session
    session_at_start: bool = False

    @property
    def agent_dir(self) -> Path:
        """``$CODEX_HOME``."""
        return self.home / ".codex"

    @property
    def sessions_dir(self) -> Path:
        """Where Codex keeps its rollouts (``YYYY/MM/DD/rollout-<time>-<id>.jsonl``)."""
        return self.agent_dir / "sessions"

    def session_files(self) -> list[Path]:
        """Every rollout Codex wrote so far, oldest first."""
        return files_by_age(self.sessions_dir, "rollout-*.jsonl")

    def args(self) -> list[str]:
        """``--no-daemon``: the app server runs inside the TUI. Without it Codex copies
        itself into ``$CODEX_HOME/packages`` and leaves a detached ``codex app-server``
        daemon running after the pane closes. (``config.toml`` holds the model.)"""
        return ["--no-daemon"]

    def env(self, agent: InstalledAgent, path: str | None = None) -> dict[str, str]:
        """This home and the dummy key; nothing leaves the machine."""
        return {
            "PATH": path_with(agent, path),
            "HOME": str(self.home),
            "CODEX_HOME": str(self.agent_dir),
            KEY_ENV: "pytest-herdr-fake-key",
        }


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def config_toml(base_url: str, cwd: Path, *, hooks: bool) -> str:
    """``config.toml``: the fake provider, its model, the trusted project, nothing online."""
    lines = [
        f"model = {_toml_string(MODEL_ID)}",
        'model_provider = "fake"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.fake]",
        'name = "fake LLM (pytest-herdr)"',
        f"base_url = {_toml_string(base_url)}",
        f"env_key = {_toml_string(KEY_ENV)}",
        'wire_api = "responses"',
        "",
        "[analytics]",
        "enabled = false",
        "",
        f"[projects.{_toml_string(str(cwd))}]",
        'trust_level = "trusted"',
    ]
    if hooks:
        lines += ["", "[features]", "hooks = true"]
    return "\n".join(lines) + "\n"


def prepare_codex_home(
    home: Path, base_url: str, cwd: Path, *, integration: bool = True
) -> CodexHome:
    """Write ``config.toml`` (and the Herdr hook with ``hooks.json``) under ``home``."""
    trust = (("Hooks need review", ("2", "Enter")),) if integration else ()
    prepared = CodexHome(home, base_url, dialogs=trust)
    config = prepared.agent_dir
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(config_toml(base_url, cwd, hooks=integration))
    if integration:
        hook = install_session_hook(config, "codex")
        hooks = {"hooks": session_start_hooks(hook)}
        (config / "hooks.json").write_text(json.dumps(hooks, indent=2) + "\n")
    return prepared
