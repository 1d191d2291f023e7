"""``herdr [--session NAME] server``: a simulator in the foreground on Herdr's socket.

Suites of projects built on Herdr start their own headless server (``herdr server``, Herdr's
``src/main.rs`` → ``server::headless::run_server``) and stop it with a signal; with the
simulator's ``herdr`` first on ``PATH`` they must run unchanged. And with
``HERDR_SIM_HERDR_PATHS=1`` (asked for, never by default) the default socket is Herdr's own.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from herdr_sim.host.cli_install import install_cli
from pytest_herdr.cli_runner import HerdrCli
from tests.waits import SCALE, wait_until


@pytest.fixture
def cli(short_dir: Path) -> Path:
    return install_cli(short_dir / "bin")


@pytest.fixture
def env(short_dir: Path) -> dict[str, str]:
    home = short_dir / "home"
    home.mkdir()
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "HERDR_SIM_CONFIG_DIR": str(short_dir / "cfg"),
    }


class Server:
    """A ``herdr ... server`` process and the lines it printed on stderr."""

    def __init__(self, cli: Path, env: dict[str, str], *args: str) -> None:
        self.proc = subprocess.Popen(
            [str(cli), *args, "server"], env=env, stderr=subprocess.PIPE, text=True
        )
        assert self.proc.stderr is not None
        self.lines: list[str] = []
        for _ in range(6):  # Herdr's ready message, then the simulator's line
            line = self.proc.stderr.readline()
            if not line:
                break
            self.lines.append(line.rstrip("\n"))
            if line.startswith("herdr-sim: listening on"):
                break

    def stop(self, signum: int) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(20 * SCALE)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@pytest.fixture
def servers() -> Iterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        server.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_session_server_runs_in_the_foreground_until_herdrs_signals(
    cli: Path, env: dict[str, str], short_dir: Path, servers: list[Server], signum: int
) -> None:
    server = Server(cli, env, "--session", "demo")
    servers.append(server)
    socket = short_dir / "cfg" / "sessions" / "demo" / "herdr.sock"
    assert server.lines[:2] == [
        "herdr server running; you can use any herdr CLI command in another terminal.",
        f"api socket: {socket}",
    ]
    status = HerdrCli(cli, env, timeout=30)("--session", "demo", "status", "server", "--json")
    assert status.json["running"] is True and status.json["socket"] == str(socket)
    assert server.stop(signum) == 0
    assert not socket.exists()


def test_herdr_session_env_names_the_session(
    cli: Path, env: dict[str, str], short_dir: Path, servers: list[Server]
) -> None:
    server = Server(cli, {**env, "HERDR_SESSION": "suite"})
    servers.append(server)
    assert f"api socket: {short_dir / 'cfg' / 'sessions' / 'suite' / 'herdr.sock'}" in server.lines
    # a second server for the same session is refused as Herdr refuses it
    second = Server(cli, {**env, "HERDR_SESSION": "suite"})
    servers.append(second)
    assert second.proc.wait(20 * SCALE) == 1
    assert second.lines[0] == "error: herdr server is already running"
    assert server.stop(signal.SIGTERM) == 0


def test_herdr_server_stop_ends_it(cli: Path, env: dict[str, str], servers: list[Server]) -> None:
    server = Server(cli, env)
    servers.append(server)
    assert HerdrCli(cli, env, timeout=30)("server", "stop").code == 0
    assert server.proc.wait(20 * SCALE) == 0


def test_herdrs_own_paths_are_an_explicit_choice(
    cli: Path, env: dict[str, str], short_dir: Path, servers: list[Server]
) -> None:
    xdg = short_dir / "xdg"
    plain = {k: v for k, v in env.items() if k != "HERDR_SIM_CONFIG_DIR"}
    plain["XDG_CONFIG_HOME"] = str(xdg)
    server = Server(cli, {**plain, "HERDR_SIM_HERDR_PATHS": "1"})
    servers.append(server)
    herdr_socket = xdg / "herdr" / "herdr.sock"  # where a client that hard-codes it looks
    assert f"api socket: {herdr_socket}" in server.lines
    wait_until(herdr_socket.exists, what="Herdr's own socket path")
    # without the choice the simulator keeps clear of a real Herdr's directory
    status = HerdrCli(cli, plain, timeout=30)("status", "server", "--json")
    assert status.json["socket"] == str(xdg / "herdr-sim" / "herdr.sock")
    assert status.json["running"] is False
    assert server.stop(signal.SIGTERM) == 0
