"""How an agent author tests their own Herdr integration (docs/pytest-plugin/usage.md).

Here the "agent" is a shell script that reports like a third-party integration should;
yours would be your agent's real command.
"""

from __future__ import annotations

AGENT = r"""
if [ "$HERDR_ENV" = 1 ]; then
  "$HERDR_BIN_PATH" pane report-agent "$HERDR_PANE_ID" --source my-agent \
    --agent my-agent --state working --seq 1
  "$HERDR_BIN_PATH" pane report-agent "$HERDR_PANE_ID" --source my-agent \
    --agent my-agent --state idle --seq 2
fi
read -r _  # like a real agent, wait for the user (an agent that exits is cleared by Herdr)
"""


def test_reports_reach_herdr(herdr_pane, herdr_events, tmp_path):
    script = tmp_path / "agent.sh"
    script.write_text(AGENT)
    herdr_pane.run(f"sh {script}")
    herdr_events.wait_for(
        "pane.agent_status_changed",
        lambda data: data["pane_id"] == herdr_pane.pane_id and data["agent_status"] == "working",
    )
    settled = herdr_events.wait_for(
        "pane.agent_status_changed", lambda data: data.get("agent_status") == "idle"
    )
    assert settled.data["agent"] == "my-agent"
    assert herdr_pane.info["agent"] == "my-agent"
