"""``bash .ci/demo`` on a fresh copy of the repository, as a newcomer runs it: it installs the
project and its locked runtime set into the copy's ``.venv`` and runs the demo, with an empty
``HOME`` and with ``npm``, ``node`` and ``apt-get`` first on ``PATH`` as traps that record any
call. The demo needs nothing but Python and git, and writes nothing under ``HOME``.
(How long it takes, cold and warm, is ``bench/demo_setup.py``'s row, not a timed test.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRAPPED = ("npm", "npx", "node", "apt-get", "apt", "dpkg", "sudo")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def tracked_copy(destination: Path) -> Path:
    """The repository's tracked files as they are in the working tree (a clone would miss
    uncommitted edits), without ``.venv`` or anything else git ignores."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=30
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def traps(directory: Path, calls: Path) -> Path:
    """A directory of stand-ins for ``TRAPPED`` that log their call to ``calls`` and fail.

    Also a quiet ``rustc``: pip asks ``rustc --version`` for its user agent, and rustup's
    proxy, where a machine has one, would write ``~/.rustup`` to answer: that is the machine's
    doing, not the demo's, so it answers here without touching ``HOME``.
    """
    directory.mkdir()
    for name in TRAPPED:
        trap = directory / name
        trap.write_text(f'#!/bin/sh\necho "{name} $*" >> {calls}\nexit 97\n')
        trap.chmod(0o755)
    rustc = directory / "rustc"
    rustc.write_text("#!/bin/sh\nexit 1\n")
    rustc.chmod(0o755)
    return directory


def test_the_demo_installs_only_the_project_and_writes_nothing_under_home(
    tmp_path: Path,
) -> None:
    """Slow because it installs the locked runtime set from the package index into a new
    virtualenv with no download cache, as a fresh machine does."""
    repo = tracked_copy(tmp_path / "repo")
    home = tmp_path / "home"
    home.mkdir()
    calls = tmp_path / "calls.log"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "PIP_", "PYTEST_HERDR", "XDG_", "HERDR_"))
        and key not in ("VIRTUAL_ENV", "CI")
    }
    env["HOME"] = str(home)
    env["PATH"] = f"{traps(tmp_path / 'traps', calls)}:{env['PATH']}"
    for run in ("cold", "warm"):
        done = subprocess.run(
            ["bash", ".ci/demo"], cwd=repo, env=env, capture_output=True, text=True,
            timeout=240, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{run}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
        assert "8. [ok ] herdr_spawn_agent" in done.stdout, done.stdout[-3000:]
    assert not calls.exists(), f"the demo called {calls.read_text()}"
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == []
    installed = subprocess.run(
        [str(repo / ".venv" / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    ).stdout  # fmt: skip
    # the runtime set only: no MCP stack, test runner plugins, linters or type checkers
    for dev_only in ("pytest-xdist", "ruff", "mypy", "hypothesis", "asyncssh", "mcp", "pydantic"):
        assert f"\n{dev_only}==" not in f"\n{installed}", installed
