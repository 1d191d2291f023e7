"""The client: typed results, the error hierarchy, the protocol check, deadlines, sync and
async — each over the socket and through the CLI where both apply."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.client.aio import AsyncHerdrClient
from orchestrator.client.errors import (
    AgentNotReady,
    HerdrError,
    IncompatibleServer,
    InvalidRequest,
    NotFound,
    ServerNotRunning,
    Timeout,
    TransportError,
    error_for,
)
from orchestrator.client.sync import HerdrClient
from orchestrator.client.types import PaneInfo, TabInfo, WorkspaceCreated, WorkspaceInfo
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import Kind, client, received
from tests.waits import SCALE

BOTH: list[Kind] = ["socket", "cli"]


@pytest.mark.parametrize(
    ("code", "family"),
    [
        ("server_not_running", ServerNotRunning),
        ("pane_not_found", NotFound),
        ("workspace_not_found", NotFound),
        ("tab_not_found", NotFound),
        ("agent_not_found", NotFound),
        ("timeout", Timeout),
        ("invalid_request", InvalidRequest),
        ("invalid_params", InvalidRequest),
        ("agent_not_ready", AgentNotReady),
        ("protocol_mismatch", IncompatibleServer),
    ],
)
def test_error_for_maps_wire_codes_to_families(code: str, family: type[HerdrError]) -> None:
    error = error_for(code, "msg", "req")
    assert type(error) is family
    assert (error.code, error.message, error.request_id) == (code, "msg", "req")


def test_an_unknown_code_is_a_plain_herdr_error() -> None:
    error = error_for("worktree_busy", "x")
    assert type(error) is HerdrError and error.code == "worktree_busy"


@pytest.mark.parametrize("kind", BOTH)
def test_typed_results_keep_the_wire_object(
    herdr_server: HerdrServer, tmp_path: Path, kind: Kind
) -> None:
    herdr = client(herdr_server, kind)
    created = herdr.workspace_create(str(tmp_path), label="typed")
    assert isinstance(created, WorkspaceCreated)
    assert created.workspace.label == "typed" and created.workspace.raw["label"] == "typed"
    assert isinstance(created.tab, TabInfo) and isinstance(created.root_pane, PaneInfo)
    (listed,) = herdr.workspace_list()
    assert (
        isinstance(listed, WorkspaceInfo) and listed.workspace_id == created.workspace.workspace_id
    )
    split = herdr.pane_split(created.root_pane.pane_id, "right")
    assert split.pane_id != created.root_pane.pane_id and split.focused is False
    assert [p.pane_id for p in herdr.pane_list(listed.workspace_id)] == [
        created.root_pane.pane_id,
        split.pane_id,
    ]


@pytest.mark.parametrize("kind", BOTH)
def test_refusals_raise_their_family(herdr_server: HerdrServer, kind: Kind) -> None:
    herdr = client(herdr_server, kind)
    with pytest.raises(NotFound) as caught:
        herdr.pane_get("w9:p9")
    assert (caught.value.code, caught.value.message) == ("pane_not_found", "pane w9:p9 not found")


@pytest.mark.parametrize("kind", BOTH)
def test_a_wait_timeout_raises_timeout(
    herdr_server: HerdrServer, tmp_path: Path, kind: Kind
) -> None:
    herdr = client(herdr_server, kind)
    pane = herdr.workspace_create(str(tmp_path)).root_pane.pane_id
    with pytest.raises(Timeout, match="timed out waiting for output match"):
        herdr.pane_wait_output(pane, "never", timeout_ms=150)


@pytest.mark.parametrize("kind", BOTH)
def test_the_protocol_check_refuses_an_incompatible_server(
    herdr_server_factory: Any, kind: Kind
) -> None:
    old = herdr_server_factory(protocol=14)
    rec = received(old)
    herdr = client(old, kind)
    with pytest.raises(IncompatibleServer) as caught:
        herdr.connect()
    assert "server protocol 14" in caught.value.message
    with pytest.raises(IncompatibleServer):
        herdr.workspace_list()
    assert rec.methods() == []  # nothing but pings reached the old server


def test_the_protocol_check_happens_once_per_socket_client(herdr_server: HerdrServer) -> None:
    rec = received(herdr_server)
    herdr = client(herdr_server, "socket")
    assert herdr.ping().protocol == 22
    herdr.workspace_list()
    herdr.workspace_list()
    assert rec.methods(pings=True) == ["ping", "workspace.list", "workspace.list"]


def test_no_server_raises_server_not_running_after_one_attempt(short_dir: Path) -> None:
    herdr = HerdrClient.build("socket", socket_path=short_dir / "none.sock")
    started = time.monotonic()
    with pytest.raises(ServerNotRunning, match="no herdr server is running at"):
        herdr.workspace_list()
    assert time.monotonic() - started < 1.0 * SCALE


def test_a_stale_socket_file_is_server_not_running(short_dir: Path) -> None:
    stale = short_dir / "stale.sock"
    stale.write_text("")  # a file nobody listens on: connect() is refused
    with pytest.raises(ServerNotRunning, match=f"no herdr server is running at {stale}"):
        HerdrClient.build("socket", socket_path=stale).workspace_list()


def test_every_exchange_has_a_deadline(herdr_server: HerdrServer, herdr_faults: Any) -> None:
    herdr = client(herdr_server, "socket", timeout=0.3)
    herdr.connect()
    herdr_faults.add("pane.list", delay=3.0, times=1)
    started = time.monotonic()
    with pytest.raises(TransportError) as caught:
        herdr.pane_list()
    assert time.monotonic() - started < 1.5 * SCALE
    assert caught.value.maybe_applied is True


def test_a_server_side_wait_extends_the_deadline(herdr_server: HerdrServer, tmp_path: Path) -> None:
    # the pane comes from a client with the default deadline (creating one starts a shell,
    # which can take over 0.1 s on a busy machine); only the wait runs under 0.1 s
    pane = client(herdr_server, "socket").workspace_create(str(tmp_path)).root_pane.pane_id
    herdr = client(herdr_server, "socket", timeout=0.1)
    with pytest.raises(Timeout):  # Herdr's answer, not our deadline cutting the wait short
        herdr.pane_wait_output(pane, "never", timeout_ms=400)


def test_execute_is_cli_shaped_over_the_socket(herdr_server: HerdrServer) -> None:
    socket_side = client(herdr_server, "socket").execute("workspace.list", {})
    cli_side = client(herdr_server, "cli").execute("workspace.list", {})
    assert socket_side.argv == cli_side.argv == ("herdr", "workspace", "list")
    assert (socket_side.transport, cli_side.transport) == ("socket", "cli")
    assert socket_side.stdout == cli_side.stdout
    assert socket_side.result == cli_side.result


def test_execute_renders_errors_as_the_cli_does(herdr_server: HerdrServer) -> None:
    socket_side = client(herdr_server, "socket").execute("tab.get", {"tab_id": "w9:t9"})
    cli_side = client(herdr_server, "cli").execute("tab.get", {"tab_id": "w9:t9"})
    assert socket_side.exit_code == cli_side.exit_code == 1
    assert socket_side.stderr == cli_side.stderr
    assert socket_side.error == cli_side.error


def test_the_async_client_runs_calls_concurrently(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    async def scenario() -> tuple[list[str], str]:
        herdr = AsyncHerdrClient(client(herdr_server, "socket"))
        created = await herdr.workspace_create(str(tmp_path))
        pane = created.root_pane.pane_id
        waiting = asyncio.create_task(herdr.pane_wait_output(pane, "async-9", timeout_ms=5000))
        await herdr.pane_run(pane, "echo async-$((4+5))")
        match = await waiting
        ids = [w.workspace_id for w in await herdr.workspace_list()]
        return ids, match.matched_line

    ids, line = asyncio.run(scenario())
    assert len(ids) == 1 and line == "async-9"


def test_the_async_client_raises_the_same_errors(herdr_server: HerdrServer) -> None:
    async def scenario() -> None:
        await AsyncHerdrClient(client(herdr_server, "cli")).agent_get("ghost")

    with pytest.raises(NotFound, match="agent target ghost not found"):
        asyncio.run(scenario())
