"""Starting and stopping the Herdr a test runs against: the simulator or a real Herdr.

Both give a :class:`HerdrServer`: a socket, the ``herdr`` executable that talks to it, and
the environment a CLI run or an agent needs to reach it. Every server lives in its own
short directory under ``/tmp`` (AF_UNIX paths are limited to about 107 bytes, and pytest's
``tmp_path`` is often longer) with its own HOME and config directory, so parallel workers
and a developer's own Herdr never meet.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from herdr_sim.client import request

from .events import EventRecorder
from .forensics import WireTail
from .settings import Backend
from .temp_dirs import short_dir

if TYPE_CHECKING:  # the simulator is imported when a test first starts one
    from herdr_sim import Simulator
    from herdr_sim.config import SimulatorConfig

#: variables a pane or CLI run keeps from the test process; everything else is left out so
#: a developer's own HERDR_* variables, tokens and shell setup never leak into a test
KEPT_ENV = ("PATH", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")

#: how long a real Herdr may take to answer its first ping
REAL_START_TIMEOUT = 20.0
#: protocol lines kept per server for failure reports
TAIL_LINES = 40


class BackendError(RuntimeError):
    """A server could not be started or stopped."""


def hermetic_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment for processes of one test server: the test process's basics only."""
    env = {key: os.environ[key] for key in KEPT_ENV if key in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["HOME"] = str(home)
    env.update(extra)
    return env


@dataclass
class HerdrServer:
    """One running Herdr (simulated or real) for a test."""

    backend: Backend
    socket_path: Path
    #: the ``herdr`` executable for this server (the simulator's own CLI, or the real binary)
    cli_path: Path
    #: the environment for CLI runs and agents: HOME, config dir and ``HERDR_SOCKET_PATH``
    env: dict[str, str]
    #: the server's private directory (removed when it stops)
    directory: Path
    #: the simulator, when this is one (``None`` for a real Herdr)
    sim: Simulator | None = None
    #: a named session (real Herdr; the simulator's socket is given directly)
    session: str | None = None
    _stop: Callable[[], None] = field(default=lambda: None, repr=False)
    stopped: bool = field(default=False, repr=False)
    #: the last requests and responses on this server's wire, for failure reports: a
    #: simulator's own wire tap feeds it (every client, the CLI and agents included); for a
    #: real Herdr, whose wire cannot be tapped, the fixtures' clients do
    tail: WireTail = field(default_factory=lambda: WireTail(TAIL_LINES), repr=False)
    #: every event since the server started (the fixtures start one per server)
    events: EventRecorder | None = field(default=None, repr=False)

    def client_observers(self) -> list[Callable[[str, dict[str, Any]], None]]:
        """What a client of this server must show its lines to: nothing for a simulator
        (its wire tap sees them already), the protocol tail for a real Herdr."""
        return [] if self.sim is not None else [self.tail]

    def tap(self, observer: Callable[[str, dict[str, Any]], None]) -> None:
        """Show every wire line of a simulator to ``observer`` (no-op for a real Herdr)."""
        if self.sim is not None:
            self.sim.wire_taps.append(observer)

    def stop(self) -> None:
        """Stop the server and every process it started; remove its directory. Idempotent."""
        if self.stopped:
            return
        self.stopped = True
        try:
            self._stop()
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)

    def check(self) -> None:
        """Raise what went wrong inside the simulator (a real Herdr has nothing to report)."""
        if self.sim is not None:
            self.sim.check()


def start_sim(config: SimulatorConfig, directory: Path | None = None) -> HerdrServer:
    """Start a simulator in a fresh private directory with ``config``'s other settings."""
    from herdr_sim import Simulator

    directory = directory or short_dir()
    home = directory / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    config.socket_path = directory / "herdr.sock"
    config.runtime_dir = directory / "rt"
    config.base_env = hermetic_env(home, HERDR_SIM_CONFIG_DIR=str(directory / "cfg"))
    config.agent_home = home  # the fakes' sandbox is this server's own HOME
    sim = Simulator(config)
    try:
        sim.start()
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    env = dict(config.base_env, HERDR_SOCKET_PATH=str(sim.socket_path))
    server = HerdrServer(
        backend="sim",
        socket_path=sim.socket_path,
        cli_path=sim.cli_path,
        env=env,
        directory=directory,
        sim=sim,
        _stop=sim.stop,
    )
    server.tap(server.tail)
    return server


def is_simulator_cli(path: Path) -> bool:
    """Whether ``path`` is the simulator's own ``herdr`` (installed by ``herdr-sim``), which
    must not pass for a real Herdr."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b"written by herdr_sim.herdr_cli.install" in head


def require_real_bin(herdr_bin: Path | None) -> Path:
    """The real Herdr executable, or skip the test saying why there is none."""
    if herdr_bin is None:
        pytest.skip("no real herdr: pass --herdr-bin PATH (or HERDR_BIN_PATH) or put herdr on PATH")
    if not (herdr_bin.is_file() and os.access(herdr_bin, os.X_OK)):
        pytest.skip(f"no real herdr: {herdr_bin} is not an executable file")
    if is_simulator_cli(herdr_bin):
        pytest.skip(f"no real herdr: {herdr_bin} is the simulator's herdr CLI, not Herdr")
    return herdr_bin


def start_real(
    herdr_bin: Path, session: str, directory: Path | None = None, fake_agents: bool = True
) -> HerdrServer:
    """Start ``herdr server`` on a named session in an isolated config tree.

    HOME and XDG_CONFIG_HOME point into the server's own directory, so the session, its
    ``session.json`` and its socket (``<config>/herdr/sessions/<session>/herdr.sock``) are
    private to the test. The simulator's fake agents go first on PATH, so a test can start
    ``pi`` or ``claude`` against a real Herdr too.
    """
    directory = directory or short_dir()
    home, config_home = directory / "home", directory / "cfg"
    home.mkdir(mode=0o700, exist_ok=True)
    config_home.mkdir(mode=0o700, exist_ok=True)
    env = hermetic_env(home, XDG_CONFIG_HOME=str(config_home), TERM="xterm-256color")
    if fake_agents:
        from herdr_sim.fake_agent import install_fake_agents

        fake_bin = directory / "fake-bin"
        install_fake_agents(fake_bin)
        env["PATH"] = f"{fake_bin}{os.pathsep}{env['PATH']}"
    socket_path = config_home / "herdr" / "sessions" / session / "herdr.sock"
    log_path = directory / "server.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(herdr_bin), "server", "--session", session],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_ready(proc, socket_path, log_path)
    except BaseException:
        _terminate(proc)
        shutil.rmtree(directory, ignore_errors=True)
        raise
    env["HERDR_SOCKET_PATH"] = str(socket_path)

    def stop() -> None:
        with contextlib.suppress(OSError, ValueError):
            request(socket_path, "server.stop", {}, timeout=5)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            _terminate(proc)

    return HerdrServer(
        backend="real",
        socket_path=socket_path,
        cli_path=herdr_bin,
        env=env,
        directory=directory,
        session=session,
        _stop=stop,
    )


def _wait_ready(proc: subprocess.Popen[bytes], socket_path: Path, log_path: Path) -> None:
    """Poll ``ping`` until the server answers (bounded); fail with its log if it dies."""
    deadline = time.monotonic() + REAL_START_TIMEOUT
    while True:
        if proc.poll() is not None:
            log = log_path.read_text(errors="replace")[-2000:]
            raise BackendError(f"herdr server exited with {proc.returncode}:\n{log}")
        with contextlib.suppress(OSError, ValueError):
            if "result" in request(socket_path, "ping", {}, timeout=2):
                return
        if time.monotonic() > deadline:
            raise BackendError(f"herdr server did not answer ping within {REAL_START_TIMEOUT} s")
        time.sleep(0.05)  # polling a socket that does not exist yet: nothing to wait on


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """End the server's whole process group (its panes included)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue
