"""The panes' HOME (herdr_sim/services/agent_home.py): fake agents keep their state in a sandbox per
simulator, never in the user's ``~/.pi``, ``~/.claude`` or ``~/.codex``; with the fakes
off the panes see the server's HOME, as Herdr's panes do (Herdr's pane env is the server's
environment plus its own variables: ``src/integration/env.rs`` ``apply_pane_base_env``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from herdr_sim import Simulator
from herdr_sim.client import call
from herdr_sim.services.agent_home import AGENT_CONFIG_DIRS
from herdr_sim.simulator import SimulatorError
from tests.waits import wait_until

pytestmark = pytest.mark.herdr_sim_only

AGENT_DIRS = (".pi", ".claude", ".codex", ".config", ".local", ".herdr-sim")


def echo_home(socket: Path, pane: str) -> str:
    """What ``$HOME`` and ``$CLAUDE_CONFIG_DIR`` are in a pane's shell."""
    call(
        socket,
        "pane.send_input",
        {"pane_id": pane, "text": 'echo "H=$HOME C=${CLAUDE_CONFIG_DIR-unset}"', "keys": ["Enter"]},
    )
    matched = call(
        socket,
        "pane.wait_for_output",
        {
            "pane_id": pane,
            "source": "recent",
            "match": {"type": "regex", "value": r"^H=/\S* C=\S+$"},
            "timeout_ms": 10_000,
        },
    )
    line: str = matched["matched_line"]
    return line


def agent_status(socket: Path, pane: str) -> str:
    status: str = call(socket, "pane.get", {"pane_id": pane})["pane"]["agent_status"]
    return status


def test_serve_keeps_a_fake_pi_out_of_the_real_home(short_dir: Path) -> None:
    """`herdr-sim serve` prints its sandbox; a fake pi in a pane saves its session there and
    the HOME of the process that started serve stays without .pi/.claude/.codex."""
    real_home = short_dir / "real-home"
    real_home.mkdir()
    socket = short_dir / "herdr.sock"
    env = dict(
        os.environ,
        HOME=str(real_home),
        HERDR_SIM_CONFIG_DIR=str(short_dir / "cfg"),
        CLAUDE_CONFIG_DIR=str(real_home / ".claude"),  # must not steer the fakes either
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "herdr_sim", "serve", "--socket", str(socket)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert "listening on" in proc.stderr.readline()
        sandbox = short_dir / "agent-home"
        pane = call(socket, "workspace.create", {"cwd": str(short_dir)})["root_pane"]["pane_id"]
        assert echo_home(socket, pane) == f"H={sandbox} C=unset"
        call(socket, "pane.send_input", {"pane_id": pane, "text": "pi", "keys": ["Enter"]})
        wait_until(lambda: agent_status(socket, pane) == "idle", timeout=10, what="pi idle")
        call(socket, "pane.send_input", {"pane_id": pane, "text": "hi", "keys": ["Enter"]})
        sessions = sandbox / ".pi" / "agent" / "sessions"
        saved = wait_until(
            lambda: sorted(sessions.rglob("*.jsonl")), timeout=10, what="pi's session file"
        )
        assert saved[0].read_text().strip()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        announced = proc.stderr.read()
        assert f"herdr-sim: panes' HOME (the fake agents' sandbox) is {sandbox}\n" in announced
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        if proc.stderr is not None:
            proc.stderr.close()
    assert sorted(p.name for p in real_home.iterdir()) == []
    assert not any((real_home / name).exists() for name in AGENT_DIRS)


def test_without_fake_agents_panes_see_the_servers_home(short_dir: Path) -> None:
    """Real agents (no fakes) see the server's HOME and its agent variables, as in Herdr."""
    home = short_dir / "home"
    home.mkdir()
    base = {"HOME": str(home), "PATH": "/usr/bin:/bin", "CLAUDE_CONFIG_DIR": "/x/claude"}
    with Simulator(socket_path=short_dir / "herdr.sock", base_env=base, fake_agents=False) as sim:
        assert sim.agent_home is None
        pane = call(sim.socket_path, "workspace.create", {"cwd": "/tmp"})["root_pane"]["pane_id"]
        assert echo_home(sim.socket_path, pane) == f"H={home} C=/x/claude"
    assert not (short_dir / "agent-home").exists()


def test_fake_agents_get_a_sandbox_with_the_agents_config_dirs(short_dir: Path) -> None:
    """With the fakes on, HOME is ``agent-home`` beside the socket (``<stem>.agent-home``
    for another socket name), created 0700 with the agents' config directories."""
    base = {"HOME": str(short_dir / "home"), "PATH": "/usr/bin:/bin"}
    with Simulator(socket_path=short_dir / "other.sock", base_env=base) as sim:
        sandbox = short_dir / "other.agent-home"
        assert sim.agent_home == sandbox
        assert sandbox.stat().st_mode & 0o777 == 0o700
        assert all((sandbox / relative).is_dir() for relative in AGENT_CONFIG_DIRS)
        pane = call(sim.socket_path, "workspace.create", {"cwd": "/tmp"})["root_pane"]["pane_id"]
        assert echo_home(sim.socket_path, pane) == f"H={sandbox} C=unset"


def test_an_agent_home_others_may_write_is_refused(short_dir: Path) -> None:
    sandbox = short_dir / "agent-home"
    sandbox.mkdir()
    sandbox.chmod(0o777)
    base = {"HOME": str(short_dir), "PATH": "/usr/bin:/bin"}
    with pytest.raises(SimulatorError, match="writable by other users"):
        Simulator(socket_path=short_dir / "herdr.sock", base_env=base).start()


def test_an_agent_home_that_is_a_symlink_is_refused(short_dir: Path) -> None:
    target = short_dir / "elsewhere"
    target.mkdir(mode=0o700)
    (short_dir / "agent-home").symlink_to(target)
    base = {"HOME": str(short_dir), "PATH": "/usr/bin:/bin"}
    with pytest.raises(SimulatorError, match="is not a directory"):
        Simulator(socket_path=short_dir / "herdr.sock", base_env=base).start()
    assert list(target.iterdir()) == []
