"""Fixtures for the `herdr` CLI tests: a recording fake server and two ways to run the CLI.

``cli`` runs :func:`herdr_sim.herdr_cli.main` in-process with captured output (fast, and
what most tests use); ``script`` runs the installed launcher as a real subprocess, which is
what panes and agent hooks execute.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from herdr_sim.herdr_cli import main
from herdr_sim.host.cli_install import install_cli
from tests.cli.fake_herdr import FakeHerdr


@dataclass
class Run:
    """The outcome of one CLI run."""

    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        """stderr split into lines."""
        return self.err.splitlines()


@pytest.fixture
def sock_dir(short_dir: Path) -> Path:
    """The root conftest's short private /tmp directory (socket paths stay under ~108 bytes)."""
    return short_dir


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, sock_dir: Path) -> Path:
    """Remove every Herdr variable and point the simulator's config dir at ``sock_dir``."""
    for name in list(os.environ):
        if name.startswith("HERDR_") or name == "XDG_CONFIG_HOME":
            monkeypatch.delenv(name)
    config = sock_dir / "cfg"
    monkeypatch.setenv("HERDR_SIM_CONFIG_DIR", str(config))
    return config


@pytest.fixture
def fake(sock_dir: Path, clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHerdr]:
    """A started fake server that the CLI reaches through ``HERDR_SOCKET_PATH``."""
    server = FakeHerdr(sock_dir / "herdr.sock").start()
    monkeypatch.setenv("HERDR_SOCKET_PATH", str(server.path))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """``cli(*args)`` runs the CLI in-process and returns its exit code and output."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


@pytest.fixture
def launcher(sock_dir: Path) -> Path:
    """The installed `herdr` launcher script."""
    return install_cli(sock_dir / "bin")


@pytest.fixture
def script(launcher: Path) -> Callable[..., Run]:
    """``script(*args, env=...)`` runs the installed launcher as a subprocess.

    The child gets the current environment (already cleaned by ``clean_env``) plus
    ``env``, and a ``PATH`` without the virtualenv, proving the launcher needs neither.
    """

    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 30) -> Run:
        child_env = dict(os.environ)
        child_env["PATH"] = "/usr/bin:/bin"
        child_env.pop("VIRTUAL_ENV", None)
        child_env.update(env or {})
        proc = subprocess.run(
            [str(launcher), *args],
            env=child_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    return run


@pytest.fixture
def python_exe() -> str:
    """The interpreter running the tests, the one installed launchers name: ``sys.executable``.

    Neither a pyenv shim (which adds tens of milliseconds of shell) nor the symlink
    resolved (in a virtualenv that is the base interpreter, whose ``site`` loads another
    set of packages and starts at a different speed).
    """
    return sys.executable
