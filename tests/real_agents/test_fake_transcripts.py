"""The fake claude's and codex's transcripts against the ones the real agents write.

The real agent runs one turn with a tool call against the fake LLM; the fake agent runs the
same turn (the same prompt, a tool, an answer) through its own code. The fake's lines must
be of kinds the real agent wrote, with no key the real lines lack, and include every kind a
transcript reader needs (see :mod:`tests.real_agents.shapes`); both files must satisfy the
same reading rules (Claude Code: each ``parentUuid`` names an earlier entry; Codex:
``ordinal`` counts lines from 0, ``session_meta`` first, the turn's ``turn_id`` shared).
Marker ``real_agent``; the agents are installed once per machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from herdr_sim.fake_agent.app import FakeAgent, parse_args
from herdr_sim.fake_llm import Match, Script
from pytest_herdr.real_agents import RealAgents
from pytest_herdr.waits import wait_until
from tests.real_agents.observed import MANIFESTS, entries
from tests.real_agents.shapes import assert_within, claude_kind, codex_kind, shapes

pytestmark = pytest.mark.real_agent


def fake_turn(kind: str, home: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fake ``kind`` runs one turn (a shell tool, then an answer) without a screen, in
    ``cwd`` with ``HOME`` ``home``; its transcript's path."""
    monkeypatch.chdir(cwd)
    scenario = Scenario().run_tool("bash", "echo herdr-tool-$((6*7))").reply("It printed 42.")
    agent = FakeAgent(parse_args([], kind), scenario, {"HOME": str(home)})
    agent.headless = True
    agent.run_turn("run the tool", scenario.turn(0))
    return agent.session.path


def finished(path: Path, last: str, kind: Callable[[dict[str, Any]], str]) -> list[dict[str, Any]]:
    """The transcript's lines once a line of kind ``last`` is among its last four, else []."""
    lines = entries(path) if path.is_file() else []
    return lines if any(kind(line) == last for line in lines[-4:]) else []


def claude_finished(path: Path) -> list[dict[str, Any]]:
    """Claude Code's transcript once it holds both the turn's end and its last prompt."""
    lines = entries(path) if path.is_file() else []
    kinds = {claude_kind(line) for line in lines}
    return lines if {"system/turn_duration", "last-prompt"} <= kinds else []


def chained(lines: list[dict[str, Any]]) -> bool:
    """Claude Code's reading rule: every ``parentUuid`` is null or an earlier entry's uuid."""
    seen: set[str] = set()
    for line in lines:
        parent = line.get("parentUuid")
        if parent is not None and parent not in seen:
            return False
        if "uuid" in line:
            seen.add(line["uuid"])
    return True


def test_fake_claude_transcript_has_the_shape_of_claude_codes(
    herdr_real_agent: RealAgents, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (
        Script()
        .call_tool("Bash", {"command": "echo herdr-tool-$((6*7))", "description": "Echo"},
                   when=Match(tool_result=False))
        .reply("It printed 42.", when=Match(tool_result_contains="herdr-tool-42"))
    )  # fmt: skip
    # a bare echo needs no permission: the turn runs through without a dialog
    claude = herdr_real_agent.start("claude", script, manifests=MANIFESTS)
    claude.prompt("run the tool")
    claude.pane.wait_for("It printed 42.")
    (path,) = claude.session_files()
    # Claude Code writes the turn's end (``system/turn_duration``) and its ``last-prompt``
    # bookkeeping in either order: the turn is finished when both are there
    real = wait_until(lambda: claude_finished(path),
                      what="the finished turn in the real transcript")  # fmt: skip
    fake = entries(fake_turn("claude", tmp_path / "home", claude.cwd, monkeypatch))
    needed = ("mode", "permission-mode", "user", "assistant", "user/tool_result",
              "system/turn_duration", "last-prompt")  # fmt: skip
    assert_within(shapes(fake, claude_kind), shapes(real, claude_kind), needed)
    assert chained(real) and chained(fake)
    for lines in (real, fake):  # what a reader takes from both: the prompt and the answer
        prompts = [e["message"]["content"] for e in lines if claude_kind(e) == "user"]
        texts = [b["text"] for e in lines if e["type"] == "assistant"
                 for b in e["message"]["content"] if b["type"] == "text"]  # fmt: skip
        assert (prompts, texts[-1]) == (["run the tool"], "It printed 42.")


def test_fake_codex_rollout_has_the_shape_of_codexs(
    herdr_real_agent: RealAgents, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = (
        Script()
        .reply("Fake task", when=Match(user_contains="task title"), repeat=True)
        .call_tool("exec_command", {"cmd": "echo herdr-tool-$((6*7))"},
                   when=Match(tool_result=False))
        .reply("It printed 42.", when=Match(tool_result_contains="herdr-tool-42"))
    )  # fmt: skip
    codex = herdr_real_agent.start("codex", script, manifests=MANIFESTS)
    codex.prompt("run the tool")
    codex.pane.wait_for("It printed 42.")
    (path,) = codex.session_files()
    real = wait_until(lambda: finished(path, "event_msg/task_complete", codex_kind),
                      what="the finished turn in the real rollout")  # fmt: skip
    fake_path = fake_turn("codex", tmp_path / "home", codex.cwd, monkeypatch)
    fake = entries(fake_path)
    needed = ("session_meta", "event_msg/task_started", "response_item/message",
              "response_item/function_call", "response_item/function_call_output",
              "event_msg/task_complete")  # fmt: skip
    assert_within(shapes(fake, codex_kind), shapes(real, codex_kind), needed)
    for lines in (real, fake):
        assert [e["ordinal"] for e in lines] == list(range(len(lines)))
        assert lines[0]["type"] == "session_meta" and lines[0]["payload"]["cwd"] == str(codex.cwd)
        ends = ("event_msg/task_started", "event_msg/task_complete")
        turns = {e["payload"]["turn_id"] for e in lines if codex_kind(e) in ends}
        assert len(turns) == 1
        assert lines[-1]["payload"]["last_agent_message"] == "It printed 42."
    # both list the session in session_index.jsonl with the first prompt as its name
    for index in (codex.home.agent_dir / "session_index.jsonl",
                  tmp_path / "home" / ".codex" / "session_index.jsonl"):  # fmt: skip
        (listed,) = [json.loads(line) for line in index.read_text().splitlines()]
        assert set(listed) == {"id", "thread_name", "updated_at"}
        assert listed["thread_name"] == "run the tool"
    assert fake_path.name.startswith("rollout-") and path.name.startswith("rollout-")
