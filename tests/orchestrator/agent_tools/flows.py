"""Orchestrator flows written once and run with the fake pi and with the real pi.

Issue 11's acceptance: the agent tools pass the listed flows with real pi *unmodified from the
fake-agent flows except for the agent's setup*. So each flow here is a plain function of an
:class:`AgentSetup`: it spawns, answers, interrupts, pages and harvests through the registry
entries (``AGENT_TOOLS``) exactly as a model would, and asserts the results. The setup is the
only thing that differs:

* :class:`FakePi` (``tests/orchestrator/agent_tools/test_flows.py``) hands the fake pi its
  scenario with ``--scenario FILE`` in ``agent_args``;
* the real pi's setup (``tests/real_agents/test_orchestrator_pi.py``) starts the simulator with
  pi's environment (``$PI_CODING_AGENT_DIR`` naming the fake LLM), makes the fake model the
  ``pi`` default alias, and turns the same scenario into the fake LLM's answers
  (:func:`script_of`): the real pi then runs the tool calls itself.

The agent's behaviour is written as a fake-pi :class:`~herdr_sim.fake_agent.Scenario` because
that is the vocabulary both can play: a ``bash`` step is pi's ``bash`` tool, ``write_file`` its
``write`` tool, ``reply`` the model's text, ``fail`` a provider error and ``hang`` a turn that
does not end by itself.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import jsonschema

from herdr_sim.fake_agent import Scenario
from herdr_sim.fake_llm import Script, ToolCall, Turn
from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.records import now_iso
from orchestrator.agent_tools.tools import AGENT_TOOLS
from orchestrator.agent_tools.transcript_tool import READ_RESULT_SCHEMA
from tests.orchestrator.agent_tools.test_spawn import (
    checked,
    git_repo,
    scenario_args,
    write_result_md,
)

__all__ = [
    "HANG_S",
    "QUESTION",
    "REFUSAL",
    "AgentSetup",
    "FakePi",
    "append_inbox",
    "blocked_then_answered",
    "completed_with_result_md_and_diff",
    "interrupted_long_turn",
    "provider_error_is_failed",
    "script_of",
    "transcript_paged",
]

QUESTION = "Which database should I use?"
#: A provider error no agent retries (pi retries messages naming overload, rate limits or
#: server errors, and every 5xx: see docs/simulator/real-agents.md).
REFUSAL = "invalid request: the fake model refuses this prompt"
#: How long a ``hang`` step keeps the fake LLM from answering (the flow interrupts it first).
HANG_S = 30.0
_PAGE = jsonschema.Draft202012Validator(READ_RESULT_SCHEMA)


class AgentSetup(Protocol):
    """The agent's setup: the one part of a flow that differs between fake and real pi."""

    @property
    def ctx(self) -> AgentToolsContext:
        """The agent tools' context, on a simulator the agent can run in."""

    @property
    def root(self) -> Path:
        """The test's own directory."""

    def agent_args(self, scenario: Scenario) -> list[str]:
        """Make the next spawned agent play ``scenario``; the spawn's ``agent_args``."""


@dataclass(frozen=True)
class FakePi:
    """The fake pi plays the scenario it is given with ``--scenario FILE``."""

    ctx: AgentToolsContext
    root: Path

    def agent_args(self, scenario: Scenario) -> list[str]:
        return scenario_args(self.root, scenario)


def script_of(scenario: Scenario) -> Script:
    """The fake LLM's answers that make the real pi play ``scenario``.

    Each tool step becomes one model answer calling pi's tool (``bash`` with ``command``,
    ``write`` with ``path`` and ``content``), a ``reply`` the answer that ends the turn (text
    before a tool step travels with that tool call), ``wait`` and ``hang`` a delay before the
    next answer, ``fail`` an HTTP 400 (pi does not retry a 4xx). A turn whose steps end in a
    tool call ends with a short answer. Turns are answered in order, one request after
    another, as pi sends them. ``ask``, ``blip`` and ``crash`` have no model-side equivalent.
    """
    script = Script()
    for index, turn in enumerate(scenario.turns):
        text, delay, answered = "", 0.0, False
        for step in turn.steps:
            answered = False
            if step.action == "reply":
                text = f"{text}\n{step.text}" if text else step.text
                answered = True
                continue
            if step.action == "wait":
                delay += step.ms / 1000
                continue
            if step.action == "hang":
                delay += HANG_S
                continue
            if step.action == "fail":
                script.turns.append(Turn(error=(400, step.text), delay=delay))
                text, delay, answered = "", 0.0, True
                break
            if step.action == "tool":
                call = ToolCall("bash", {"command": step.text})
            elif step.action == "write_file":
                call = ToolCall("write", {"path": step.text, "content": step.content})
            else:
                raise ValueError(f"turn {index}: a {step.action!r} step has no fake-LLM equivalent")
            script.turns.append(Turn(text=text, tool_calls=(call,), delay=delay))
            text, delay = "", 0.0
        if text or not answered:
            script.turns.append(Turn(text=text or "done", delay=delay))
    return script


# -- helpers --------------------------------------------------------------------------------------


def call(ctx: AgentToolsContext, name: str, **args: Any) -> dict[str, Any]:
    """``name``'s handler on ``args`` (validated against its input schema first)."""
    tool = AGENT_TOOLS[name]
    jsonschema.Draft202012Validator(dict(tool.input_schema)).validate(args)
    return tool.handler(args, ctx)


def result(ctx: AgentToolsContext, name: str, **args: Any) -> dict[str, Any]:
    """``call`` for a tool answering an AgentResult (checked against its schema)."""
    return checked(call(ctx, name, **args))


def append_inbox(ctx: AgentToolsContext, type_: str, text: str) -> str:
    """A shell command appending one message to every task's inbox (one task per test)."""
    line = json.dumps({"ts": now_iso(), "type": type_, "text": text})
    art = ctx.config.artifact_dir
    return f'for d in {art}/t-*/; do printf "%s\\n" {shlex.quote(line)} >> "$d"inbox.ndjson; done'


def _spawn(setup: AgentSetup, scenario: Scenario, cwd: Path, **args: Any) -> dict[str, Any]:
    return result(
        setup.ctx,
        "herdr_spawn_agent",
        cwd=str(cwd),
        agent_args=setup.agent_args(scenario),
        timeout_ms=60_000,
        **args,
    )


# -- the flows ------------------------------------------------------------------------------------


def completed_with_result_md_and_diff(setup: AgentSetup) -> dict[str, Any]:
    """Spawn → ``completed``: the agent edits a tracked file with its ``write`` tool, writes
    ``result.md`` into the artifact directory the envelope names with ``bash``, and answers
    ``COMPLETE``; the result carries the report and the diff. The result."""
    ctx = setup.ctx
    repo = git_repo(setup.root / "repo")
    scenario = (
        Scenario()
        .write_file("a.txt", "two\n")
        .run_tool("bash", write_result_md(ctx, "# Report\nchanged a.txt"))
        .reply("COMPLETE result.md\nChanged a.txt.")
    )
    done = _spawn(setup, scenario, repo, prompt="change a.txt to two")
    assert (done["status"], done["nextAction"]) == ("completed", "review"), done
    assert done["finalMessage"] == "COMPLETE result.md\nChanged a.txt."
    assert done["resultText"] is not None and "changed a.txt" in done["resultText"]
    assert done["artifacts"]["resultMdExists"] is True
    assert [(f["path"], f["status"]) for f in done["diff"]["files"]] == [("a.txt", "modified")]
    assert "+two" in done["diff"]["patch"] and "-one" in done["diff"]["patch"]
    assert (repo / "a.txt").read_text() == "two\n"
    assert done["task"]["status"] == "completed"
    assert ctx.store.get(done["taskId"]).status == "completed"
    return done


def blocked_then_answered(setup: AgentSetup) -> dict[str, Any]:
    """A turn that ends the envelope's way — a ``BLOCKED`` inbox message and a final message
    with the ``BLOCKED`` header — is ``blocked`` with the question (Herdr shows the agent
    idle); ``herdr_message_agent`` ANSWER starts the next turn, which is ``completed``. The
    answered result."""
    ctx = setup.ctx
    scenario = (
        Scenario()
        .run_tool("bash", append_inbox(ctx, "BLOCKED", QUESTION))
        .reply(f"BLOCKED\n{QUESTION}")
        .then()
        .reply("using postgres")
    )
    asked = _spawn(setup, scenario, setup.root, prompt="set up storage")
    assert (asked["status"], asked["nextAction"]) == ("blocked", "ask_user"), asked
    assert asked["question"] == QUESTION
    assert asked["task"]["status"] == "blocked"
    assert "inbox" in [e["source"] for e in asked["evidence"]]
    task_id = asked["taskId"]
    answered = result(
        ctx,
        "herdr_message_agent",
        target=task_id,
        message="postgres",
        kind="ANSWER",
        wait=True,
        timeout_ms=30_000,
    )
    assert (answered["taskId"], answered["status"]) == (task_id, "completed"), answered
    assert answered["finalMessage"] == "using postgres"
    harvested = result(ctx, "herdr_get_agent_result", target=task_id, timeout_ms=20_000)
    assert (harvested["status"], harvested["finalMessage"]) == ("completed", "using postgres")
    assert harvested["question"] is None
    assert ctx.store.get(task_id).status == "completed"
    return answered


def interrupted_long_turn(setup: AgentSetup) -> dict[str, Any]:
    """``herdr_interrupt_agent`` on a turn that does not end by itself: Escape aborts it, the
    result is ``failed`` ``INTERRUPTED`` and the record ``interrupted``; the agent stays,
    idle, in its pane. The interrupt's result."""
    ctx = setup.ctx
    running = _spawn(setup, Scenario().hang(), setup.root, prompt="a long job", wait=False)
    assert (running["status"], running["nextAction"]) == ("running", "wait"), running
    stopped = result(ctx, "herdr_interrupt_agent", target=running["taskId"])
    assert (stopped["status"], stopped["error"]["code"]) == ("failed", "INTERRUPTED"), stopped
    assert stopped["task"]["status"] == "interrupted"
    assert ctx.store.get(running["taskId"]).status == "interrupted"
    assert any(e["detail"].startswith("Escape sent") for e in stopped["evidence"])
    assert ctx.client.agent_get(running["paneId"]).agent_status == "idle"
    return stopped


def transcript_paged(setup: AgentSetup) -> list[dict[str, Any]]:
    """``herdr_read_agent`` pages a transcript of two prompts (the kickoff and a NOTE) with a
    tool call: the pages, walked with ``nextFrom``, are the whole transcript, and every
    message belongs to the right prompt. The pages."""
    ctx = setup.ctx
    scenario = (
        Scenario().run_tool("bash", "echo built-$((20+22))").reply("built it").then().reply("two")
    )
    done = _spawn(setup, scenario, setup.root, prompt="build it")
    assert done["status"] == "completed", done
    task_id = done["taskId"]
    again = result(
        ctx, "herdr_message_agent", target=task_id, message="again", kind="NOTE", wait=True,
        timeout_ms=30_000,
    )  # fmt: skip
    assert (again["status"], again["finalMessage"]) == ("completed", "two"), again

    whole = call(ctx, "herdr_read_agent", target=task_id, limit=100)
    _PAGE.validate(whole)
    assert whole["sessionPath"] == done["artifacts"]["sessionFile"]
    pages, start = [], 0
    while True:
        page = call(ctx, "herdr_read_agent", target=task_id, **{"from": start}, limit=2)
        _PAGE.validate(page)
        pages.append(page)
        assert page["total"] == whole["total"] and len(page["messages"]) <= 2
        if page["nextFrom"] is None:
            break
        assert page["nextFrom"] == start + 2
        start = page["nextFrom"]
    walked = [m for page in pages for m in page["messages"]]
    assert [m["index"] for m in walked] == list(range(whole["total"]))
    assert walked == whole["messages"]
    assert pages[1]["prevFrom"] == 0 and pages[0]["prevFrom"] is None

    messages = whole["messages"]
    users = [m for m in messages if m["role"] == "user"]
    assert len(users) == 2
    assert "task.md" in users[0]["text"] and "again" in users[1]["text"]
    call_detail = {"name": "bash", "detail": "echo built-$((20+22))"}
    assert any(call_detail in m["toolCalls"] for m in messages), messages
    tool = next(m for m in messages if m["role"] == "tool")
    assert (tool["toolName"], tool["isError"], tool["text"].strip()) == ("bash", False, "built-42")
    assert tool["prompt"] == 0
    assert messages[-1]["role"] == "assistant" and messages[-1]["text"] == "two"
    assert messages[-1]["prompt"] == 1
    last = call(ctx, "herdr_read_agent", target=task_id, **{"from": -1})
    assert [m["index"] for m in last["messages"]] == [whole["total"] - 1]
    return pages


def provider_error_is_failed(setup: AgentSetup) -> dict[str, Any]:
    """A turn the model's provider fails is ``failed`` ``AGENT_ERROR`` with the provider's
    message, not ``completed``. The result."""
    ctx = setup.ctx
    failed = _spawn(setup, Scenario().fail(REFUSAL), setup.root, prompt="do it")
    assert (failed["status"], failed["nextAction"]) == ("failed", "inspect"), failed
    assert failed["error"]["code"] == "AGENT_ERROR", failed
    assert REFUSAL in failed["error"]["message"], failed
    assert failed["task"]["status"] == "failed"
    assert ctx.store.get(failed["taskId"]).status == "failed"
    return failed
