"""Fixtures for testing the plugin with ``pytester``: a stand-in "real" Herdr executable."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI_MAIN = "import sys; from herdr_sim.herdr_cli import main; sys.exit(main())"


@pytest.fixture
def standin_herdr(tmp_path: Path) -> Path:
    """An executable that behaves like a real ``herdr`` binary for the real backend: its
    ``server --session NAME`` serves the simulator where Herdr would put that session's socket
    (``$XDG_CONFIG_HOME/herdr/sessions/NAME/herdr.sock``); every other command is the
    simulator's CLI. It lets the real-backend code path run in CI, where no Herdr is installed.
    """
    path = tmp_path / "herdr"
    path.write_text(
        "#!/bin/sh\n"
        "# a stand-in for a real herdr binary (pytest-herdr's plugin tests)\n"
        f'export PYTHONPATH="{REPO}${{PYTHONPATH:+:$PYTHONPATH}}"\n'
        'export HERDR_SIM_CONFIG_DIR="$XDG_CONFIG_HOME/herdr"\n'
        'if [ "$1" = server ] && [ "$2" = --session ]; then\n'
        f'  exec "{sys.executable}" -m herdr_sim serve --session "$3"\n'
        "fi\n"
        f'exec "{sys.executable}" -c "{CLI_MAIN}" "$@"\n'
    )
    path.chmod(0o755)
    assert os.access(path, os.X_OK)
    return path
