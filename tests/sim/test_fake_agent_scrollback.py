"""A fake agent started below earlier output keeps that output in the pane's history.

Every frame of a fake starts with ``ESC [ H ESC [ 2 J``, which erases the screen without
saving it (as Herdr's terminal, libghostty, does unless the last row is a marked shell
prompt: ``Terminal.zig`` ``eraseDisplay`` ``.complete``). The real agents draw inline below
the shell's output, so a client that archives a pane's history still finds all of it; the
fakes first scroll the screen into the scrollback to match.
"""

from __future__ import annotations

import pytest

from herdr_sim.fake_agent import LAUNCHER_KINDS
from pytest_herdr import Pane, WireClient
from tests.waits import wait_until

#: what each kind shows once its screen is drawn
READY = {"pi": "─" * 20, "claude": "❯", "codex": "›", "opencode": "╹▀▀▀"}


@pytest.mark.parametrize("kind", LAUNCHER_KINDS)
def test_earlier_output_stays_in_the_history(
    herdr_client: WireClient, herdr_pane: Pane, kind: str
) -> None:
    pane = herdr_pane.pane_id
    herdr_client.call("pane.send_input", pane_id=pane, text="seq -f 'line-%g' 1 60", keys=["Enter"])

    def visible() -> str:
        read = herdr_client.call("pane.read", pane_id=pane, source="visible")["read"]
        return str(read["text"])

    wait_until(lambda: "line-60" in visible(), what="the 60 lines")
    herdr_client.call("pane.send_input", pane_id=pane, text=kind, keys=["Enter"])
    wait_until(lambda: READY[kind] in visible(), what=f"the fake {kind}'s screen")
    history = herdr_client.call("pane.read", pane_id=pane, source="recent", lines=1000)["read"]
    lines = [line.strip() for line in str(history["text"]).splitlines()]
    missing = [n for n in range(1, 61) if f"line-{n}" not in lines]
    assert missing == [], f"lost from the history: {missing}"
