"""``herdr_get_agent_result`` end to end on the simulator: harvesting later, a pane closed
under a task, observations of agents we did not spawn, the pane-tail fallback, crash safety,
and that harvesting never types anything into an agent."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from herdr_sim.fake_agent import Scenario
from orchestrator.agent_tools import completion
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.tools import AGENT_TOOLS
from orchestrator.core.tool import Tool
from pytest_herdr.agents import FakeAgents
from pytest_herdr.backends import HerdrServer
from pytest_herdr.client import HerdrClient as WireClient
from tests.contract_check import contracts_dir
from tests.orchestrator.agent_tools.test_fleet import own
from tests.orchestrator.agent_tools.test_spawn import checked, make_ctx, scenario_args, spawn
from tests.orchestrator.support import FAST_AGENTS, received

pytestmark = FAST_AGENTS

GET = "herdr_get_agent_result"
#: What harvesting must never send: it reads, it does not type.
TYPING = {"agent.prompt", "agent.send_keys", "pane.send_text", "pane.send_input", "pane.send_keys"}


def get_result(ctx: AgentToolsContext, **args: Any) -> dict[str, Any]:
    tool: Tool = AGENT_TOOLS[GET]
    jsonschema.Draft202012Validator(dict(tool.input_schema)).validate(args)
    return checked(tool.handler(args, ctx))


@pytest.fixture
def ctx(herdr_server: HerdrServer, tmp_path: Path) -> AgentToolsContext:
    return make_ctx(herdr_server, tmp_path)


def dead_pid() -> int:
    """The pid of a process that has exited."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_running_on_timeout_then_harvested_later(ctx: AgentToolsContext, tmp_path: Path) -> None:
    scenario = Scenario().wait(700).reply("finished the long job")
    handle = spawn(
        ctx,
        prompt="long job",
        cwd=str(tmp_path),
        wait=False,
        agent_args=scenario_args(tmp_path, scenario),
    )
    assert handle["status"] == "running", handle
    early = get_result(ctx, target=handle["taskId"], timeout_ms=50)
    assert early["status"] == "running"
    assert early["nextAction"] == "wait"
    assert any("after waiting 50 ms" in w for w in early["warnings"])
    late = get_result(ctx, target=handle["name"], timeout_ms=10_000)
    assert late["status"] == "completed", late
    assert late["finalMessage"] == "finished the long job"
    assert late["task"]["status"] == "completed"
    assert late["artifacts"]["sessionFile"] is not None
    assert ctx.slots.holders() == []


def test_wait_false_does_not_wait(ctx: AgentToolsContext, tmp_path: Path) -> None:
    handle = spawn(
        ctx,
        prompt="hang",
        cwd=str(tmp_path),
        wait=False,
        agent_args=scenario_args(tmp_path, Scenario().hang()),
    )
    result = get_result(ctx, target=handle["paneId"], wait=False)
    assert result["status"] == "running"
    assert result["taskId"] == handle["taskId"]


def test_pane_closed_under_the_task_is_gone(
    ctx: AgentToolsContext, herdr_client: WireClient, tmp_path: Path
) -> None:
    done = spawn(ctx, prompt="x", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, Scenario()))
    herdr_client.call("pane.close", pane_id=done["paneId"])
    result = get_result(ctx, target=done["taskId"])
    assert result["status"] == "gone", result
    assert result["nextAction"] == "inspect"
    assert result["error"]["code"] == "PANE_GONE"
    assert result["task"]["status"] == "gone"


def test_harvest_never_types_into_the_agent(
    ctx: AgentToolsContext, herdr_server: HerdrServer, tmp_path: Path
) -> None:
    done = spawn(
        ctx,
        prompt="x",
        cwd=str(tmp_path),
        agent_args=scenario_args(tmp_path, Scenario().ask("Go on?")),
    )
    assert done["status"] == "blocked"
    wire = received(herdr_server)
    for _ in range(2):
        again = get_result(ctx, target=done["taskId"])
        assert again["status"] == "blocked"
    assert not TYPING & set(wire.methods())


def test_foreign_agent_is_observed(ctx: AgentToolsContext, herdr_fake_agent: FakeAgents) -> None:
    agent = herdr_fake_agent.start("pi", Scenario().reply("foreign answer"), name="stranger")
    agent.prompt("hello")
    result = get_result(ctx, target="stranger")
    assert result["observation"] is True
    assert result["status"] == "idle"
    assert result["nextAction"] == "none"
    assert result["taskId"] is None and result["task"] is None
    assert result["finalMessage"] == "foreign answer"


def test_unknown_target_is_task_not_found(ctx: AgentToolsContext) -> None:
    result = get_result(ctx, target="nobody")
    assert result["status"] == "failed"
    assert result["error"]["code"] == "TASK_NOT_FOUND"
    assert result["error"]["field"] == "target"


@pytest.mark.herdr(agent_manifests_dir=contracts_dir() / "agent-detection")
def test_pane_tail_fallback_for_a_kind_without_session(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start(
        "claude", Scenario().wait(300).reply("claude says hi"), name="cl"
    )
    agent.prompt("hello")
    own(ctx, agent)
    result = get_result(ctx, target="cl", lines=40)
    assert result["status"] == "completed", result
    assert "claude says hi" in (result["finalMessage"] or "")
    assert len((result["finalMessage"] or "").splitlines()) <= 40
    assert "pane" in [e["source"] for e in result["evidence"]]


def test_spawn_killed_before_its_pane_leaves_an_inspectable_record(
    ctx: AgentToolsContext,
) -> None:
    record, _ = ctx.store.create(kind="pi", cwd="/")
    record = ctx.store.update(record.task_id, owner_pid=dead_pid())
    result = get_result(ctx, target=record.task_id)
    assert result["status"] == "failed"
    assert result["error"]["code"] == "SPAWN_INTERRUPTED"
    assert result["task"]["status"] == "failed"
    assert ctx.store.get(record.task_id).error["code"] == "SPAWN_INTERRUPTED"  # type: ignore[index]


def test_spawn_killed_before_its_prompt_is_failed_though_its_agent_is_idle(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    # The agent is up and idle (it even answered someone else's prompt), but our spawn died
    # before sending the task prompt: that idle agent did none of our work.
    agent = herdr_fake_agent.start("pi", Scenario().reply("not our answer"), name="orphan")
    agent.prompt("someone else's prompt")
    record, _ = ctx.store.create(kind="pi", cwd="/", name="orphan")
    ctx.store.update(
        record.task_id,
        owner_pid=dead_pid(),
        pane_id=agent.pane.pane_id,
        artifact_dir=str(ctx.config.artifact_dir / record.task_id),
    )
    result = get_result(ctx, target=record.task_id)
    assert result["status"] == "failed", result
    assert result["error"]["code"] == "SPAWN_INTERRUPTED"
    assert "prompt not delivered" in result["error"]["message"]
    assert result["finalMessage"] is None
    assert result["task"]["status"] == "failed"


def test_spawn_killed_after_its_prompt_was_delivered_is_harvested(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start("pi", Scenario().reply("survived"), name="orphan")
    record, _ = ctx.store.create(kind="pi", cwd="/", name="orphan")
    artifact_dir = ctx.config.artifact_dir / record.task_id
    before = ctx.client.agent_get(agent.pane.pane_id)
    record = ctx.store.update(
        record.task_id,
        owner_pid=dead_pid(),
        pane_id=agent.pane.pane_id,
        artifact_dir=str(artifact_dir),
        **completion.sending(before),
    )
    agent.prompt(f"Your task is in {artifact_dir / 'task.md'} - read it")
    ctx.store.update(record.task_id, status="running", delivery=completion.sent(record, None))
    result = get_result(ctx, target=record.task_id)
    assert result["status"] == "completed", result
    assert result["finalMessage"] == "survived"
    assert result["task"]["status"] == "completed"


def test_native_args_are_redacted_from_every_screen_text_of_a_result(tmp_path: Path) -> None:
    # a failure quoting the pane (the command line with its key) or a warning must not
    # carry the key out either; ids, paths and the model stay as they are
    from orchestrator.agent_tools import contract
    from orchestrator.agent_tools.harvest import to_dict
    from orchestrator.core.config import Config

    secret = "sk-live-0123456789abcdef"
    ctx = AgentToolsContext.create(
        {}, config=Config(state_dir=tmp_path / "s", artifact_dir=tmp_path / "a")
    )
    result = contract.AgentResult(
        status="failed",
        tool="herdr_spawn_agent",
        task_id="t-0123456789ab",
        model="anthropic/claude-sonnet-4-5",
        final_message=f"$ claude --api-key {secret}",
        question=f"use {secret}?",
        error=contract.ResultError("AGENT_EXITED", f"pane: claude --api-key {secret}"),
        warnings=[f"pane tail: {secret}"],
        evidence=[contract.Evidence("pane", f"last line: {secret}")],
        task={"taskId": "t-0123456789ab", "error": {"code": "X", "message": secret}},
    )
    value = to_dict(ctx, result, secrets=("--api-key", secret, "on"))
    assert secret not in repr(value)
    # a flag's name is not a secret, its value is (tools.result.secret_parts)
    assert value["error"]["message"] == "pane: claude --api-key <redacted: 24 chars>"
    assert (value["taskId"], value["model"]) == ("t-0123456789ab", "anthropic/claude-sonnet-4-5")
