"""A fake agent started below earlier output keeps that output in the pane's history.

The fakes draw on the alternate screen, as the real pi, Claude Code and Codex do
(``tests/sim/test_fake_agent_screen_fidelity.py`` holds them to the real agents' records):
the output before them stays on the main screen and in its history, hidden while the
alternate screen is up (Herdr's scroll metrics ``0/0``) and back when the agent exits. A
client that archives a pane's history after the agent (it reads ``max_offset_from_bottom +
viewport_rows`` lines) finds all of it. Every launcher kind, opencode (not compared with a
real one) included.
"""

from __future__ import annotations

import pytest

from herdr_sim.fake_agent import LAUNCHER_KINDS
from pytest_herdr import Pane, WireClient
from tests.agent_screens import EARLIER, EXIT, READY, fill
from tests.waits import wait_until


@pytest.mark.parametrize("kind", LAUNCHER_KINDS)
def test_earlier_output_is_hidden_while_the_fake_runs_and_kept_in_the_history(
    herdr_client: WireClient, herdr_pane: Pane, kind: str
) -> None:
    fill(herdr_pane)
    herdr_pane.run(kind)
    wait_until(lambda: READY[kind] in herdr_pane.read("visible"), what=f"the fake {kind}'s screen")
    assert herdr_pane.info["scroll"]["max_offset_from_bottom"] == 0  # the alternate screen
    herdr_pane.send(EXIT[kind], "Enter")
    wait_until(lambda: "filled-42" in herdr_pane.read("visible"), what="the main screen back")
    scroll = herdr_pane.info["scroll"]
    lines = herdr_pane.read(
        "recent", lines=scroll["max_offset_from_bottom"] + scroll["viewport_rows"]
    )
    kept = {line.strip() for line in lines.splitlines()}
    missing = [n for n in range(1, EARLIER + 1) if f"line-{n}" not in kept]
    assert missing == [], f"lost from the history: {missing}"
