"""What the simulator records beside the wire for the request log (``herdr_requests``): why a
pane's agent was released (Herdr's ``pane.agent_detected`` carries no cause) and which
pane's process sent a request (the connection's peer credentials)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from herdr_sim import Simulator, testing
from herdr_sim.wire.request_context import current_peer_pid
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import enter, wait_line
from tests.waits import wait_until

#: the simulator's own taps and seams: not a real Herdr's
pytestmark = pytest.mark.herdr_sim_only

REPORT = "herdr pane report-agent $HERDR_PANE_ID --source acme:bot --agent acme --state working"

Released = tuple[str, "str | None", str, str]


def released(sim: Simulator) -> list[Released]:
    """The simulator's release tap, as a list that fills up."""
    seen: list[Released] = []
    sim.release_taps.append(lambda *args: seen.append(args))
    return seen


def test_the_safety_net_is_its_own_cause(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    seen = released(sim)
    enter(herdr_client, pane, f"sh -c '{REPORT} && echo REPORTED'")  # exits without release
    wait_line(herdr_client, pane, "^REPORTED$")
    wait_until(lambda: bool(seen), timeout=10, what="the safety net")  # a detection poll away
    assert seen == [(pane, "acme", "safety-net", "")]


#: no periodic pass and no debounced check after output: only the test's own passes look
UNSEEN = {"detection_interval": 3600, "detection_debounce": 3600}


@pytest.mark.herdr(**UNSEEN)
def test_the_safety_net_holds_for_a_job_that_ended_between_two_detection_passes(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    """A silent job that reports and exits before any pass sees it in the foreground."""
    seen = released(sim)
    # bash's own `read -t` holds the foreground past the echo's check; then the job forks,
    # reports and exits without printing (so no output sends a pass while it runs), and
    # bash's own `echo` says it is over
    enter(herdr_client, pane, f"read -t 1 _; sh -c '{REPORT}' >/dev/null; echo JOB-ENDED")
    wait_line(herdr_client, pane, "^JOB-ENDED$")
    assert seen == []  # no pass ran since the job started
    testing.check_agent_exit(sim, pane)  # the next pass finds the shell at its prompt
    assert seen == [(pane, "acme", "safety-net", "")]
    assert testing.agent_record(sim, pane).authority is None


@pytest.mark.herdr(agent_detection=False)
def test_a_release_request_names_itself_and_a_process_exit_is_one(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    seen = released(sim)
    params = {"pane_id": pane, "source": "acme:bot", "agent": "acme"}
    herdr_client.call("pane.report_agent", **params, state="idle")
    answer = herdr_client.request("pane.release_agent", params)
    assert seen == [(pane, "acme", "request", answer["id"])]
    testing.set_detection(sim, pane, ("pi", "idle"), (None, "unknown"))
    assert seen[1:] == [(pane, "pi", "process-exit", "")]


def test_a_request_is_attributed_to_the_pane_whose_process_sent_it(
    sim: Simulator, herdr_client: HerdrClient, pane: str
) -> None:
    senders: dict[str, tuple[int | None, str | None]] = {}

    def tap(kind: str, line: dict[str, Any]) -> None:
        if kind == "request":
            pid = current_peer_pid.get()
            sender = sim.runtime.pane_of_process(pid) if pid is not None else None
            senders[str(line.get("method"))] = (pid, sender)

    sim.wire_taps.append(tap)
    herdr_client.call("pane.get", pane_id=pane)
    assert senders["pane.get"] == (os.getpid(), None)  # the test's own client: no pane's
    enter(herdr_client, pane, f"{REPORT} && echo REPORTED")
    wait_line(herdr_client, pane, "^REPORTED$")
    pid, sender = senders["pane.report_agent"]
    assert sender == pane and pid not in (None, os.getpid())
