"""Fixtures shared by the contract tests. The servers, clients and CLI runs are the
``pytest_herdr`` plugin's own (``herdr_server``, ``herdr_client``, ``herdr_cli``), so the
contract suite runs against a real Herdr too (``--herdr-backend real --herdr-bin PATH``);
what only the simulator can do goes through :mod:`herdr_sim.testing` and the ``sim`` fixture,
in tests marked ``herdr_sim_only``. Here: the first workspace, its root pane, HOME and
subscriptions that are always hung up (and finished by the server) after the test."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import Subscription
from herdr_sim.config import SimulatorConfig
from pytest_herdr.backends import HerdrServer
from pytest_herdr.client import HerdrClient
from pytest_herdr.fixtures import ServerFactory
from tests.contract.helpers import Raw, Subscribe, hang_up, wait_line
from tests.waits import SCALE

#: settings the plugin gives its simulators for other projects' tests (a short agent.start
#: settle delay, detection of the fake agents' screens): the contract is Herdr's own defaults
HERDR_DEFAULTS = ("agent_start_settle", "agent_manifests_dir")


def sim_only_violations(items: Iterable[pytest.Item], under: Path) -> list[str]:
    """The tests under ``under`` that use the simulator's seams (the ``sim`` fixture) or
    settings (``@pytest.mark.herdr(...)``) without ``@pytest.mark.herdr_sim_only``."""
    return [
        item.nodeid
        for item in items
        if item.path.is_relative_to(under)
        and item.get_closest_marker("herdr_sim_only") is None
        and (
            "sim" in getattr(item, "fixturenames", ())
            or any(marker.kwargs for marker in item.iter_markers("herdr"))
        )
    ]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A contract test that uses the simulator's seams or settings must say so with
    ``herdr_sim_only``: on a real Herdr it is skipped with the reason, and never runs
    half-supported."""
    unmarked = sim_only_violations(items, Path(__file__).parent)
    if unmarked:
        raise pytest.UsageError(
            "contract tests using the simulator's seams or settings without "
            "@pytest.mark.herdr_sim_only:\n" + "\n".join(unmarked)
        )


@pytest.fixture
def herdr_sim_config(
    herdr_sim_config: SimulatorConfig, request: pytest.FixtureRequest
) -> SimulatorConfig:
    """The plugin's simulator settings with Herdr's defaults back where the plugin changes
    them for other projects (unless the test's ``@pytest.mark.herdr`` sets them)."""
    marked = {key for marker in request.node.iter_markers("herdr") for key in marker.kwargs}
    defaults = SimulatorConfig()
    for name in HERDR_DEFAULTS:
        if name not in marked:
            setattr(herdr_sim_config, name, getattr(defaults, name))
    return herdr_sim_config


@pytest.fixture
def herdr_server(herdr_server_factory: ServerFactory) -> HerdrServer:
    """The plugin's server without its event recorder: contract tests count the server's
    connections exactly, and the recorder's subscription would be one more."""
    return herdr_server_factory(record_events=False)


@pytest.fixture
def sim(herdr_server: HerdrServer) -> Simulator:
    """The simulator behind ``herdr_server``, for :mod:`herdr_sim.testing` and
    ``sim.faults``/``sim.config``/``sim.events`` (tests taking it are ``herdr_sim_only``)."""
    if herdr_server.sim is None:
        pytest.fail("the sim fixture needs the simulator: mark the test herdr_sim_only")
    return herdr_server.sim


@pytest.fixture
def raw(herdr_client: HerdrClient) -> Raw:
    """``raw(method, **params)`` → the whole response envelope, id ``"t"`` (what
    ``herdr_client.request`` answers; for the error paths the envelope shows)."""

    def invoke(method: str, **params: Any) -> dict[str, Any]:
        return herdr_client.request(method, params, request_id="t")

    return invoke


@pytest.fixture
def first_workspace(herdr_client: HerdrClient) -> dict[str, Any]:
    """``workspace.create`` in /tmp: the active workspace ``w1``, tab ``w1:t1``, pane ``w1:p1``."""
    return herdr_client.call("workspace.create", cwd="/tmp")


@pytest.fixture
def ws(first_workspace: dict[str, Any]) -> str:
    """The first workspace's id (``w1``)."""
    workspace_id: str = first_workspace["workspace"]["workspace_id"]
    return workspace_id


@pytest.fixture
def root(first_workspace: dict[str, Any]) -> str:
    """The first workspace's root pane id (``w1:p1``), focused."""
    pane_id: str = first_workspace["root_pane"]["pane_id"]
    return pane_id


@pytest.fixture
def pane(herdr_client: HerdrClient, root: str) -> str:
    """The root pane with its shell prompt already drawn."""
    wait_line(herdr_client, root, r"^\$")
    return root


@pytest.fixture
def home(herdr_server: HerdrServer) -> Path:
    """The server's HOME (what its panes and CLI runs see)."""
    return Path(herdr_server.env["HOME"])


@pytest.fixture
def subscribe(herdr_server: HerdrServer) -> Iterator[Subscribe]:
    """``subscribe(*subscriptions)`` → an acknowledged Subscription. A string is a lifecycle
    name (``"pane.created"``), a dict a whole subscription. After the test each one is hung
    up and (on the simulator) the server has finished it."""
    opened: list[Subscription] = []

    def open_(*subscriptions: str | dict[str, Any]) -> Subscription:
        wanted = [{"type": sub} if isinstance(sub, str) else sub for sub in subscriptions]
        sub = Subscription(herdr_server.socket_path, wanted, timeout=10 * SCALE)
        opened.append(sub)
        assert sub.ack["result"] == {"type": "subscription_started"}
        return sub

    yield open_
    if opened:
        hang_up(herdr_server.sim, *opened)
