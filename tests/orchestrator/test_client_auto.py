"""``auto``: the socket first, the CLI when a socket connection cannot be made.

The socket client reaches the server through a symlink; the CLI is given the real socket
path (``HERDR_SOCKET_PATH``). Removing the symlink mid-run makes the socket unavailable to
the client while the same server stays reachable for the CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from orchestrator.client.sync import HerdrClient
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import run_tool
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.support import FAST_AGENTS, received
from tests.results import assert_refused, field


@pytest.fixture
def link(herdr_server: HerdrServer, short_dir: Path) -> Path:
    path = short_dir / "via.sock"
    path.symlink_to(herdr_server.socket_path)
    return path


@pytest.fixture
def auto(herdr_server: HerdrServer, link: Path) -> HerdrClient:
    return HerdrClient.build(
        "auto", socket_path=link, herdr=herdr_server.cli_path, env=herdr_server.env
    )


def test_reads_keep_working_through_the_cli_once_the_socket_is_gone(
    herdr_server: HerdrServer, auto: HerdrClient, link: Path, tmp_path: Path
) -> None:
    rec = received(herdr_server)
    ctx = ToolContext.with_client(auto, herdr_server.env)
    pane = auto.workspace_create(str(tmp_path)).root_pane.pane_id
    before = run_tool("_dsh_herdr_pane_get", {"pane": pane}, ctx)
    assert (before["ok"], before["transport"]) == (True, "socket")
    link.unlink()
    after = run_tool("_dsh_herdr_pane_get", {"pane": pane}, ctx)
    assert (after["ok"], after["transport"]) == (True, "cli")
    assert field(after, "data", "pane", "pane_id") == pane
    listed = run_tool("_dsh_herdr_workspace_list", {}, ctx)
    assert (listed["ok"], listed["transport"]) == (True, "cli")
    assert rec.calls("pane.get") == [{"pane_id": pane}, {"pane_id": pane}]


def test_a_mutation_after_the_socket_went_away_runs_once_through_the_cli(
    herdr_server: HerdrServer, auto: HerdrClient, link: Path, tmp_path: Path
) -> None:
    rec = received(herdr_server)
    pane = auto.workspace_create(str(tmp_path)).root_pane.pane_id
    link.unlink()
    result = run_tool(
        "_dsh_herdr_pane_split",
        {"pane": pane, "direction": "down"},
        ToolContext.with_client(auto, herdr_server.env),
    )
    assert (result["ok"], result["transport"]) == (True, "cli")
    assert len(rec.calls("pane.split")) == 1
    assert rec.ids("pane.split") == ["cli:pane:split"]


@FAST_AGENTS
def test_an_agent_start_after_the_socket_went_away_runs_once_through_the_cli(
    herdr_server: HerdrServer, auto: HerdrClient, link: Path, tmp_path: Path
) -> None:
    """``agent start`` over the socket sends no ping of its own (the client checked the
    protocol once): its first read is the reachability check, so a socket gone by then still
    sends the start through the CLI, once."""
    rec = received(herdr_server)
    pane = auto.workspace_create(str(tmp_path)).root_pane.pane_id
    link.unlink()
    done = auto.execute(
        "agent.start", {"name": "a1", "kind": "pi", "pane_id": pane, "timeout_ms": 20_000}
    )
    assert (done.error, done.transport) == (None, "cli"), done
    assert rec.ids("agent.start") == ["cli:agent:start"]


def test_a_mutation_whose_connection_broke_is_not_repeated_by_the_cli(
    herdr_server: HerdrServer, auto: HerdrClient, herdr_faults: Any, tmp_path: Path
) -> None:
    rec = received(herdr_server)
    pane = auto.workspace_create(str(tmp_path)).root_pane.pane_id
    herdr_faults.add("pane.send_text", drop="after", times=1)
    result = run_tool(
        "_dsh_herdr_pane_send_text",
        {"pane": pane, "text": "once"},
        ToolContext.with_client(auto, herdr_server.env),
    )
    assert_refused(result, "transport_error")
    assert field(result, "data", "maybeApplied") is True
    assert rec.calls("pane.send_text") == [{"pane_id": pane, "text": "once"}]


def test_a_read_dropped_before_an_answer_is_repeated_through_the_cli(
    herdr_server: HerdrServer, auto: HerdrClient, herdr_faults: Any
) -> None:
    rec = received(herdr_server)
    auto.connect()
    herdr_faults.add("agent.list", drop="before", times=1)
    assert auto.agent_list() == []
    assert rec.ids("agent.list") == ["cli:agent:list", "cli:agent:list"]


def test_the_protocol_check_survives_the_socket_going_away(
    herdr_server: HerdrServer, auto: HerdrClient, link: Path
) -> None:
    link.unlink()
    assert auto.connect().protocol == 22  # answered through `herdr status server --json`
