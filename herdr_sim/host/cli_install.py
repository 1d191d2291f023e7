"""Install an executable `herdr` script that runs this CLI, for a pane's ``PATH``.

The script must work from any shell a pane runs, whatever that shell's ``PATH`` or
virtualenv state, so it names the current interpreter (:data:`sys.executable`) in its
shebang and puts the directory holding the ``herdr_sim`` package first on ``sys.path``.
It runs Python with ``-S``: skipping ``site`` roughly halves the start-up time of a
command that agents' hooks run on every state change. A shebang cannot hold an
interpreter path with whitespace (or one longer than the kernel's limit), so for those
paths the script starts as a tiny ``/bin/sh`` trampoline that is also valid Python.
"""

from __future__ import annotations

import sys
from pathlib import Path

from orchestrator.client.file_trust.private_files import write_atomic

__all__ = ["install_cli", "package_parent", "script_text"]

_SHEBANG_MAX = 120
_SH_SPECIALS = ("\\", '"', "$", "`")


def package_parent() -> Path:
    """The directory that contains the ``herdr_sim`` package."""
    return Path(__file__).resolve().parents[2]


def _header(interpreter: str) -> str:
    simple = (
        interpreter.startswith("/")
        and len(interpreter) <= _SHEBANG_MAX
        and not any(ch.isspace() for ch in interpreter)
    )
    if simple:
        return f"#!{interpreter} -S\n"
    if "'''" in interpreter or "\\" in interpreter or "\n" in interpreter:
        raise ValueError(f"cannot write a launcher for interpreter path {interpreter!r}")
    quoted = interpreter
    for special in _SH_SPECIALS:
        quoted = quoted.replace(special, "\\" + special)
    # Runs as `exec "<python>" -S "$0" "$@"` under sh; Python sees a string literal.
    return f"#!/bin/sh\n'''exec' \"{quoted}\" -S \"$0\" \"$@\"\n' '''\n"


def script_text(interpreter: str | None = None, package_root: Path | None = None) -> str:
    """The launcher's source for ``interpreter`` (default: the running one)."""
    exe = interpreter if interpreter is not None else sys.executable
    root = str(package_root if package_root is not None else package_parent())
    return (
        _header(exe)
        + '"""`herdr` for the Herdr simulator (written by herdr_sim.host.cli_install)."""\n'
        + "import sys\n"
        + f"sys.path.insert(0, {root!r})\n"
        + "import _signal\n"
        + "_signal.signal(_signal.SIGINT, _signal.SIG_DFL)\n"
        + "from herdr_sim.herdr_cli import main\n"
        + "sys.exit(main())\n"
    )


def install_cli(directory: Path) -> Path:
    """Write (or atomically replace) an executable ``directory/herdr``; return its path.

    ``directory`` is created with mode 0700 when missing. The script is written to a
    temporary file in the same directory and renamed into place, so a pane that runs
    ``herdr`` while the simulator reinstalls it never sees a half-written file.
    """
    directory = Path(directory)
    if not directory.is_dir():
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.chmod(0o700)
    target = directory / "herdr"
    write_atomic(target, script_text(), mode=0o755, sync=False, own_link_parent=True)
    return target
