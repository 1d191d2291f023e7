"""A task's question and last message as words, not screens.

An agent that ends its turn with the ``BLOCKED`` header (final message or inbox, as the
envelope teaches) is ``blocked`` with the question parsed out; a dialog's question is its
words, not the whole screen; a pane-tail ``finalMessage`` (claude) is the agent's last
message without blank filler and box drawing. Fake agents on the simulator.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from herdr_sim.fake_agent.personas import render
from orchestrator.agent_tools import screen_text
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.control import message_agent
from orchestrator.agent_tools.records import now_iso
from pytest_herdr.agents import FakeAgents
from pytest_herdr.backends import HerdrServer
from tests.contract_check import contracts_dir
from tests.orchestrator.agent_tools.test_fleet import own
from tests.orchestrator.agent_tools.test_get_result import get_result
from tests.orchestrator.agent_tools.test_spawn import checked, make_ctx, scenario_args, spawn
from tests.orchestrator.support import FAST_AGENTS

pytestmark = FAST_AGENTS

QUESTION = "Should I drop the users table?"
_BOX = set("─━═│┃║╭╮╰╯┌┐└┘")


@pytest.fixture
def ctx(herdr_server: HerdrServer, tmp_path: Path) -> AgentToolsContext:
    return make_ctx(herdr_server, tmp_path)


def append_inbox(ctx: AgentToolsContext, type_: str, text: str) -> str:
    """A shell command appending one inbox message to every task's inbox (one per test)."""
    line = json.dumps({"ts": now_iso(), "type": type_, "text": text})
    art = ctx.config.artifact_dir
    return f'for d in {art}/t-*/; do printf "%s\\n" {shlex.quote(line)} >> "$d"inbox.ndjson; done'


def assert_blocked_on(result: dict[str, Any], question: str) -> None:
    assert (result["status"], result["nextAction"]) == ("blocked", "ask_user"), result
    assert result["question"] == question
    assert result["task"]["status"] == "blocked"


def test_a_final_message_with_the_blocked_header_is_blocked(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    scenario = Scenario().reply(f"BLOCKED\n{QUESTION}")
    result = spawn(
        ctx, prompt="migrate", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert_blocked_on(result, QUESTION)
    assert any("BLOCKED header" in e["detail"] for e in result["evidence"])
    again = checked(get_result(ctx, target=result["taskId"]))
    assert_blocked_on(again, QUESTION)


def test_a_blocked_inbox_message_is_blocked_with_its_text(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    scenario = (
        Scenario()
        .run_tool("bash", append_inbox(ctx, "BLOCKED", QUESTION))
        .reply("I need a decision before I go on: see my question.")
    )
    result = spawn(
        ctx, prompt="migrate", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert_blocked_on(result, QUESTION)
    assert "inbox" in [e["source"] for e in result["evidence"]]


def test_an_answered_question_does_not_block_the_next_turn(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    scenario = (
        Scenario()
        .run_tool("bash", append_inbox(ctx, "BLOCKED", QUESTION))
        .reply(f"BLOCKED {QUESTION}")
        .then()
        .reply("Dropped it; all done.")
    )
    first = spawn(
        ctx, prompt="migrate", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert_blocked_on(first, QUESTION)
    answered = checked(
        message_agent(
            {"target": first["taskId"], "message": "yes", "kind": "ANSWER", "wait": True}, ctx
        )
    )
    assert answered["status"] == "completed", answered
    assert answered["finalMessage"] == "Dropped it; all done."
    assert checked(get_result(ctx, target=first["taskId"]))["status"] == "completed"


def test_a_complete_after_a_blocked_message_is_completed(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    scenario = (
        Scenario()
        .run_tool("bash", append_inbox(ctx, "BLOCKED", "which db?"))
        .run_tool("bash", append_inbox(ctx, "COMPLETE", "result.md"))
        .reply("Blocked by nothing in the end: done.")
    )
    result = spawn(ctx, prompt="x", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario))
    assert result["status"] == "completed", result
    assert result["question"] is None


def test_a_dialogs_question_is_the_question_not_the_screen(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    scenario = Scenario().ask("Delete the build directory?").reply("deleted")
    result = spawn(
        ctx, prompt="clean up", cwd=str(tmp_path), agent_args=scenario_args(tmp_path, scenario)
    )
    assert_blocked_on(result, "Delete the build directory?")


@pytest.mark.herdr(agent_manifests_dir=contracts_dir() / "agent-detection")
def test_a_pane_tail_final_message_is_the_agents_last_message(
    ctx: AgentToolsContext, herdr_fake_agent: FakeAgents
) -> None:
    agent = herdr_fake_agent.start(
        "claude", Scenario().wait(300).reply("claude says hi\nsecond line"), name="cl"
    )
    agent.prompt("hello")
    own(ctx, agent)
    result = checked(get_result(ctx, target="cl", lines=40))
    assert result["status"] == "completed", result
    assert result["finalMessage"] == "claude says hi\nsecond line"


# -- the text extraction itself, on every fake agent's screens ------------------------------------


@pytest.mark.parametrize("kind", ["pi", "claude", "codex", "opencode", "fake-agent"])
def test_screen_text_on_each_agents_screens(kind: str) -> None:
    def screen(state: str) -> str:
        _, lines = render(
            kind, state=state, width=70, height=30, frame=0, elapsed_s=1, model="m", cwd="/w",
            transcript=["> do the thing", "first line of the answer", "second line"],
            typed="", question="Delete the build directory?",
        )  # fmt: skip
        return "\n".join(lines)

    assert screen_text.last_message(screen("idle")) == "first line of the answer\nsecond line"
    question = screen_text.screen_question(screen("blocked")) or ""
    assert "Delete the build directory?" in question
    assert not _BOX & set(question)
    assert "esc" not in question.lower() and "1. Yes" not in question


def test_blocked_header_parsing() -> None:
    assert screen_text.blocked_header_question(f"BLOCKED\n{QUESTION}") == QUESTION
    assert screen_text.blocked_header_question(f"BLOCKED: {QUESTION}") == QUESTION
    assert screen_text.blocked_header_question("**BLOCKED**") == ""
    assert screen_text.blocked_header_question("Blocked by a flaky test; fixed it.") is None
    assert screen_text.blocked_header_question("BLOCKEDNESS") is None
    assert screen_text.blocked_header_question(None) is None
