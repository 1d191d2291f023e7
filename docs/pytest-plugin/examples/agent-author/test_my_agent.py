"""my-agent in a simulated Herdr: its env, its reports and release (the request log), and
its session coming back after a restart."""

from __future__ import annotations

import pytest

SOURCE = "my-agent"


def start(pane, herdr_wait, command="my-agent"):
    pane.run(command)
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


def test_a_turn_is_reported_and_the_exit_releases(herdr_pane, herdr_wait, herdr_requests):
    start(herdr_pane, herdr_wait)
    herdr_pane.send("fix the bug", "Enter")
    herdr_pane.wait_for(regex="^done: fix the bug")
    herdr_wait.for_pane_status(herdr_pane.pane_id, "idle")
    herdr_pane.send("/exit", "Enter")
    herdr_requests.wait_released(herdr_pane)
    herdr_requests.assert_released(herdr_pane, source=SOURCE)
    herdr_requests.assert_reported(herdr_pane, state="working", source=SOURCE)
    herdr_requests.assert_reported(herdr_pane, state="idle", source=SOURCE, seq_increasing=True)
    states = [r.params["state"] for r in herdr_requests.reports(herdr_pane)]
    assert states[-1] == "idle"


def test_the_session_comes_back_after_a_restart(
    herdr_server, herdr_pane, herdr_wait, herdr_requests, herdr_events
):
    start(herdr_pane, herdr_wait)
    before = last_report(herdr_requests, herdr_pane)
    mark = herdr_events.mark()
    herdr_server.restart()  # Herdr stops with my-agent running, restores the pane and
    # types the reported resume command into it: `my-agent --resume <session> --model …`
    herdr_wait.for_pane_status(herdr_pane.pane_id, "idle")
    assert herdr_events.statuses(herdr_pane.pane_id, since=mark)[-1] == "idle"
    herdr_pane.wait_for(regex=f"^my-agent .*, session {before['agent_session_id']}$")
    after = last_report(herdr_requests, herdr_pane)
    assert after["agent_session_id"] == before["agent_session_id"]  # the same session
    assert after["seq"] > before["seq"]  # seq grows across the restart
