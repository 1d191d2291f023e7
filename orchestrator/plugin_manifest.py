"""The orchestrator as a Herdr plugin: ``herdr-orchestrator plugin-manifest DIR``.

Why: Herdr installs plugins from a directory holding a ``herdr-plugin.toml`` (``herdr plugin
link DIR`` / ``herdr plugin install``) and offers their actions in its UI and API
(``plugin.action.invoke``). One read-only action is enough to make the orchestrator visible
there: ``check`` runs ``herdr-orchestrator doctor``, i.e. ``herdr_doctor`` (an R0 tool: it
reads the configuration, pings Herdr, looks for the agents' binaries; it types nothing and
starts nothing), and prints its report, which lands in the plugin's command log. Its exit
status is the doctor's verdict (1 when a check failed), so Herdr records a failing setup as a
failed run instead of a success to be read. Herdr runs the action with its own socket in
``HERDR_SOCKET_PATH``, so the doctor checks the Herdr that invoked it.

The command names this Python and the ``orchestrator`` module by absolute path: a plugin runs
with Herdr's environment, whose ``PATH`` need not hold the virtual environment the package is
installed in. The manifest is written atomically, 0644 (Herdr's loader, and the simulator's
stricter one, refuse a manifest others can write), never through a link planted at its path.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

from orchestrator.client.file_trust.private_files import write_atomic

MANIFEST_FILE = "herdr-plugin.toml"
PLUGIN_ID = "herdr-orchestrator"
CHECK_ACTION = "check"
#: the oldest Herdr whose plugin commands this manifest's form suits (plugins global per user)
MIN_HERDR_VERSION = "0.7.5"


def _version() -> str:
    try:
        return metadata.version("pytest-herdr")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def _toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for the characters we write)."""
    return json.dumps(value, ensure_ascii=False)


def manifest_text(python: str | None = None) -> str:
    """The manifest: the plugin and its one read-only ``check`` action."""
    command = [python or sys.executable, "-m", "orchestrator", "doctor"]
    argv = ", ".join(_toml_string(arg) for arg in command)
    return (
        f"id = {_toml_string(PLUGIN_ID)}\n"
        'name = "Herdr orchestrator"\n'
        f"version = {_toml_string(_version())}\n"
        f"min_herdr_version = {_toml_string(MIN_HERDR_VERSION)}\n"
        'description = "MCP tools that drive Herdr and delegate to coding agents"\n'
        'platforms = ["linux", "macos"]\n'
        "\n"
        "[[actions]]\n"
        f"id = {_toml_string(CHECK_ACTION)}\n"
        'title = "Check the orchestrator"\n'
        'description = "Read-only: runs herdr_doctor (configuration, Herdr, agents, policy), '
        'prints its report and fails when a check failed"\n'
        'contexts = ["global"]\n'
        f"command = [{argv}]\n"
    )


def write_manifest(directory: Path | str, python: str | None = None) -> Path:
    """Write ``herdr-plugin.toml`` into ``directory`` (created if missing); its path."""
    return write_atomic(Path(directory) / MANIFEST_FILE, manifest_text(python), mode=0o644)


__all__ = ["CHECK_ACTION", "MANIFEST_FILE", "PLUGIN_ID", "manifest_text", "write_manifest"]
