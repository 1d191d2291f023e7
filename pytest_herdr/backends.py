"""Starting and stopping the Herdr a test runs against: the simulator or a real Herdr.

Both give a :class:`HerdrServer`: a socket, the ``herdr`` executable that talks to it, and
the environment a CLI run or an agent needs to reach it. Every server lives in its own
short directory under ``/tmp`` (AF_UNIX paths are limited to about 107 bytes, and pytest's
``tmp_path`` is often longer) with its own HOME and config directory, so parallel workers
and a developer's own Herdr never meet.

:meth:`HerdrServer.restart` stops a server and starts it again on the same socket and
session directory, so a test can check what Herdr restores (persistence is on by default).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from herdr_sim.client import request
from orchestrator.client.poll import Deadline

from .events import EventRecorder
from .forensics import WireTail
from .settings import Backend
from .temp_dirs import short_dir

if TYPE_CHECKING:  # the simulator is imported when a test first starts one
    from herdr_sim import Simulator
    from herdr_sim.config import SimulatorConfig

    from .request_log import RequestLog

#: variables a pane or CLI run keeps from the test process; everything else is left out so
#: a developer's own HERDR_* variables, tokens and shell setup never leak into a test
KEPT_ENV = ("PATH", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")

#: how long a real Herdr may take to answer its first ping
REAL_START_TIMEOUT = 20.0
#: protocol lines kept per server for failure reports
TAIL_LINES = 40


class BackendError(RuntimeError):
    """A server could not be started or stopped."""


def hermetic_env(
    home: Path,
    pane_env: Mapping[str, str] | None = None,
    pane_path: Sequence[Path | str] = (),
    **extra: str,
) -> dict[str, str]:
    """The environment for processes of one test server: the test process's basics only
    (:data:`KEPT_ENV`), HOME, the test's ``pane_env`` over them and ``pane_path`` first on
    PATH; ``extra`` (the server's own HOME-like variables) wins over everything."""
    env = {key: os.environ[key] for key in KEPT_ENV if key in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["HOME"] = str(home)
    env.update(pane_env or {})
    if pane_path:
        env["PATH"] = os.pathsep.join([*(str(entry) for entry in pane_path), env["PATH"]])
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
    #: stops the server and starts it again on the same socket (set by the starter)
    _restart: Callable[[HerdrServer], None] | None = field(default=None, repr=False)
    stopped: bool = field(default=False, repr=False)
    #: how many times :meth:`restart` restarted it
    restarts: int = field(default=0, repr=False)
    #: the simulators this server ran before its restarts (checked for errors at teardown)
    retired: list[Simulator] = field(default_factory=list, repr=False)
    #: the last requests and responses on this server's wire, for failure reports: a
    #: simulator's own wire tap feeds it (every client, the CLI and agents included); for a
    #: real Herdr, whose wire cannot be tapped, the fixtures' clients do
    tail: WireTail = field(default_factory=lambda: WireTail(TAIL_LINES), repr=False)
    #: every event since the server started (the fixtures start one per server)
    events: EventRecorder | None = field(default=None, repr=False)
    #: every request and release since the server started (``herdr_requests``)
    requests: RequestLog | None = field(default=None, repr=False)

    @property
    def time_scale(self) -> float:
        """The factor this server's Herdr timers run at: the simulator's ``time_scale``; 1
        for a real Herdr, whose clocks cannot be changed. The fixtures' default waits on
        this server are scaled by it."""
        return self.sim.config.time_scale if self.sim is not None else 1.0

    def client_observers(self) -> list[Callable[[str, dict[str, Any]], None]]:
        """What a client of this server must show its lines to: nothing for a simulator
        (its wire tap sees them already), the protocol tail for a real Herdr."""
        return [] if self.sim is not None else [self.tail]

    def tap(self, observer: Callable[[str, dict[str, Any]], None]) -> None:
        """Show every wire line of a simulator to ``observer`` (no-op for a real Herdr)."""
        if self.sim is not None:
            self.sim.wire_taps.append(observer)

    def restart(self) -> None:
        """Stop the server and start it again: the same socket, session and environment,
        what it persisted restored (a simulator persists unless started with
        ``persist=False``; a real Herdr always does), the same wire tail and event recorder
        (its recording goes on after the restart, so the failure report tells the whole
        story). Pane processes end with the old server, as in Herdr; clients reconnect
        by themselves (one connection per request)."""
        if self.stopped:
            raise BackendError(f"cannot restart a stopped server ({self.socket_path})")
        if self._restart is None:
            raise BackendError(f"this {self.backend} server cannot be restarted")
        if self.events is not None:
            self.events.stop()
        self._restart(self)
        self.restarts += 1
        if self.events is not None:
            self.events.reconnect()

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
        """Raise what went wrong inside the simulator, before or after a restart (a real
        Herdr has nothing to report)."""
        for sim in [*self.retired, *([self.sim] if self.sim is not None else [])]:
            sim.check()


def start_sim(
    config: SimulatorConfig,
    directory: Path | None = None,
    *,
    pane_env: Mapping[str, str] | None = None,
    pane_path: Sequence[Path | str] = (),
) -> HerdrServer:
    """Start a simulator in a fresh private directory with ``config``'s other settings (its
    socket, runtime directory and ``base_env`` are the plugin's: the hermetic environment
    with ``pane_env`` and ``pane_path``, see :func:`hermetic_env`)."""
    from herdr_sim import Simulator

    directory = directory or short_dir()
    home = directory / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    config.socket_path = directory / "herdr.sock"
    config.runtime_dir = directory / "rt"
    config.base_env = hermetic_env(
        home, pane_env, pane_path, HERDR_SIM_CONFIG_DIR=str(directory / "cfg")
    )
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
        _restart=_restart_sim,
    )
    server.tap(server.tail)
    return server


def _restart_sim(server: HerdrServer) -> None:
    """Stop ``server``'s simulator and start a new one with its settings on its socket (it
    restores the session file beside the socket), showing the same taps every line."""
    from herdr_sim import Simulator

    old = server.sim
    assert old is not None
    old.stop()
    server.retired.append(old)
    new = Simulator(old.config)
    new.wire_taps.extend(old.wire_taps)
    new.exchange_taps.extend(old.exchange_taps)
    new.release_taps.extend(old.release_taps)
    new.start()
    server.sim, server._stop = new, new.stop


def is_simulator_cli(path: Path) -> bool:
    """Whether ``path`` is the simulator's own ``herdr`` (installed by ``herdr-sim``), which
    must not pass for a real Herdr."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b"written by herdr_sim.host.cli_install" in head


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
    herdr_bin: Path,
    session: str,
    directory: Path | None = None,
    fake_agents: bool = True,
    *,
    pane_env: Mapping[str, str] | None = None,
    pane_path: Sequence[Path | str] = (),
) -> HerdrServer:
    """Start ``herdr server`` on a named session in an isolated config tree.

    HOME and XDG_CONFIG_HOME point into the server's own directory, so the session, its
    ``session.json`` and its socket (``<config>/herdr/sessions/<session>/herdr.sock``) are
    private to the test. The simulator's fake agents go first on PATH, so a test can start
    ``pi`` or ``claude`` against a real Herdr too; ``pane_path`` goes before them. Herdr
    gives its panes its own environment, so ``pane_env`` is set on the server process.
    """
    directory = directory or short_dir()
    home, config_home = directory / "home", directory / "cfg"
    home.mkdir(mode=0o700, exist_ok=True)
    config_home.mkdir(mode=0o700, exist_ok=True)
    env = hermetic_env(home, pane_env, XDG_CONFIG_HOME=str(config_home), TERM="xterm-256color")
    if fake_agents:
        from herdr_sim.fake_agent import install_fake_agents

        fake_bin = directory / "fake-bin"
        install_fake_agents(fake_bin)
        env["PATH"] = f"{fake_bin}{os.pathsep}{env['PATH']}"
    if pane_path:
        env["PATH"] = os.pathsep.join([*(str(entry) for entry in pane_path), env["PATH"]])
    socket_path = config_home / "herdr" / "sessions" / session / "herdr.sock"
    log_path = directory / "server.log"
    argv = [str(herdr_bin), "server", "--session", session]
    try:
        proc = _launch_real(argv, env, socket_path, log_path)
    except BaseException:
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

    def restart(server: HerdrServer) -> None:
        nonlocal proc
        stop()
        launch_env = {k: v for k, v in env.items() if k != "HERDR_SOCKET_PATH"}
        proc = _launch_real(argv, launch_env, socket_path, log_path)

    return HerdrServer(
        backend="real",
        socket_path=socket_path,
        cli_path=herdr_bin,
        env=env,
        directory=directory,
        session=session,
        _stop=stop,
        _restart=restart,
    )


def _launch_real(
    argv: list[str], env: Mapping[str, str], socket_path: Path, log_path: Path
) -> subprocess.Popen[bytes]:
    """Run ``herdr server`` (its output appended to ``log_path``) until it answers ``ping``."""
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            argv,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_ready(proc, socket_path, log_path)
    except BaseException:
        _terminate(proc)
        raise
    return proc


def _wait_ready(proc: subprocess.Popen[bytes], socket_path: Path, log_path: Path) -> None:
    """Poll ``ping`` until the server answers (bounded); fail with its log if it dies."""
    deadline = Deadline(REAL_START_TIMEOUT)
    while True:
        if proc.poll() is not None:
            log = log_path.read_text(errors="replace")[-2000:]
            raise BackendError(f"herdr server exited with {proc.returncode}:\n{log}")
        with contextlib.suppress(OSError, ValueError):
            if "result" in request(socket_path, "ping", {}, timeout=2):
                return
        if deadline.expired():
            raise BackendError(f"herdr server did not answer ping within {REAL_START_TIMEOUT} s")
        time.sleep(0.01)  # polling a socket that does not exist yet: nothing to wait on


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


def request_log_of(server: HerdrServer) -> RequestLog:
    """A request log of ``server`` (``herdr_requests``): its wire tap and release tap on a
    simulator (kept across ``restart()``); its recorded events on a real Herdr."""
    from .request_log import RequestLog

    sim = server.sim
    if sim is None:
        return RequestLog(backend="real", recorder=lambda: server.events)

    def resolve(pid: int) -> str | None:
        current = server.sim
        return None if current is None else current.runtime.pane_of_process(pid)

    log = RequestLog(backend="sim", resolve=resolve)
    server.tap(log.on_line)
    sim.release_taps.append(log.on_release)
    return log
