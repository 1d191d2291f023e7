"""Install the fake agents' launchers (``pi``, ``claude``, ``codex``, ``opencode``) in a dir.

Each launcher starts fast like the simulator's ``herdr`` script: the running interpreter with
``-S`` in the shebang, the package root first on ``sys.path``, and only the fake agent's own
modules imported. Because the kernel names a shebang script's process after the script,
``/proc/<pid>/comm`` of a running fake is its kind (``pi``), as process detection expects.
"""

from __future__ import annotations

import sys
from pathlib import Path

from orchestrator.client.file_trust.private_files import write_atomic

from .personas import LAUNCHER_KINDS

#: ``LAUNCHER_KINDS``: the executable names written by :func:`install_fake_agents`
__all__ = ["LAUNCHER_KINDS", "install_fake_agents", "launcher_text"]


def launcher_text(kind: str, interpreter: str | None = None) -> str:
    """The source of the launcher for ``kind``."""
    from herdr_sim.host.cli_install import _header, package_parent

    exe = interpreter if interpreter is not None else sys.executable
    root = str(package_parent())
    return (
        _header(exe)
        + f'"""Fake `{kind}` for the Herdr simulator (from herdr_sim.fake_agent.install)."""\n'
        + "import sys\n"
        + f"sys.path.insert(0, {root!r})\n"
        + "from herdr_sim.fake_agent.app import main\n"
        + f"sys.exit(main(kind={kind!r}))\n"
    )


def install_fake_agents(directory: Path) -> list[Path]:
    """Write (or atomically replace) one executable launcher per kind; return their paths."""
    directory = Path(directory)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    written: list[Path] = []
    for kind in LAUNCHER_KINDS:
        target = directory / kind
        write_atomic(target, launcher_text(kind), mode=0o755, sync=False, own_link_parent=True)
        written.append(target)
    return written
