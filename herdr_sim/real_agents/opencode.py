"""A private, offline home for the real opencode: the fake LLM as an OpenAI-compatible provider.

opencode reads its configuration from ``$XDG_CONFIG_HOME/opencode/opencode.json`` and keeps
its data (sessions in a SQLite database, logs) under ``$XDG_DATA_HOME/opencode``, so a test
gives it a private ``HOME`` with every XDG directory inside. ``opencode.json`` declares a
provider ``fake`` (``@ai-sdk/openai-compatible``, which opencode bundles, with ``baseURL``
the fake LLM's ``…/v1`` and a dummy key) and selects its model; autoupdate and sharing are
off, as are the model catalog fetch and LSP downloads (environment). The project's Herdr
integration is a server plugin (``assets/opencode/herdr-agent-state.js``) installed where
``herdr integration install opencode`` puts Herdr's: ``$XDG_CONFIG_HOME/opencode/plugins/``;
it reports the root session and working / blocked / idle. (Herdr also installs a TUI plugin
reporting the session the pane shows; the project has none.)
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from .home import files_by_age, path_with
from .install import InstalledAgent

__all__ = ["MODEL_ID", "OpencodeHome", "prepare_opencode_home"]

MODEL_ID = "fake-model"
MODEL_NAME = "Fake model"
#: the project's opencode plugin (package data) and the name it is installed under
PLUGIN_ASSET = Path(__file__).parent / "assets" / "opencode" / "herdr-agent-state.js"
PLUGIN_NAME = "herdr-agent-state.js"


@dataclass(frozen=True)
class OpencodeHome:
    """A prepared private ``HOME`` (and XDG directories) for opencode."""

    home: Path
    base_url: str
    ready_text: str = MODEL_NAME  # the prompt box names the model
    #: opencode creates its session with the first prompt (the plugin reports it then)
    session_at_start: bool = False
    #: opencode asks nothing at start-up
    dialogs: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def agent_dir(self) -> Path:
        """opencode's configuration directory (``$XDG_CONFIG_HOME/opencode``)."""
        return self.home / ".config" / "opencode"

    @property
    def data_dir(self) -> Path:
        """opencode's data directory (``opencode.db``, ``log/``)."""
        return self.home / ".local" / "share" / "opencode"

    @property
    def sessions_dir(self) -> Path:
        """opencode keeps its sessions in ``opencode.db`` in its data directory."""
        return self.data_dir

    def session_files(self) -> list[Path]:
        """opencode keeps sessions in one SQLite database: ``[opencode.db]`` once written."""
        return files_by_age(self.data_dir, "opencode.db")

    def args(self) -> list[str]:
        """Nothing: ``opencode.json`` selects the model."""
        return []

    def env(self, agent: InstalledAgent, path: str | None = None) -> dict[str, str]:
        """This home; nothing leaves the machine."""
        return {
            "PATH": path_with(agent, path),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
        }


def opencode_json(base_url: str) -> dict[str, object]:
    """``opencode.json``: one OpenAI-compatible provider at ``base_url`` (``…/v1``)."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": f"fake/{MODEL_ID}",
        # no side request for a session title: the script answers only the turns
        "agent": {"title": {"disable": True}},
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake LLM",
                "options": {"baseURL": base_url, "apiKey": "pytest-herdr-fake-key"},
                "models": {MODEL_ID: {"name": MODEL_NAME}},
            }
        },
    }


def prepare_opencode_home(home: Path, base_url: str, *, integration: bool = True) -> OpencodeHome:
    """Write ``opencode.json`` (and the Herdr plugin) under ``home``."""
    prepared = OpencodeHome(home, base_url)
    prepared.agent_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(opencode_json(base_url), indent=2) + "\n"
    (prepared.agent_dir / "opencode.json").write_text(text)
    if integration:
        plugins = prepared.agent_dir / "plugins"
        plugins.mkdir(exist_ok=True)
        shutil.copyfile(PLUGIN_ASSET, plugins / PLUGIN_NAME)
    return prepared
