"""Fixtures shared by the contract tests: the first workspace, its root pane, HOME and
subscriptions that are always hung up (and finished by the server) after the test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.client import Subscription
from tests.contract.helpers import Api, Subscribe, hang_up, wait_line
from tests.waits import SCALE


@pytest.fixture
def first_workspace(api: Api) -> dict[str, Any]:
    """``workspace.create`` in /tmp: the active workspace ``w1``, tab ``w1:t1``, pane ``w1:p1``."""
    return api("workspace.create", cwd="/tmp")


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
def pane(api: Api, root: str) -> str:
    """The root pane with its shell prompt already drawn."""
    wait_line(api, root, r"^\$")
    return root


@pytest.fixture
def home(short_dir: Path) -> Path:
    """The simulator's HOME (the ``sim`` fixture's base environment)."""
    return short_dir / "home"


@pytest.fixture
def subscribe(sim: Simulator) -> Iterator[Subscribe]:
    """``subscribe(*subscriptions)`` → an acknowledged Subscription. A string is a lifecycle
    name (``"pane.created"``), a dict a whole subscription. After the test each one is hung
    up and the server has finished it."""
    opened: list[Subscription] = []

    def open_(*subscriptions: str | dict[str, Any]) -> Subscription:
        wanted = [{"type": sub} if isinstance(sub, str) else sub for sub in subscriptions]
        sub = Subscription(sim.socket_path, wanted, timeout=10 * SCALE)
        opened.append(sub)
        assert sub.ack["result"] == {"type": "subscription_started"}
        return sub

    yield open_
    if opened:
        hang_up(sim, *opened)
