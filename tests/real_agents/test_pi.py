"""The simulator hosts the real pi (1.6, offline against the fake LLM, with the project's
Herdr extension): start, prompt round trips, the extension's reports, the real session file
and a real tool call. Marker ``real_agent``; the agent is installed once per machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_llm import Match, Script
from pytest_herdr.real_agents import RealAgents
from pytest_herdr.waits import wait_until
from tests.real_agents.observed import entries, statuses

pytestmark = pytest.mark.real_agent


def test_agent_start_brings_real_pi_to_interactive_ready_with_the_extension(
    herdr_real_agent: RealAgents,
) -> None:
    pi = herdr_real_agent.start("pi")
    info = pi.agent.info
    assert info["agent"] == "pi" and info["interactive_ready"] is True
    assert info["agent_status"] == "idle"
    screen = pi.agent.read("visible")
    assert "[Extensions]" in screen and "herdr-agent-state.ts" in screen
    assert "fake-model" in screen  # pi's footer: the model from models.json
    assert (pi.home.agent_dir / "extensions" / "herdr-agent-state.ts").is_file()
    assert pi.llm.requests == []  # starting asks the model nothing


def test_prompt_wait_round_trip_shows_the_fake_models_answer(
    herdr_real_agent: RealAgents,
) -> None:
    pi = herdr_real_agent.start("pi", Script().reply("Hello from the fake model."))
    info = pi.prompt("say hello")
    assert info["agent_status"] == "idle"
    pi.pane.wait_for("Hello from the fake model.")  # (drawn just after pi reports idle)
    (request,) = pi.requests()
    assert (request.api, request.last_user_text, request.turn) == ("openai-chat", "say hello", 0)
    assert request.body["model"] == "fake-model" and request.body["stream"] is True


def test_the_extensions_reports_make_the_state_working_then_idle(
    herdr_real_agent: RealAgents,
) -> None:
    pi = herdr_real_agent.start("pi", Script().reply("done", delay=1.0))
    before = len(statuses(pi))
    pi.prompt("take a second")
    # the events recorder may still be reading the last event when the prompt returns
    wait_until(
        lambda: "working" in statuses(pi)[before:] and statuses(pi)[-1] == "idle",
        what="working, then idle",
    )
    assert statuses(pi)[-2:] == ["working", "idle"]
    assert pi.agent.info.get("screen_detection_skipped") is True  # the reports rule the pane
    # no screen rules are loaded for this simulator: only the extension can say "working"
    assert pi.server.sim is not None and pi.server.sim.config.agent_manifests_dir is None


def test_agent_session_is_the_real_session_file_holding_the_turn(
    herdr_real_agent: RealAgents,
) -> None:
    pi = herdr_real_agent.start("pi", Script().reply("The answer is 42."))
    pi.prompt("what is the answer?")
    session = pi.agent.info["agent_session"]
    assert (session["source"], session["agent"], session["kind"]) == ("herdr:pi", "pi", "path")
    path = Path(session["value"])
    assert path.is_file() and path.parent.parent == pi.home.sessions_dir
    assert pi.session_files() == [path]
    lines = wait_until(
        lambda: (found := entries(path)) and found[-1].get("message", {}).get("role") == "assistant"
        and found, what="the assistant message in the session file",
    )  # fmt: skip
    header = lines[0]
    assert (header["type"], header["version"], header["cwd"]) == ("session", 3, str(pi.cwd))
    messages = [e["message"] for e in lines if e["type"] == "message"]
    user = [m for m in messages if m["role"] == "user"]
    assert user[-1]["content"][0]["text"] == "what is the answer?"
    answer = messages[-1]
    assert answer["stopReason"] == "stop" and answer["model"] == "fake-model"
    assert [c["text"] for c in answer["content"] if c["type"] == "text"] == ["The answer is 42."]


def test_a_real_tool_call_reaches_the_screen_and_the_fake_llms_log(
    herdr_real_agent: RealAgents,
) -> None:
    script = (
        Script()
        .call_tool("bash", {"command": "echo herdr-tool-$((6*7))"}, when=Match(tool_result=False))
        .reply("The tool printed 42.", when=Match(tool_result_contains="herdr-tool-42"))
    )
    pi = herdr_real_agent.start("pi", script)
    info = pi.prompt("run the tool")
    assert info["agent_status"] == "idle"
    pi.pane.wait_for("The tool printed 42.")
    assert "herdr-tool-42" in pi.agent.read("recent")
    first, second = pi.requests()
    assert first.tool_results == ()
    assert second.last_user_text == "run the tool"
    assert second.tool_results == ("herdr-tool-42\n",)
    call_id = second.digest.tool_result_ids[0] if second.digest else ""
    assert call_id.startswith("call_")
    assert pi.llm.unmatched == []


def test_a_multi_line_prompt_arrives_as_one_user_message(herdr_real_agent: RealAgents) -> None:
    pi = herdr_real_agent.start("pi", Script().reply("got both lines"))
    pi.prompt("first line\nsecond line")
    (request,) = pi.requests()
    assert request.last_user_text == "first line\nsecond line"  # pi enables bracketed paste


def test_a_dialog_makes_real_pi_blocked_until_the_user_answers(
    herdr_real_agent: RealAgents,
) -> None:
    script = (
        Script()
        .call_tool("ask_user", {"question": "Deploy now?"}, when=Match(tool_result=False))
        .reply("Deploying.", when=Match(tool_result_contains="user said"))
    )
    ask_tool = Path(__file__).with_name("ask_user_tool.ts")
    pi = herdr_real_agent.start("pi", script, extra_extensions=(ask_tool,))
    info = pi.prompt("deploy", until=("blocked",))
    assert info["agent_status"] == "blocked"
    # the extension reports blocked as the tool starts, pi draws the dialog just after
    pi.pane.wait_for("Deploy now?")
    pi.agent.send_keys("Enter")
    assert pi.agent.wait("idle")["agent_status"] == "idle"
    pi.pane.wait_for("Deploying.")  # pi draws its last frame just after it reports idle
    assert pi.requests()[-1].tool_results == ("user said yes",)


def test_a_provider_error_ends_the_turn_as_an_error_in_the_session(
    herdr_real_agent: RealAgents,
) -> None:
    # a 4xx is not retried (a 5xx is, three times with 2, 4 and 8 s backoff)
    pi = herdr_real_agent.start("pi", Script().fail(400, "bad request from the fake"))
    assert pi.prompt("hello")["agent_status"] == "idle"
    # pi wraps its error at the pane's width (93 columns in Herdr's headless frame)
    pi.pane.wait_for("bad request")
    (request,) = pi.requests()
    assert request.status == 400
    path = Path(pi.agent.info["agent_session"]["value"])

    def failed_message() -> dict[str, Any]:
        found = entries(path)
        message: dict[str, Any] = found[-1].get("message", {}) if found else {}
        return message if message.get("stopReason") else {}

    last = wait_until(failed_message, what="the failed assistant message")
    assert last["stopReason"] == "error" and last["content"] == []
    assert "bad request from the fake" in last["errorMessage"]
