"""Fixtures of the published-clients tier: the driver process (one per test session) and the
simulators it talks to.

The tier runs in CI (``.ci/setup`` installs the clients); without the install the tests skip
with the reason, except under ``CI=true``, where they fail: a CI run must not pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from herdr_sim import Simulator
from pytest_herdr.real_agents import unavailable
from tests.contract_check import contracts_dir
from tests.published_clients.drive import Driver, published_python


@pytest.fixture(scope="session")
def driver_python() -> Path:
    python = published_python()
    if not python.exists():
        unavailable(f"published Herdr clients not installed ({python}; run .ci/setup)")
    return python


@pytest.fixture(scope="session")
def _session_driver(driver_python: Path) -> Iterator[Driver]:
    driver = Driver(driver_python)
    try:
        yield driver
    finally:
        driver.close()


@pytest.fixture
def driver(_session_driver: Driver) -> Driver:
    """The running driver (see ``driver.py``): ``driver.call(lib, socket, method, params)``."""
    return _session_driver


def new_simulator(root: Path) -> Simulator:
    """A simulator with its own socket, HOME and config dir under ``root``, like the suite's
    ``sim`` fixture, whose workspaces start in a git repository (``root/repo``)."""
    home = root / "home"
    home.mkdir()
    repo = root / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True, timeout=30)
    (repo / "README").write_text("fixture\n")
    subprocess.run([*git, "add", "README"], check=True, timeout=30)
    subprocess.run([*git, "commit", "-q", "-m", "fixture"], check=True, timeout=30)
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HERDR_SIM_CONFIG_DIR": str(root / "cfg"),
    }
    return Simulator(
        socket_path=root / "herdr.sock",
        base_env=env,
        runtime_dir=root / "rt",
        agent_manifests_dir=contracts_dir() / "agent-detection",
        agent_start_settle=0.1,  # Herdr's 3 s settle, shortened: the cases start real fakes
        agent_prompt_submit_delay=0.05,
    )


@pytest.fixture
def shared_root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="hp-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def repo_sim(shared_root: Path) -> Iterator[Simulator]:
    """A fresh simulator whose default working directory is a git repository."""
    simulator = new_simulator(shared_root)
    simulator.start()
    try:
        yield simulator
    finally:
        simulator.stop()
    simulator.check()
