"""my-agent in a simulated Herdr: its env, its reports and release (the request log), and
its session coming back after a restart."""

from __future__ import annotations

import pytest

from pytest_herdr import wait_until

SOURCE = "my-agent"


def start(pane, herdr_wait):
    """Type `my-agent` at the pane's shell; wait until Herdr has its first report."""
    pane.run("my-agent")
    return herdr_wait.for_pane_status(pane.pane_id, "idle")


def last_report(herdr_requests, pane):
    """The last report my-agent made about ``pane``, as Herdr received it."""
    return herdr_requests.reports(pane)[-1].params


@pytest.mark.herdr_pane_env(MY_AGENT_MODEL="offline-test")
def test_the_agent_gets_its_env(herdr_pane, herdr_wait, herdr_requests):
    start(herdr_pane, herdr_wait)
    herdr_pane.wait_for(regex=r"^my-agent \(offline-test\)")
    # the resume command keeps the model, so a restored session runs like this one
    resume_argv = last_report(herdr_requests, herdr_pane)["resume_argv"]
    assert resume_argv[-2:] == ["--model", "offline-test"]


def test_a_turn_is_reported_and_the_exit_releases(
    herdr_pane, herdr_wait, herdr_events, herdr_requests
):
    start(herdr_pane, herdr_wait)
    mark = herdr_events.mark()
    herdr_pane.send("fix the bug", "Enter")
    herdr_events.wait_for(  # the turn's idle, not the one before it
        "pane.agent_status_changed", lambda data: data["agent_status"] == "idle", since=mark
    )
    herdr_pane.send("/exit", "Enter")
    herdr_requests.wait_released(herdr_pane)
    herdr_requests.assert_released(herdr_pane, source=SOURCE)
    herdr_requests.assert_reported(herdr_pane, state="working", source=SOURCE)
    herdr_requests.assert_reported(herdr_pane, state="idle", source=SOURCE, seq_increasing=True)
    assert last_report(herdr_requests, herdr_pane)["state"] == "idle"  # not left working


def test_the_session_comes_back_after_a_restart(
    herdr_server, herdr_pane, herdr_wait, herdr_requests
):
    start(herdr_pane, herdr_wait)
    before = herdr_requests.reports(herdr_pane)
    herdr_server.restart()  # Herdr stops with my-agent running, restores the pane and
    # types the reported resume command into it: `my-agent --resume <session> --model …`
    again = wait_until(lambda: herdr_requests.reports(herdr_pane)[len(before) :], timeout=10)
    session = before[-1].params["agent_session_id"]
    assert again[0].params["agent_session_id"] == session  # the same session
    assert again[0].params["seq"] > before[-1].params["seq"]  # seq grows across the restart
    herdr_pane.wait_for(regex=f"^my-agent .*, session {session}$")
    herdr_wait.for_pane_status(herdr_pane.pane_id, "idle")
    assert herdr_pane.info["agent"] == "my-agent"
