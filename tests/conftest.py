"""Shared fixtures: isolated simulators, the contract check on every wire line, helpers."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import call, request
from herdr_sim.real_agents import agents_cache
from herdr_sim.server import WIRE_TAPS
from pytest_herdr.cli_runner import HerdrCli
from pytest_herdr.contracts import ContractChecker
from tests.contract_check import new_checker

# Plain helper modules get pytest's assertion messages too.
pytest.register_assert_rewrite("tests.contract.helpers")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what importing and collecting left in memory (every module, test item and
    fixture definition), so the cyclic collector skips it from now on: the tests that call
    ``gc.collect()`` (an unclosed transport must fail the test that leaked it), pytester's
    in-process runs (five collections each) and the collector's own full passes scanned all
    of it every time."""
    gc.collect()
    gc.freeze()


#: the running test's checker (lines on the wire outside any test go to a spare one)
_CHECKERS: list[ContractChecker] = []
_SPARE = new_checker()


def _check_line(kind: str, line: dict[str, Any]) -> None:
    (_CHECKERS[-1] if _CHECKERS else _SPARE).observe(kind, line)


WIRE_TAPS.append(_check_line)

# The real agents' cache is found from $HOME, which pytester points at a temporary directory:
# pin it for the whole run so examples run under pytester use the installed agents too.
os.environ.setdefault("PYTEST_HERDR_AGENTS_DIR", str(agents_cache()))


@pytest.fixture(autouse=True)
def private_state_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tool calls write the audit log and the target locks under the state directory
    (``$XDG_STATE_HOME/herdr-orchestrator``): a test's go to a directory of its own, never the
    user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(autouse=True)
def contract_checked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Fail the test when a request the simulator accepted, or a line it emitted, broke the
    protocol-22 schema (responses are also checked against their request's result type).

    In-process servers are checked through the wire tap; subprocess servers
    (``herdr-sim serve``) write their lines to ``$HERDR_SIM_WIRE_LOG``, checked here too.
    """
    checker = new_checker()
    _CHECKERS.append(checker)
    log = tmp_path_factory.mktemp("wire") / "wire.jsonl"
    old = os.environ.get("HERDR_SIM_WIRE_LOG")
    os.environ["HERDR_SIM_WIRE_LOG"] = str(log)
    try:
        yield log
    finally:
        _CHECKERS.remove(checker)
        if old is None:
            os.environ.pop("HERDR_SIM_WIRE_LOG", None)
        else:
            os.environ["HERDR_SIM_WIRE_LOG"] = old
    checker.follow_wire_log(log)  # subprocess servers (in-process ones are tapped)
    # A request the schema forbids counts when the simulator accepted it (or never answered);
    # one it rejected is a test of an error path (checker.rejected).
    found = [str(problem) for problem in [*checker.violations, *checker.unanswered][:20]]
    if found:
        pytest.fail("protocol-22 schema violations:\n" + "\n".join(found), pytrace=False)


@pytest.fixture(autouse=True)
def private_config_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Never let a test resolve sockets under the real ~/.config/herdr-sim."""
    if "HERDR_SIM_CONFIG_DIR" not in os.environ:
        monkeypatch.setenv("HERDR_SIM_CONFIG_DIR", str(tmp_path_factory.mktemp("cfg")))


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A short private directory under /tmp (AF_UNIX paths are limited to ~108 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="hs-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sim(short_dir: Path, request: pytest.FixtureRequest) -> Iterator[Simulator]:
    """A fresh simulator with its own socket, HOME (its panes' too) and config dir; reaped
    after the test.

    ``@pytest.mark.sim_settings(**settings)`` passes SimulatorConfig settings to it.
    """
    marker = request.node.get_closest_marker("sim_settings")
    settings: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    home = short_dir / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HERDR_SIM_CONFIG_DIR": str(short_dir / "cfg"),
    }
    # the fakes' sandbox HOME is the test's private HOME, as in pytest_herdr's fixtures
    settings.setdefault("agent_home", home)
    simulator = Simulator(
        socket_path=short_dir / "herdr.sock",
        base_env=env,
        runtime_dir=short_dir / "rt",
        **settings,
    )
    simulator.start()
    try:
        yield simulator
    finally:
        simulator.stop()
    simulator.check()


@pytest.fixture
def api(sim: Simulator) -> Callable[..., dict[str, Any]]:
    """``api(method, **params)`` → result; raises ``RequestFailed`` on an error envelope."""

    def invoke(method: str, **params: Any) -> dict[str, Any]:
        return call(sim.socket_path, method, params)

    return invoke


@pytest.fixture
def raw(sim: Simulator) -> Callable[..., dict[str, Any]]:
    """``raw(method, **params)`` → the whole response envelope."""

    def invoke(method: str, **params: Any) -> dict[str, Any]:
        return request(sim.socket_path, method, params, request_id="t")

    return invoke


@pytest.fixture
def herdr(sim: Simulator, short_dir: Path) -> HerdrCli:
    """Run the simulator's installed `herdr` CLI against it, as a subprocess
    (``herdr(*argv, env=None, timeout=None)`` → CliResult)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(short_dir / "home"),
        "HERDR_SIM_CONFIG_DIR": str(short_dir / "cfg"),
        "HERDR_SOCKET_PATH": str(sim.socket_path),
    }
    return HerdrCli(sim.cli_path, env, timeout=30)
