"""A stand-in "real" Herdr executable, so the real backend's code path runs where no Herdr
is installed (CI): ``server --session NAME`` serves the simulator (``herdr-sim serve``) where
Herdr would put that session's socket (``$XDG_CONFIG_HOME/herdr/sessions/NAME/herdr.sock``);
every other command is the simulator's CLI.

Used by the plugin's tests (the ``standin_herdr`` fixture) and by CI's run of the contract
suite with ``--herdr-backend real``: ``python -m tests.standin_herdr DIR`` writes
``DIR/herdr`` and prints its path.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI_MAIN = "import sys; from herdr_sim.herdr_cli import main; sys.exit(main())"


def write_standin(directory: Path) -> Path:
    """Write the stand-in as ``directory/herdr`` (executable); its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "herdr"
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


if __name__ == "__main__":
    print(write_standin(Path(sys.argv[1])))
