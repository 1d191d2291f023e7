"""The simulator hosts the real opencode (offline against the fake LLM as an OpenAI-compatible
provider, with the project's Herdr plugin and Herdr's screen-detection manifest): start, a
prompt round trip, working → idle, the reported session, a tool call. Opt-in
(``PYTEST_HERDR_REAL_OPENCODE=1``, see conftest.py). Marker ``real_agent``."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent import Scenario
from herdr_sim.fake_agent.app import FakeAgent, parse_args
from herdr_sim.fake_agent.personas import render
from herdr_sim.fake_llm import Match, Script
from pytest_herdr.real_agents import RealAgent, RealAgents
from pytest_herdr.waits import wait_until
from tests.real_agents.observed import MANIFESTS, statuses
from tests.real_agents.shapes import Shapes, assert_within, shapes

pytestmark = pytest.mark.real_agent


def input_box(screen: str) -> tuple[str, str] | None:
    """The input box's last row and bottom border, cut to their first words: how a
    screen-scraping client finds opencode's input region (None: no border on screen)."""
    rows = [row.strip() for row in screen.splitlines() if row.strip()]
    border = next((i for i, row in enumerate(rows) if re.fullmatch("╹▀{10,}", row)), None)
    if border is None or border == 0:
        return None
    return rows[border - 1][:10], rows[border][:11]


def start(agents: RealAgents, script: Script | None = None, **options: Any) -> RealAgent:
    return agents.start("opencode", script, manifests=MANIFESTS, **options)


def test_start_prompt_round_trip_and_working_then_idle(herdr_real_agent: RealAgents) -> None:
    opencode = start(herdr_real_agent, Script().reply("Hello from the fake model.", delay=1.0))
    info = opencode.agent.wait("idle")  # Herdr's opencode manifest reads the screen
    assert info["agent"] == "opencode" and info["interactive_ready"] is True
    idle = opencode.agent.read("visible")
    assert "Fake model" in idle  # the model from opencode.json
    # the input box the fake opencode copies: the agent/model row, then the ╹▀▀▀ border
    fake = "\n".join(render("opencode", state="idle", width=100, height=30, transcript=[],
                            typed="", question="", frame=0, elapsed_s=0, model="fake-model",
                            cwd=str(opencode.cwd))[1])  # fmt: skip
    assert input_box(idle) == input_box(fake) == ("┃  Build ·", "╹▀▀▀▀▀▀▀▀▀▀")
    assert opencode.llm.requests == []  # starting asks the model nothing
    before = len(statuses(opencode))
    # not agent.prompt's wait: loaded, opencode may show no state change within its 5 s
    opencode.prompt("say hello", wait=False)
    opencode.pane.wait_for("Hello from the fake model.", timeout=30.0)
    wait_until(
        lambda: "working" in statuses(opencode)[before:] and statuses(opencode)[-1] == "idle",
        what="working, then idle",
    )
    # the project's plugin reported the session opencode created for the prompt
    session: dict[str, Any] = wait_until(
        lambda: opencode.agent.info.get("agent_session") or {}, what="the reported session"
    )
    assert (session["source"], session["agent"], session["kind"]) == (
        "herdr:opencode", "opencode", "id")  # fmt: skip
    assert session["value"].startswith("ses_")
    (request,) = opencode.requests()  # no title request: opencode.json disables that agent
    assert (request.api, request.last_user_text) == ("openai-chat", "say hello")
    assert request.body["model"] == "fake-model" and request.body["stream"] is True
    assert opencode.session_files() == [opencode.home.sessions_dir / "opencode.db"]


def test_a_real_tool_call_reaches_the_screen_and_the_fake_llms_log(
    herdr_real_agent: RealAgents,
) -> None:
    script = (
        Script()
        .call_tool("bash", {"command": "echo herdr-tool-$((6*7))", "description": "Echo"},
                   when=Match(tool_result=False))
        .reply("The tool printed 42.", when=Match(tool_result_contains="herdr-tool-42"))
    )  # fmt: skip
    opencode = start(herdr_real_agent, script)
    opencode.prompt("run the tool", wait=False)
    opencode.pane.wait_for("The tool printed 42.", timeout=30.0)
    first, second = opencode.requests()
    assert first.tool_results == ()
    (result,) = second.tool_results
    assert "herdr-tool-42" in result
    assert opencode.llm.unmatched == []


def test_the_fake_opencodes_database_has_the_shape_of_opencodes(
    herdr_real_agent: RealAgents, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real opencode and the fake run the same turn (a bash call, then an answer): the
    fake's tables' columns are real ones, its message and part ``data`` have only keys the
    real ones have, per role and part type, and both read back to the same conversation."""
    script = (
        Script()
        .call_tool("bash", {"command": "echo herdr-tool-$((6*7))", "description": "Echo"},
                   when=Match(tool_result=False))
        .reply("It printed 42.", when=Match(tool_result_contains="herdr-tool-42"))
    )  # fmt: skip
    opencode = start(herdr_real_agent, script)
    opencode.prompt("run the tool", wait=False)
    opencode.pane.wait_for("It printed 42.", timeout=30.0)
    (real_db,) = opencode.session_files()
    monkeypatch.chdir(opencode.cwd)
    scenario = Scenario().run_tool("bash", "echo herdr-tool-$((6*7))").reply("It printed 42.")
    fake = FakeAgent(parse_args([], "opencode"), scenario, {"HOME": str(tmp_path / "home")})
    fake.headless = True
    fake.run_turn("run the tool", scenario.turn(0))
    fake_db = fake.session.path
    assert fake_db == tmp_path / "home" / ".local" / "share" / "opencode" / "opencode.db"

    def read(db: Path) -> tuple[dict[str, set[str]], Shapes, list[tuple[str, str]]]:
        with contextlib.closing(sqlite3.connect(db)) as connection:
            columns = {t: {c[1] for c in connection.execute(f"PRAGMA table_info({t})")}
                       for t in ("project", "session", "message", "part")}  # fmt: skip
            (session,) = connection.execute("SELECT id FROM session").fetchall()
            rows = connection.execute(
                "SELECT m.data, p.data FROM message m JOIN part p ON p.message_id = m.id"
                " WHERE m.session_id = ? ORDER BY m.time_created, m.id, p.id", session,
            ).fetchall()  # fmt: skip
        lines = [{"message": json.loads(m), "part": json.loads(p)} for m, p in rows]
        found = shapes(lines, lambda line: f"{line['message']['role']}/{line['part']['type']}")
        said = [(line["message"]["role"], line["part"]["text"]) for line in lines
                if line["part"]["type"] == "text"]  # fmt: skip
        return columns, found, said

    real_columns, real_shapes, real_said = read(real_db)
    fake_columns, fake_shapes, fake_said = read(fake_db)
    assert all(fake_columns[t] == real_columns[t] for t in fake_columns)
    needed = ("user/text", "assistant/step-start", "assistant/tool", "assistant/text",
              "assistant/step-finish")  # fmt: skip
    assert_within(fake_shapes, real_shapes, needed)
    assert real_said == fake_said == [("user", "run the tool"), ("assistant", "It printed 42.")]
