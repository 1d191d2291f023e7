"""``herdr_list_agents`` on the simulator: Herdr's agents joined with our task records.

Also the helpers the other K2 tool tests import (a context on the test's server, an owned
task for a running fake agent, schema assertions).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.contract import AGENT_RESULT_SCHEMA, LIST_RESULT_SCHEMA
from orchestrator.agent_tools.control import close_agent, interrupt_agent
from orchestrator.agent_tools.fleet import list_agents, owns
from orchestrator.agent_tools.records import TaskRecord, now_iso
from orchestrator.client.sync import HerdrClient
from orchestrator.client.types import AgentInfo
from orchestrator.core.config import Config
from orchestrator.core.tool import ToolContext
from pytest_herdr.agents import Agent, FakeAgents
from pytest_herdr.backends import HerdrServer
from pytest_herdr.handles import Pane
from tests.orchestrator.support import FAST_AGENTS

pytestmark = FAST_AGENTS

RESULT = jsonschema.Draft202012Validator(AGENT_RESULT_SCHEMA)
LIST = jsonschema.Draft202012Validator(LIST_RESULT_SCHEMA)


def agent_result(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` after asserting it is a valid AgentResult."""
    RESULT.validate(value)
    return value


def make_ctx(server: HerdrServer, root: Path, **config: Any) -> AgentToolsContext:
    """An agent-tools context on ``server`` with its state under ``root``."""
    state = root / "state"
    cfg = Config(state_dir=state, artifact_dir=state / "artifacts", **config)
    client = HerdrClient.build(
        "socket", socket_path=server.socket_path, herdr=server.cli_path, env=server.env
    )
    return AgentToolsContext.create(server.env, config=cfg, client=client)


def own(
    ctx: AgentToolsContext, agent: Agent, *, status: str = "running", **fields: Any
) -> TaskRecord:
    """A task record owning ``agent`` (as a spawn would have written it)."""
    info = agent.info
    record, _ = ctx.store.create(
        kind=str(info["agent"]), cwd=str(info.get("cwd") or "/"), name=agent.name
    )
    artifact_dir = ctx.config.artifact_dir / record.task_id
    artifact_dir.mkdir(parents=True, exist_ok=True)
    return ctx.store.update(
        record.task_id,
        status=status,
        pane_id=agent.pane.pane_id,
        workspace_id=info["workspace_id"],
        tab_id=info["tab_id"],
        artifact_dir=str(artifact_dir),
        **fields,
    )


@pytest.fixture
def ctx(herdr_server: HerdrServer, tmp_path: Path) -> AgentToolsContext:
    """The agent-tools context of this test."""
    return make_ctx(herdr_server, tmp_path)


def two_agents(fake: FakeAgents, pane: Pane) -> tuple[Agent, Agent]:
    """A pi agent ``mine`` in ``pane`` and a claude agent ``theirs`` in a split."""
    mine = fake.start("pi", fake.scenario().reply("done"), name="mine")
    theirs = fake.start(
        "claude", fake.scenario().reply("x"), pane=pane.split("right"), name="theirs"
    )
    return mine, theirs


def test_rows_join_herdr_agents_with_records(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, herdr_pane: Pane, tmp_path: Path
) -> None:
    mine, _theirs = two_agents(herdr_fake_agent, herdr_pane)
    record = own(ctx, mine)
    value = list_agents({}, ctx)
    LIST.validate(value)
    rows = {row["name"]: row for row in value["agents"]}
    assert rows["mine"] == {
        "paneId": mine.pane.pane_id,
        "name": "mine",
        "kind": "pi",
        "agentStatus": "idle",
        "owned": True,
        "taskId": record.task_id,
        "taskStatus": "running",
        "workspaceId": mine.info["workspace_id"],
        "tabId": mine.info["tab_id"],
        "cwd": str(tmp_path),
        "machine": "local",
    }
    assert rows["theirs"]["owned"] is False
    assert rows["theirs"]["kind"] == "claude"
    assert (rows["theirs"]["taskId"], rows["theirs"]["taskStatus"]) == (None, None)


def test_an_unreadable_record_is_skipped_with_a_warning_not_an_error(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, herdr_pane: Pane
) -> None:
    mine, _ = two_agents(herdr_fake_agent, herdr_pane)
    record = own(ctx, mine)
    bad = ctx.store.tasks_dir / "t-0000000000aa.json"
    bad.write_bytes(b"{garbage")
    value = list_agents({"owned_only": True}, ctx)
    LIST.validate(value)
    assert [row["taskId"] for row in value["agents"]] == [record.task_id]
    assert len(value["warnings"]) == 1 and str(bad) in value["warnings"][0]


def test_owned_only_leaves_out_foreign_agents(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents, herdr_pane: Pane
) -> None:
    mine, _ = two_agents(herdr_fake_agent, herdr_pane)
    own(ctx, mine)
    value = list_agents({"owned_only": True}, ctx)
    LIST.validate(value)
    assert [row["name"] for row in value["agents"]] == ["mine"]


def test_live_status_comes_from_herdr(ctx: AgentToolsContext, herdr_fake_agent: FakeAgents) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().ask("Proceed?"), name="asker")
    own(ctx, agent)
    agent.prompt("go", until=("blocked",))
    (row,) = list_agents({}, ctx)["agents"]
    assert (row["agentStatus"], row["taskStatus"]) == ("blocked", "running")


def test_a_record_for_another_agent_in_the_same_pane_does_not_own_it(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="newcomer")
    record, _ = ctx.store.create(kind="pi", cwd="/", name="departed")
    ctx.store.update(record.task_id, status="completed", pane_id=agent.pane.pane_id)
    (row,) = list_agents({}, ctx)["agents"]
    assert row["owned"] is False


def _info(name: str | None, kind: str | None, terminal: str, pending: bool = False) -> AgentInfo:
    return AgentInfo.from_wire(
        {"name": name, "agent": kind, "pane_id": "w1:p1", "terminal_id": terminal,
         "agent_status": "idle", "launch_pending": pending}
    )  # fmt: skip


def test_ownership_needs_pane_name_kind_and_terminal() -> None:
    stamp = now_iso()
    record = TaskRecord(
        task_id="t-000000000001", status="running", created_at=stamp, updated_at=stamp,
        kind="pi", cwd="/", name="w", pane_id="w1:p1", terminal_id="term_1",
    )  # fmt: skip
    assert owns(record, _info("w", "pi", "term_1"))
    assert owns(record, _info("w", None, "term_1", pending=True))  # its launch, not yet labelled
    assert not owns(record, _info(None, "pi", "term_1"))  # an unnamed agent in the old pane
    assert not owns(record, _info("w", "claude", "term_1"))  # same name, another kind
    assert not owns(record, _info("w", "pi", "term_2"))  # same name and kind, a new terminal
    assert not owns(replace(record, name=None), _info(None, "pi", "term_1"))
    assert not owns(replace(record, status="closed"), _info("w", "pi", "term_1"))


def test_an_agent_in_a_new_terminal_is_listed_not_owned_and_not_controlled(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    # same pane, name and kind as the record, but not the terminal it recorded at spawn
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().hang(), name="w")
    agent.prompt("loop", wait=False)
    agent.wait("working")
    record = own(ctx, agent, terminal_id="term_from_an_earlier_life")
    (row,) = list_agents({}, ctx)["agents"]
    assert (row["owned"], row["taskId"]) == (False, None)
    for value in (
        interrupt_agent({"target": record.task_id}, ctx),
        close_agent({"target": record.task_id, "force": True}, ctx),
    ):
        assert value["error"]["code"] == "NOT_OWNED", value
    assert agent.status == "working"  # never interrupted nor closed


def test_a_closed_task_no_longer_owns_its_pane(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="reused")
    own(ctx, agent, status="closed")
    (row,) = list_agents({}, ctx)["agents"]
    assert row["owned"] is False


def test_local_machine_names_are_accepted(ctx: AgentToolsContext) -> None:
    for machine in ("local", ""):
        value = list_agents({"machine": machine}, ctx)
        LIST.validate(value)
        assert value == {"agents": []}


def test_a_machine_not_in_machines_is_refused(herdr_server: HerdrServer, tmp_path: Path) -> None:
    ctx = make_ctx(herdr_server, tmp_path, machines=("gpu",))
    unknown = agent_result(list_agents({"machine": "elsewhere"}, ctx))
    assert (unknown["status"], unknown["nextAction"]) == ("failed", "retry")
    assert unknown["error"]["code"] == "MACHINE_NOT_ENABLED"
    assert unknown["error"]["field"] == "machine"


def test_herdr_down_is_a_herdr_error(tmp_path: Path) -> None:
    state = tmp_path / "state"
    client = HerdrClient.build("socket", socket_path=tmp_path / "none.sock", env={})
    ctx = AgentToolsContext.create(
        {}, config=Config(state_dir=state, artifact_dir=state / "a"), client=client
    )
    value = agent_result(list_agents({}, ctx))
    assert value["error"]["code"] == "HERDR_ERROR"
    assert value["error"]["herdrCode"] == "server_not_running"


def test_a_plain_tool_context_is_accepted(
    herdr_server: HerdrServer, herdr_fake_agent: FakeAgents, tmp_path: Path
) -> None:
    herdr_fake_agent.start("pi", herdr_fake_agent.scenario().reply("x"), name="solo")
    env = {**herdr_server.env, "XDG_STATE_HOME": str(tmp_path / "xdg")}
    client = HerdrClient.build("socket", socket_path=herdr_server.socket_path, env=env)
    value = list_agents({}, ToolContext.with_client(client, env))
    LIST.validate(value)
    assert [row["name"] for row in value["agents"]] == ["solo"]


K2_TOOLS = {
    "herdr_message_agent": "R2",
    "herdr_list_agents": "R0",
    "herdr_interrupt_agent": "R1",
    "herdr_inbox": "R0",
    "herdr_read_agent": "R0",
    "herdr_close_agent": "R1",
    "herdr_doctor": "R0",
}


def test_k2_tools_are_registered_with_strict_schemas() -> None:
    from orchestrator.agent_tools.tools import AGENT_TOOLS

    for name, risk in K2_TOOLS.items():
        tool = AGENT_TOOLS[name]
        assert (tool.name, tool.risk) == (name, risk)
        schema = dict(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
        assert not jsonschema.Draft202012Validator(schema).is_valid({"bogus": 1})


def test_an_invalid_configuration_is_refused(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "HERDR_ORCHESTRATOR_ENABLD": "false"}
    value = agent_result(list_agents({}, ToolContext.from_env(env)))
    assert (value["error"]["code"], value["error"]["field"]) == (
        "CONFIG_INVALID",
        "HERDR_ORCHESTRATOR_ENABLD",
    )
