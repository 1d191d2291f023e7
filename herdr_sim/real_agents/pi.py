"""Setting up a private, offline home for the real pi: its model, its settings, our extension.

pi reads everything from ``$PI_CODING_AGENT_DIR`` (default ``~/.pi/agent``), so a test gives
it a fresh directory and never touches the user's own. There ``models.json`` declares one
OpenAI-compatible provider, ``fake``, at the fake LLM's URL (pi speaks chat completions,
streamed, to it), ``settings.json`` turns install telemetry off, and the project's Herdr
integration goes where ``herdr integration install pi`` puts Herdr's:
``extensions/herdr-agent-state.ts``. The environment adds ``PI_OFFLINE=1`` (no model catalog
refresh or other automatic network use), ``PI_SKIP_VERSION_CHECK=1`` and ``PI_TELEMETRY=0``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from .home import files_by_age, path_with
from .install import InstalledAgent

__all__ = [
    "EXTENSION_ASSET",
    "EXTENSION_NAME",
    "PROVIDER",
    "PiHome",
    "install_extension",
    "prepare_pi_home",
]

#: the provider name and model id pi is started with: ``--model fake/fake-model``
PROVIDER = "fake"
MODEL_ID = "fake-model"
#: the project's pi extension (package data) and the file name it is installed under
EXTENSION_ASSET = Path(__file__).parent / "assets" / "pi" / "herdr-agent-state.ts"
EXTENSION_NAME = "herdr-agent-state.ts"


@dataclass(frozen=True)
class PiHome:
    """A prepared ``$PI_CODING_AGENT_DIR`` and what to run pi with."""

    agent_dir: Path
    base_url: str
    #: pi's footer names the model once its editor is up
    ready_text: str = MODEL_ID
    #: pi asks nothing at start-up
    session_at_start: bool = True
    dialogs: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def model(self) -> str:
        """``--model`` value naming the fake LLM's model."""
        return f"{PROVIDER}/{MODEL_ID}"

    @property
    def sessions_dir(self) -> Path:
        """Where pi keeps its session files (one subdirectory per cwd)."""
        return self.agent_dir / "sessions"

    def session_files(self) -> list[Path]:
        """Every session file pi wrote so far, oldest first."""
        return files_by_age(self.sessions_dir, "*.jsonl")

    def args(self) -> list[str]:
        """``--model fake/fake-model``."""
        return ["--model", self.model]

    def env(self, agent: InstalledAgent, path: str | None = None) -> dict[str, str]:
        """Environment for pi: the installed ``bin`` first on ``PATH``, this home, offline."""
        return {
            "PATH": path_with(agent, path),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
        }


def models_json(base_url: str) -> dict[str, object]:
    """``models.json``: one OpenAI-compatible provider at ``base_url`` (``…/v1``)."""
    return {
        "providers": {
            PROVIDER: {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": "fake-key",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [
                    {
                        "id": MODEL_ID,
                        "name": "Fake model (pytest-herdr)",
                        "reasoning": False,
                        "input": ["text"],
                        "contextWindow": 128000,
                        "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    }
                ],
            }
        }
    }


def install_extension(agent_dir: Path) -> Path:
    """Copy the project's Herdr extension into ``agent_dir/extensions/``; its path."""
    target = agent_dir / "extensions" / EXTENSION_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(EXTENSION_ASSET, target)
    return target


def prepare_pi_home(agent_dir: Path, base_url: str, *, extension: bool = True) -> PiHome:
    """Write ``models.json`` and ``settings.json`` (and the extension) into ``agent_dir``."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(models_json(base_url), indent=2) + "\n")
    settings = {"enableInstallTelemetry": False, "defaultProvider": PROVIDER,
                "defaultModel": MODEL_ID}  # fmt: skip
    (agent_dir / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
    if extension:
        install_extension(agent_dir)
    return PiHome(agent_dir, base_url)
