"""The fake claude's and codex's screens against the real agents' where a client reads them.

Screen-scraping clients find a prompt's echo and the answer under it; the real Claude Code
2.1.332 echoes ``❯ say hi`` and answers ``● Hello there.``, the real Codex 0.171 ``› say hi``
and ``• Hello there.``. The real agent and the fake run the same prompt and answer, and
both must show the same echo and answer rows, and read back the same answer through the
orchestrator's screen reader (``screen_text.last_message``). The states the screens stand for
are held against Herdr's manifests in test_claude.py / test_codex.py (real) and
tests/sim/test_fake_agent_screens.py (fake). Marker ``real_agent``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from herdr_sim.fake_agent import Scenario
from herdr_sim.fake_agent.app import FakeAgent, parse_args
from herdr_sim.fake_agent.personas import render
from herdr_sim.fake_llm import Match, Script
from orchestrator.agent_tools import screen_text
from pytest_herdr.real_agents import RealAgents
from tests.real_agents.observed import MANIFESTS, SEEN

pytestmark = pytest.mark.real_agent


def rows_of(screen: str, *texts: str) -> list[str]:
    """The screen's rows holding each of ``texts`` (the first such row each), trimmed."""
    rows = [row.strip() for row in screen.splitlines()]
    return [next(row for row in rows if text in row) for text in texts]


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_prompt_echo_and_answer_rows_match_the_real_agents(
    herdr_real_agent: RealAgents, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    script = (
        Script()
        .reply("Fake task", when=Match(user_contains="task title"), repeat=True)
        .reply("Hello there.", delay=SEEN)
    )  # fmt: skip
    real = herdr_real_agent.start(kind, script, manifests=MANIFESTS)
    assert real.prompt("say hi")["agent_status"] == "idle"
    real.pane.wait_for("Hello there.")
    real_screen = real.agent.read("visible")

    monkeypatch.chdir(tmp_path)
    scenario = Scenario().reply("Hello there.")
    fake = FakeAgent(parse_args([], kind), scenario, {"HOME": str(tmp_path / "home")})
    fake.headless = True
    fake.run_turn("say hi", scenario.turn(0))
    _, lines = render(kind, state="idle", width=100, height=30, transcript=fake.transcript,
                      typed="", question="", frame=0, elapsed_s=0, model="fake-model",
                      cwd=str(tmp_path))  # fmt: skip
    fake_screen = "\n".join(lines)

    assert rows_of(real_screen, "say hi", "Hello there.") == rows_of(
        fake_screen, "say hi", "Hello there.")  # fmt: skip
    for screen in (real_screen, fake_screen):
        message = screen_text.last_message(screen) or ""
        assert message.splitlines()[0] == "Hello there."
