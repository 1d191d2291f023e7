"""The simulator hosts the real Claude Code (offline against the fake LLM's Anthropic
messages API, with the project's session hook and Herdr's screen-detection manifest): start,
prompt round trips, working → idle read from the screen, the reported transcript, and a
Bash call that waits for permission (blocked) and then reaches the fake LLM's log.
Marker ``real_agent``; the agent is installed once per machine."""

from __future__ import annotations

import json
from typing import Any

import pytest

from herdr_sim.fake_llm import Match, Script
from pytest_herdr.real_agents import RealAgent, RealAgents
from pytest_herdr.waits import WaitTimeout, wait_until
from tests.real_agents.observed import MANIFESTS, SEEN, entries, statuses

pytestmark = pytest.mark.real_agent


def start(agents: RealAgents, script: Script | None = None, **options: Any) -> RealAgent:
    return agents.start("claude", script, manifests=MANIFESTS, **options)


def test_agent_start_brings_real_claude_to_idle_with_the_session_hook(
    herdr_real_agent: RealAgents,
) -> None:
    claude = start(herdr_real_agent)
    info = claude.agent.info
    assert info["agent"] == "claude" and info["interactive_ready"] is True
    assert info["agent_status"] == "idle"
    session = info["agent_session"]  # reported by the project's SessionStart hook
    assert (session["source"], session["agent"]) == ("herdr:claude", "claude")
    hook = claude.home.agent_dir / "hooks" / "herdr-agent-state.sh"
    settings = json.loads((claude.home.agent_dir / "settings.json").read_text())
    (entry,) = settings["hooks"]["SessionStart"]
    assert entry["hooks"][0]["command"] == f"bash '{hook}' session"
    screen = claude.agent.read("visible")
    assert "Claude Code" in screen and "❯" in screen
    assert claude.llm.requests == []  # starting asks the model nothing


def test_prompt_wait_round_trip_shows_the_fake_models_answer(
    herdr_real_agent: RealAgents,
) -> None:
    claude = start(herdr_real_agent, Script().reply("Hello from the fake model.", delay=SEEN))
    info = claude.prompt("say hello")
    assert info["agent_status"] == "idle"
    claude.pane.wait_for("Hello from the fake model.")
    (request,) = claude.requests()
    assert request.api == "anthropic" and request.turn == 0
    assert request.path.startswith("/v1/messages")
    assert request.body["stream"] is True
    assert request.headers.get("x-api-key", "").startswith("sk-ant-pytest-herdr")


def test_the_screen_makes_the_state_working_then_idle(herdr_real_agent: RealAgents) -> None:
    claude = start(herdr_real_agent, Script().reply("done", delay=1.5))
    before = len(statuses(claude))
    claude.prompt("take a moment")
    wait_until(
        lambda: "working" in statuses(claude)[before:] and statuses(claude)[-1] == "idle",
        what="working, then idle",
    )
    # the hook reports only the session: the states come from Herdr's claude manifest
    assert claude.agent.info.get("screen_detection_skipped") is not True


def test_agent_session_is_the_real_transcript_holding_the_turn(
    herdr_real_agent: RealAgents,
) -> None:
    claude = start(herdr_real_agent, Script().reply("The answer is 42.", delay=SEEN))
    claude.prompt("what is the answer?")
    session = claude.agent.info["agent_session"]
    (path,) = claude.session_files()
    # the hook reports the id and the transcript path; Herdr keeps the id, the file's name
    assert (session["kind"], path.name) == ("id", f"{session['value']}.jsonl")
    assert path.parent.parent == claude.home.sessions_dir

    def assistant() -> list[dict[str, Any]]:
        found = [e for e in entries(path) if e.get("type") == "assistant"]
        return found if found else []

    (answer,) = wait_until(assistant, what="the assistant entry in the transcript")
    assert [c["text"] for c in answer["message"]["content"] if c["type"] == "text"] == [
        "The answer is 42."
    ]
    users = [e for e in entries(path) if e.get("type") == "user"]
    assert users[0]["message"]["content"] == "what is the answer?"
    assert users[0]["cwd"] == str(claude.cwd)


def test_a_bash_call_waits_for_permission_then_reaches_the_fake_llms_log(
    herdr_real_agent: RealAgents,
) -> None:
    script = (
        Script()
        # writing a file needs the user's permission (a bare echo would not)
        .call_tool("Bash", {"command": "touch made && echo herdr-tool-$((6*7))",
                            "description": "Touch and echo"}, when=Match(tool_result=False))
        .reply("The tool printed 42.", when=Match(tool_result_contains="herdr-tool-42"))
    )  # fmt: skip
    claude = start(herdr_real_agent, script)
    info = claude.prompt("run the tool", until=("blocked",))
    assert info["agent_status"] == "blocked"  # Herdr's manifest reads the permission dialog
    assert "Do you want to proceed?" in claude.agent.read("visible")

    # Claude Code ignores keys for a moment after a dialog opens (no accidental "yes"), so
    # Enter ("1. Yes") is pressed again until the dialog is gone (bounded)
    def answered() -> bool:
        claude.agent.send_keys("Enter")
        try:
            wait_until(lambda: "Do you want to proceed?" not in claude.agent.read("visible"),
                       1.0, interval=0.1, what="the dialog to close")  # fmt: skip
        except WaitTimeout:
            return False
        return True

    wait_until(answered, 10.0, what="the permission dialog to take the answer")
    assert claude.agent.wait("idle")["agent_status"] == "idle"
    claude.pane.wait_for("The tool printed 42.")
    assert (claude.cwd / "made").is_file()
    last = claude.requests()[-1]
    assert last.tool_results == ("herdr-tool-42",)
    assert claude.llm.unmatched == []
