"""The 0.9.2 guide's safety net: a third-party agent that exits without releasing is
cleared once its pane is back at an idle shell prompt, within 2 s."""

from __future__ import annotations

import pytest

from herdr_sim import Simulator, testing
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import enter, wait_line
from tests.waits import wait_until

#: the simulator's own seams or settings (herdr_sim.testing): not a real Herdr's
pytestmark = pytest.mark.herdr_sim_only

REPORT = (
    "herdr pane report-agent $HERDR_PANE_ID --source acme:bot --agent acme --state {state} "
    "--seq {seq}"
)


def agent_of(herdr_client: HerdrClient, pane: str) -> str | None:
    """The pane's effective agent label."""
    label: str | None = herdr_client.call("pane.get", pane_id=pane)["pane"].get("agent")
    return label


def test_agent_job_that_ends_without_release_is_cleared(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    # the "agent" is a job that reports (through the herdr CLI it runs) and then waits
    report = REPORT.format(state="working", seq=1)
    enter(herdr_client, pane, f"sh -c '{report} && echo REPORTED && read line'")
    wait_line(herdr_client, pane, "^REPORTED$")
    assert agent_of(herdr_client, pane) == "acme"
    assert herdr_client.call("pane.get", pane_id=pane)["pane"]["agent_status"] == "working"
    mark = len(sim.events)
    enter(herdr_client, pane, "")  # the job reads its line and exits, without releasing
    wait_until(lambda: agent_of(herdr_client, pane) is None, timeout=2, what="the safety net")
    pane_info = herdr_client.call("pane.get", pane_id=pane)["pane"]
    assert pane_info["agent_status"] == "unknown"
    released = [e["data"] for e in sim.events[mark:] if e["event"] == "pane_agent_detected"]
    assert released and released[-1].get("released") is True
    assert released[-1]["agent"] == "acme"


def test_report_typed_at_the_prompt_is_not_an_exiting_agent(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    # `herdr …` typed at the prompt is the user speaking for the pane, not an agent job;
    # the job that follows it (sleep) ending must not clear the report.
    enter(herdr_client, pane, REPORT.format(state="idle", seq=1) + " && sleep 0.6 && echo DONE")
    wait_line(herdr_client, pane, "^DONE$")
    testing.check_agent_exit(sim, pane)
    assert agent_of(herdr_client, pane) == "acme"


def test_official_sources_are_left_to_process_detection(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    # a reserved native source only records a session; nothing to clear
    enter(
        herdr_client,
        pane,
        "sh -c 'herdr pane report-agent-session $HERDR_PANE_ID --source herdr:claude "
        "--agent claude --agent-session-id s1 --seq 1 && echo REPORTED'",
    )
    wait_line(herdr_client, pane, "^REPORTED$")
    enter(herdr_client, pane, "echo MARK")
    wait_line(herdr_client, pane, "^MARK$")
    assert herdr_client.call("pane.get", pane_id=pane)["pane"]["agent_session"]["value"] == "s1"
