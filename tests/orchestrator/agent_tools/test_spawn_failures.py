"""``herdr_spawn_agent`` failures reported with their true code and message, and nothing left
behind: a name already taken, a name with a trailing newline, an agent that exits during start
(a bad pi model), a cwd that is not UTF-8."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.client.errors import NotFound
from pytest_herdr.agents import FakeAgents
from pytest_herdr.backends import HerdrServer
from tests.orchestrator.agent_tools.test_spawn import (
    make_ctx,
    scenario_args,
    spawn,
    spawn_handler,
)
from tests.orchestrator.support import FAST_AGENTS, short_start_grace
from tests.waits import SCALE

pytestmark = FAST_AGENTS


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
    Path(odd).mkdir()
    result = spawn_handler(ctx, prompt="x", cwd=odd)
    assert (result["status"], result["error"]["code"]) == ("failed", "FIELD_INVALID")
    assert result["error"]["field"] == "cwd"
    assert "UTF-8" in result["error"]["message"]
    assert ctx.client.pane_list() == []
    prompt = spawn_handler(ctx, prompt="caf\udce9", cwd=str(tmp_path))
    assert (prompt["error"]["code"], prompt["error"]["field"]) == ("FIELD_INVALID", "prompt")
    assert ctx.store.list_records() == []
    # through the one path, the schema step refuses the same texts first
    refused = spawn(ctx, prompt="x", cwd=odd)
    assert (refused["error"]["code"], refused["error"]["field"]) == ("INVALID_ARGUMENTS", "cwd")


def test_a_name_already_taken_is_name_taken_and_leaves_no_tab(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="busy")
    panes_before = [p.pane_id for p in ctx.client.pane_list()]
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), name="busy")
    assert (result["status"], result["error"]["code"]) == ("failed", "NAME_TAKEN"), result
    assert result["error"]["field"] == "name"
    assert "already used" in result["error"]["message"]
    assert result["nextAction"] == "retry"
    # no tab, no workspace made (ids: the busy agent's pane revision may move on meanwhile)
    assert [p.pane_id for p in ctx.client.pane_list()] == panes_before
    assert [a.name for a in ctx.client.agent_list()] == ["busy"]
    assert ctx.store.list_records() == []  # nothing ran: no task either


def test_a_repeated_client_task_id_with_a_name_returns_its_task(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    args = scenario_args(tmp_path, Scenario().reply("done once"))
    first = spawn(
        ctx, prompt="once", cwd=str(tmp_path), name="fixer", client_task_id="j", agent_args=args
    )
    again = spawn(
        ctx, prompt="once", cwd=str(tmp_path), name="fixer", client_task_id="j", agent_args=args
    )
    assert first["status"] == "completed", first
    assert (again["taskId"], again["status"]) == (first["taskId"], "completed"), again
    assert len(ctx.store.list_records()) == 1


def test_a_name_taken_during_the_spawn_closes_the_tab_it_made(
    ctx: AgentToolsContext,
    herdr_fake_agent: FakeAgents,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="busy")
    panes_before = [p.pane_id for p in ctx.client.pane_list()]
    real_get = ctx.client.agent_get

    def racing_get(target: str) -> Any:
        if target == "busy":  # the check before the pane sees the name free
            raise NotFound("agent_not_found", "agent busy not found")
        return real_get(target)

    monkeypatch.setattr(ctx.client, "agent_get", racing_get)
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), name="busy")
    assert (result["status"], result["error"]["code"]) == ("failed", "NAME_TAKEN"), result
    assert (result["error"]["field"], result["error"]["herdrCode"]) == ("name", "agent_name_taken")
    assert result["taskId"] is not None and result["paneId"] is None
    # the tab made for the task is closed (ids: the busy pane's own revision may move on)
    assert [p.pane_id for p in ctx.client.pane_list()] == panes_before
    assert ctx.store.get(result["taskId"]).status == "failed"
    assert not ctx.slots.holders()


def test_an_agent_exiting_during_start_fails_fast_with_its_last_lines(
    ctx: AgentToolsContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent exits at start (a model outside its catalog): AGENT_START_FAILED with its
    last lines, secrets not echoed, no tab left. The start watch waits its grace with the
    shell alone in the pane before it calls the agent exited (cut to a second here)."""
    short_start_grace(monkeypatch)
    scenario = Scenario().known_models("fake/fake-model")
    began = time.monotonic()
    result = spawn(
        ctx,
        prompt="x",
        cwd=str(tmp_path),
        model="fake/no-such-model",
        agent_args=[*scenario_args(tmp_path, scenario), "--api-key=sk-secret-123456"],
    )
    elapsed = time.monotonic() - began
    assert (result["status"], result["error"]["code"]) == ("failed", "AGENT_START_FAILED"), result
    message = result["error"]["message"]
    assert 'model "fake/no-such-model" not found' in message
    assert "sk-secret-123456" not in message
    assert elapsed < 30 * SCALE, elapsed  # Herdr's start budget here is 60 s
    assert ctx.client.pane_list() == []  # no empty tab left behind
    assert ctx.store.get(result["taskId"]).status == "failed"
    assert not ctx.slots.holders()


def test_a_missing_executable_fails_fast(
    herdr_server: HerdrServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An executable Herdr never sees running is called gone after the start watch's grace
    of a shell alone in the foreground (start_watch.py; cut to a second here)."""
    short_start_grace(monkeypatch)
    ctx = make_ctx(herdr_server, tmp_path)
    began = time.monotonic()
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), kind="amp")  # no fake amp installed
    assert (result["status"], result["error"]["code"]) == ("failed", "AGENT_START_FAILED"), result
    assert "not found" in result["error"]["message"]
    assert time.monotonic() - began < 30 * SCALE
    assert ctx.client.pane_list() == []


def test_an_agent_gone_before_its_prompt_is_a_start_failure(
    ctx: AgentToolsContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Herdr saw the agent start, then it exited before the prompt reached it (the race a
    bad model loses under load: detection saw pi before pi printed its error): the task never
    began, so it is AGENT_START_FAILED with the pane's last lines, the tab closed and the slot
    freed — not a task left running for the harvest to call AGENT_EXITED."""

    def gone(*args: Any, **kwargs: Any) -> Any:
        raise NotFound("agent_not_found", "agent target gone")

    monkeypatch.setattr(ctx.client, "agent_prompt", gone)
    args = scenario_args(tmp_path, Scenario().reply("x"))
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), agent_args=args)
    assert (result["status"], result["error"]["code"]) == ("failed", "AGENT_START_FAILED"), result
    assert "exited before its prompt was delivered" in result["error"]["message"]
    assert result["error"]["herdrCode"] == "agent_not_found"
    assert ctx.client.pane_list() == []
    assert ctx.store.get(result["taskId"]).status == "failed"
    assert not ctx.slots.holders()
