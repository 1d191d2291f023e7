"""``herdr_spawn_agent`` failures reported with their true code and message, and nothing left
behind: a name already taken, a name with a trailing newline, an agent that exits during start
(a bad pi model), a cwd that is not UTF-8."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools.context import AgentToolsContext
from pytest_herdr.agents import FakeAgents
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.agent_tools.test_spawn import make_ctx, scenario_args, spawn

pytestmark = pytest.mark.herdr(
    agent_start_settle=0.1,
    agent_prompt_submit_delay=0.05,
    detection_interval=0.1,
    detection_debounce=0.02,
    detection_idle_hold=0.1,
)


@pytest.fixture
def ctx(herdr_server: HerdrServer, tmp_path: Path) -> AgentToolsContext:
    return make_ctx(herdr_server, tmp_path)


def test_a_name_with_a_trailing_newline_is_refused(ctx: AgentToolsContext, tmp_path: Path) -> None:
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), name="evil\n")
    assert (result["error"]["code"], result["error"]["field"]) == ("FIELD_INVALID", "name")
    assert result["taskId"] is None
    assert "\n" not in result["header"]
    assert ctx.store.list_records() == []
    assert ctx.client.pane_list() == []


def test_a_non_utf8_cwd_is_refused_clearly(ctx: AgentToolsContext, tmp_path: Path) -> None:
    odd = os.fsdecode(bytes(tmp_path) + b"/caf\xe9")
    os.mkdir(odd)
    result = spawn(ctx, prompt="x", cwd=odd)
    assert (result["status"], result["error"]["code"]) == ("failed", "FIELD_INVALID")
    assert result["error"]["field"] == "cwd"
    assert "UTF-8" in result["error"]["message"]
    assert ctx.client.pane_list() == []
