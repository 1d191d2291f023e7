"""``herdr_read_agent`` on the simulator: pi transcripts found through records or Herdr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.transcript_tool import READ_RESULT_SCHEMA, read_agent
from pytest_herdr.agents import Agent, FakeAgents
from pytest_herdr.backends import HerdrServer
from pytest_herdr.handles import Pane
from tests.orchestrator.agent_tools.test_fleet import agent_result, make_ctx, own
from tests.orchestrator.support import FAST_AGENTS

pytestmark = FAST_AGENTS
PAGE = jsonschema.Draft202012Validator(READ_RESULT_SCHEMA)


@pytest.fixture
def ctx(herdr_server: HerdrServer, tmp_path: Path) -> AgentToolsContext:
    """The agent-tools context of this test."""
    return make_ctx(herdr_server, tmp_path)


def page(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` after asserting it is a transcript page."""
    PAGE.validate(value)
    return value


def worker(fake: FakeAgents, name: str = "w") -> Agent:
    """A pi agent that has run one tool turn and one reply turn (six messages)."""
    scenario = fake.scenario().run_tool("bash", "echo built").reply("built it").then().reply("two")
    agent = fake.start("pi", scenario, name=name)
    agent.prompt("build")
    agent.prompt("again")
    return agent


def test_owned_pi_transcript_resolves_through_herdr_session(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = worker(herdr_fake_agent)
    record = own(ctx, agent)
    assert record.session_path is None  # found through agent.get's agent_session
    value = page(read_agent({"target": record.task_id}, ctx))
    assert (value["taskId"], value["name"], value["observation"]) == (record.task_id, "w", False)
    assert value["sessionPath"] == agent.info["agent_session"]["value"]
    users = [m["text"] for m in value["messages"] if m["role"] == "user"]
    assert users == ["build", "again"]
    calls = [c for m in value["messages"] for c in m["toolCalls"]]
    assert {"name": "bash", "detail": "echo built"} in calls
    tool = next(m for m in value["messages"] if m["role"] == "tool")
    assert (tool["toolName"], tool["isError"]) == ("bash", False)
    assert value["messages"][-1]["text"] == "two"


def test_paging_cursors(ctx: AgentToolsContext, herdr_fake_agent: FakeAgents) -> None:
    agent = worker(herdr_fake_agent)
    own(ctx, agent)
    first = page(read_agent({"target": "w", "limit": 2}, ctx))
    total = first["total"]
    assert total >= 5
    assert (first["from"], len(first["messages"]), first["nextFrom"], first["prevFrom"]) == (
        0,
        2,
        2,
        None,
    )
    second = page(read_agent({"target": "w", "from": 2, "limit": 2}, ctx))
    assert [m["index"] for m in second["messages"]] == [2, 3]
    assert second["prevFrom"] == 0
    last = page(read_agent({"target": "w", "from": -1}, ctx))
    assert [m["index"] for m in last["messages"]] == [total - 1]
    assert last["nextFrom"] is None


def test_limit_is_capped_at_100(ctx: AgentToolsContext, herdr_fake_agent: FakeAgents) -> None:
    own(ctx, worker(herdr_fake_agent))
    assert page(read_agent({"target": "w", "limit": 5000}, ctx))["limit"] == 100


def test_recorded_session_path_wins(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    session = tmp_path / "s.jsonl"
    entries = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"},
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "user", "content": "from the record"},
        },
    ]
    session.write_text("".join(json.dumps(e) + "\n" for e in entries))
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="r")
    record = own(ctx, agent, session_path=str(session))
    value = page(read_agent({"target": record.task_id}, ctx))
    assert value["sessionPath"] == str(session)
    assert [m["text"] for m in value["messages"]] == ["from the record"]


def test_foreign_pi_agent_is_read_as_an_observation(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = worker(herdr_fake_agent, name="stranger")
    value = page(read_agent({"target": "stranger"}, ctx))
    assert (value["taskId"], value["observation"], value["paneId"]) == (
        None,
        True,
        agent.pane.pane_id,
    )
    assert value["total"] >= 5


def test_failed_task_without_transcript_returns_its_recorded_error(
    ctx: AgentToolsContext,
) -> None:
    record, _ = ctx.store.create(kind="pi", cwd="/", name="broken")
    error = {"code": "AGENT_START_FAILED", "message": "pi exited with status 127"}
    ctx.store.update(record.task_id, status="failed", error=error)
    value = agent_result(read_agent({"target": "broken"}, ctx))
    assert (value["status"], value["nextAction"], value["taskId"]) == (
        "failed",
        "inspect",
        record.task_id,
    )
    assert value["error"]["code"] == "NO_TRANSCRIPT"
    assert "AGENT_START_FAILED: pi exited with status 127" in value["error"]["message"]
    assert value["task"]["error"] == error


def test_a_session_file_not_written_yet_is_no_transcript(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="fresh")
    own(ctx, agent, session_path=str(tmp_path / "missing.jsonl"))
    value = agent_result(read_agent({"target": "fresh"}, ctx))
    assert value["error"]["code"] == "NO_TRANSCRIPT"
    assert "does not exist" in value["error"]["message"]


def test_non_pi_kinds_have_no_transcript(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, herdr_pane: Pane
) -> None:
    herdr_fake_agent.start("claude", herdr_fake_agent.scenario().reply("x"), name="cc")
    value = agent_result(read_agent({"target": "cc"}, ctx))
    assert value["error"]["code"] == "NO_TRANSCRIPT"
    assert "only kind=pi" in value["error"]["message"]
    assert (value["taskId"], value["kind"]) == (None, "claude")


def test_unknown_target(ctx: AgentToolsContext) -> None:
    value = agent_result(read_agent({"target": "nobody"}, ctx))
    assert (value["error"]["code"], value["error"]["field"]) == ("TASK_NOT_FOUND", "target")
