"""Hooks other plugins and conftest files implement to shape the Herdr fixtures.

Added through ``pytest_addhooks`` (the pytest-xdist pattern), so a conftest that does not
use them pays nothing and one that does gets pluggy's argument checking.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from herdr_sim.config import SimulatorConfig

    from .backends import HerdrServer


@pytest.hookspec
def pytest_herdr_sim_config(
    config: pytest.Config, sim_config: SimulatorConfig, node: pytest.Item | None
) -> None:
    """Adjust the settings of a simulator about to start (mutate ``sim_config``).

    Called for every simulator the fixtures start, after the plugin's options and the
    test's ``herdr(...)`` marker were applied, so a hook sees the final values and has the
    last word: a project can, say, point ``agent_manifests_dir`` at its own manifests.
    ``node`` is the test item (None for servers started outside a test).
    """


@pytest.hookspec
def pytest_herdr_server_started(config: pytest.Config, server: HerdrServer) -> None:
    """A Herdr server (simulator or real) is up and answered ``ping``; seed it here."""


@pytest.hookspec
def pytest_herdr_agent_kinds(config: pytest.Config, kinds: list[str]) -> None:
    """Add to or remove from the agent kinds that kind-parametrised checks run over
    (``herdr_agent_kind``); the plugin starts with the simulator's fake agents."""


@pytest.hookspec(firstresult=True)
def pytest_herdr_report_section(
    config: pytest.Config, item: pytest.Item, server: HerdrServer
) -> str | None:
    """Replace the failure report section for ``server`` (return its text), or add
    nothing by returning None and leave the plugin's own section."""
