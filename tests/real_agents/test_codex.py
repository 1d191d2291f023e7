"""The simulator hosts the real Codex CLI (offline against the fake LLM's Responses API, with
the project's session hook and Herdr's screen-detection manifest): start, prompt round
trips, working → idle, the reported rollout file, and a shell call whose output reaches the
fake LLM's log. Marker ``real_agent``; the agent is installed once per machine."""

from __future__ import annotations

import json
from typing import Any

import pytest

from herdr_sim.fake_llm import Match, Script
from pytest_herdr.real_agents import RealAgent, RealAgents
from pytest_herdr.waits import wait_until
from tests.real_agents.observed import MANIFESTS, SEEN, entries, statuses

pytestmark = pytest.mark.real_agent


def start(agents: RealAgents, script: Script | None = None, **options: Any) -> RealAgent:
    return agents.start("codex", script, manifests=MANIFESTS, **options)


def script() -> Script:
    """A script that also answers Codex's own side request: after the first prompt Codex asks
    the model for a short title of the task, beside the turn itself."""
    return Script().reply("Fake task", when=Match(user_contains="task title"), repeat=True)


def turn_requests(agent: RealAgent) -> list[Any]:
    """The requests of the turns (not the title request)."""
    return [r for r in agent.requests() if "task title" not in r.last_user_text]


def reported_session(agent: RealAgent) -> dict[str, Any]:
    """The session the hook reported (Codex runs it when the first prompt starts the session)."""

    def session() -> dict[str, Any]:
        found: dict[str, Any] = agent.agent.info.get("agent_session") or {}
        return found

    return wait_until(session, what="the reported session")


def test_agent_start_brings_real_codex_to_idle_with_the_session_hook(
    herdr_real_agent: RealAgents,
) -> None:
    codex = start(herdr_real_agent)
    # Codex's title spins while it starts (Herdr's manifest reads that as working), then idle
    info = codex.agent.wait("idle")
    assert info["agent"] == "codex" and info["interactive_ready"] is True
    hook = codex.home.agent_dir / "herdr-agent-state.sh"
    hooks = json.loads((codex.home.agent_dir / "hooks.json").read_text())
    assert hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"] == f"bash '{hook}' session"
    config = (codex.home.agent_dir / "config.toml").read_text()
    assert "[features]\nhooks = true" in config
    assert "[hooks.state." in config  # the fixture trusted the hook in Codex's review dialog
    assert "agent_session" not in info  # Codex starts the session with the first prompt
    assert codex.llm.requests == []


def test_prompt_wait_round_trip_reports_the_session_and_shows_the_answer(
    herdr_real_agent: RealAgents,
) -> None:
    codex = start(herdr_real_agent, script().reply("Hello from the fake model.", delay=SEEN))
    info = codex.prompt("say hello")
    assert info["agent_status"] == "idle"
    codex.pane.wait_for("Hello from the fake model.")
    (request,) = turn_requests(codex)
    assert (request.api, request.path, request.last_user_text) == (
        "openai-responses", "/v1/responses", "say hello")  # fmt: skip
    assert request.body["model"] == "fake-model" and request.body["stream"] is True
    session = reported_session(codex)
    assert (session["source"], session["agent"]) == ("herdr:codex", "codex")


def test_the_screen_makes_the_state_working_then_idle(herdr_real_agent: RealAgents) -> None:
    codex = start(herdr_real_agent, script().reply("done", delay=1.5))
    before = len(statuses(codex))
    codex.prompt("take a moment")
    wait_until(
        lambda: "working" in statuses(codex)[before:] and statuses(codex)[-1] == "idle",
        what="working, then idle",
    )


def test_agent_session_is_the_real_rollout_holding_the_turn(
    herdr_real_agent: RealAgents,
) -> None:
    codex = start(herdr_real_agent, script().reply("The answer is 42.", delay=SEEN))
    codex.prompt("what is the answer?")
    session = reported_session(codex)
    (path,) = codex.session_files()
    assert path.is_relative_to(codex.home.sessions_dir)
    # the hook reports the id and the rollout path; Herdr keeps the id (the file's name ends so)
    assert session["kind"] == "id" and path.stem.endswith(session["value"])

    def answer() -> list[str]:
        return [
            c["text"] for e in entries(path) if e["type"] == "response_item"
            and e["payload"].get("role") == "assistant" for c in e["payload"]["content"]
        ]  # fmt: skip

    assert wait_until(answer, what="the answer in the rollout") == ["The answer is 42."]
    meta = entries(path)[0]
    assert meta["type"] == "session_meta" and meta["payload"]["cwd"] == str(codex.cwd)
    users = [
        c.get("text", "") for e in entries(path) if e["type"] == "response_item"
        and e["payload"].get("role") == "user" for c in e["payload"]["content"]
    ]  # fmt: skip
    assert "what is the answer?" in users


def test_a_real_tool_call_reaches_the_screen_and_the_fake_llms_log(
    herdr_real_agent: RealAgents,
) -> None:
    turns = (
        script()
        .call_tool("exec_command", {"cmd": "echo herdr-tool-$((6*7))"},
                   when=Match(tool_result=False), delay=SEEN)
        .reply("The tool printed 42.", when=Match(tool_result_contains="herdr-tool-42"))
    )  # fmt: skip
    codex = start(herdr_real_agent, turns)
    assert codex.prompt("run the tool")["agent_status"] == "idle"
    codex.pane.wait_for("The tool printed 42.")
    first, second = turn_requests(codex)
    assert first.tool_results == ()
    (result,) = second.tool_results
    assert "herdr-tool-42" in result
    assert codex.llm.unmatched == []
