"""Each fake agent treats the pane it starts in as its real agent does.

The real pi, Claude Code and Codex were observed in the simulator (pane with 60 lines of
earlier output; ``tests/real_agents/test_agent_screens.py``, which keeps
``tests/real_agents/screens/<kind>.json`` true): each draws on the alternate screen, so the
earlier output stays in the pane's history and comes back when it exits; the input box sits
at a fixed row from the screen's bottom; after exit pi's last frame stays in the history
and Claude Code's and Codex's does not. The fake of each kind, observed the same way, must
give the same record.
"""

from __future__ import annotations

import pytest

from pytest_herdr import Pane, WireClient
from pytest_herdr.agents import start_agent
from pytest_herdr.backends import HerdrServer
from tests.agent_screens import READY, fill, observe, recorded, terminal_model
from tests.waits import wait_until


@pytest.mark.parametrize("kind", ["pi", "claude", "codex"])
def test_the_fake_agents_screen_matches_the_real_agents(
    herdr_server: HerdrServer, herdr_client: WireClient, herdr_pane: Pane, kind: str
) -> None:
    fill(herdr_pane)
    start_agent(herdr_client, kind, herdr_pane, f"fake-{kind}", [], 20.0)
    wait_until(lambda: READY[kind] in herdr_pane.read("visible"), 20, what="the fake's screen")
    seen = observe(herdr_pane, kind, terminal_model(herdr_server, herdr_pane))
    assert seen == recorded(kind)
