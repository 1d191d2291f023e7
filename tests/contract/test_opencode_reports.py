"""OpenCode's own report rules (reference §5.4 "cross-talk", §11.4; Herdr's
``src/terminal/state.rs``: ``opencode_cross_talk``, ``is_unsequenced_opencode_selection`` and
the tests ``opencode_tui_selection_reanchors_full_lifecycle_authority``,
``opencode_tui_selection_anchors_after_process_detection``,
``opencode_server_new_does_not_replace_existing_session_ref``).

OpenCode's server plugin reports with ``seq``; an OpenCode server can carry several sessions
(an attached client), so a report for another session than the pane's, while the opencode
process is there, is cross-talk and ignored outright. Its TUI plugin reports the session the
user selects, unsequenced, with ``session_start_source: "select"``: that re-anchors the pane
and drops the authority of the previous session. Detection is driven through the seam.
"""

from __future__ import annotations

from typing import Any

import pytest

from herdr_sim import Simulator
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import detect, get, record

pytestmark = [pytest.mark.herdr_sim_only, pytest.mark.herdr(agent_detection=False)]

SOURCE = {"source": "herdr:opencode", "agent": "opencode"}


def select(herdr_client: HerdrClient, pane: str, session: str, **params: Any) -> None:
    """The TUI plugin's selection report (unsequenced unless ``seq`` is given)."""
    herdr_client.call(
        "pane.report_agent_session",
        pane_id=pane,
        agent_session_id=session,
        session_start_source="select",
        **SOURCE,
        **params,
    )


def report(herdr_client: HerdrClient, pane: str, state: str, session: str, seq: int) -> None:
    """The server plugin's lifecycle report."""
    herdr_client.call(
        "pane.report_agent",
        pane_id=pane,
        state=state,
        agent_session_id=session,
        seq=seq,
        **SOURCE,
    )


def shown(herdr_client: HerdrClient, pane: str) -> tuple[str | None, str, str | None]:
    """(agent, status, session id) of the pane."""
    info = get(herdr_client, pane)
    session = info.get("agent_session")
    return info.get("agent"), info["agent_status"], None if session is None else session["value"]


@pytest.fixture
def anchored(sim: Simulator, herdr_client: HerdrClient, root: str) -> str:
    """opencode detected, anchored to session ``ses-a`` and working by its report (seq 20)."""
    detect(sim, root, "opencode")
    select(herdr_client, root, "ses-a")
    report(herdr_client, root, "working", "ses-a", 20)
    assert shown(herdr_client, root) == ("opencode", "working", "ses-a")
    return root


# -- cross-talk ---------------------------------------------------------------------------------


def test_report_for_another_session_is_ignored(herdr_client: HerdrClient, anchored: str) -> None:
    report(herdr_client, anchored, "blocked", "ses-other", 21)
    assert shown(herdr_client, anchored) == ("opencode", "working", "ses-a")


def test_cross_talk_is_not_parked(sim: Simulator, herdr_client: HerdrClient, anchored: str) -> None:
    report(herdr_client, anchored, "blocked", "ses-other", 21)
    assert record(sim, anchored).parked is None
    # not replayed when that session is selected later: the screen's idle shows, not blocked
    select(herdr_client, anchored, "ses-other")
    assert shown(herdr_client, anchored) == ("opencode", "idle", "ses-other")


def test_cross_talk_does_not_count_its_seq(
    sim: Simulator, herdr_client: HerdrClient, anchored: str
) -> None:
    report(herdr_client, anchored, "blocked", "ses-other", 21)
    assert record(sim, anchored).seqs["herdr:opencode"] == 20
    report(herdr_client, anchored, "idle", "ses-a", 21)
    assert shown(herdr_client, anchored) == ("opencode", "idle", "ses-a")


def test_report_for_another_session_without_the_process_is_parked(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    # cross-talk needs the opencode process: without it the report waits for its anchor
    select(herdr_client, root, "ses-a")
    report(herdr_client, root, "working", "ses-other", 5)
    parked = record(sim, root).parked
    assert parked is not None
    assert parked.ref is not None
    assert parked.ref.value == "ses-other"


# -- the TUI selection --------------------------------------------------------------------------


def test_selection_reanchors_the_pane(herdr_client: HerdrClient, anchored: str) -> None:
    select(herdr_client, anchored, "ses-b")
    assert shown(herdr_client, anchored)[2] == "ses-b"


def test_selection_drops_the_previous_sessions_authority(
    sim: Simulator, herdr_client: HerdrClient, anchored: str
) -> None:
    select(herdr_client, anchored, "ses-b")
    rec = record(sim, anchored)
    assert rec.authority is None
    # the state falls back to what the screen shows (idle) until ses-b reports
    assert shown(herdr_client, anchored) == ("opencode", "idle", "ses-b")
    assert "screen_detection_skipped" not in get(herdr_client, anchored)


def test_unsequenced_selection_ignores_the_seq_rule(
    sim: Simulator, herdr_client: HerdrClient, anchored: str
) -> None:
    # the source has sent sequenced reports; an unsequenced selection still applies and
    # leaves the high-water mark alone
    select(herdr_client, anchored, "ses-b")
    assert shown(herdr_client, anchored)[2] == "ses-b"
    assert record(sim, anchored).seqs["herdr:opencode"] == 20


def test_selected_session_regains_authority(herdr_client: HerdrClient, anchored: str) -> None:
    select(herdr_client, anchored, "ses-b")
    report(herdr_client, anchored, "blocked", "ses-b", 21)
    assert shown(herdr_client, anchored) == ("opencode", "blocked", "ses-b")


def test_previous_session_is_cross_talk_after_a_selection(
    herdr_client: HerdrClient, anchored: str
) -> None:
    select(herdr_client, anchored, "ses-b")
    report(herdr_client, anchored, "working", "ses-b", 21)
    report(herdr_client, anchored, "idle", "ses-a", 22)
    assert shown(herdr_client, anchored) == ("opencode", "working", "ses-b")


def test_server_new_or_resume_does_not_replace_the_selection(
    herdr_client: HerdrClient, anchored: str
) -> None:
    for seq, start in ((21, "new"), (22, "resume"), (23, "startup")):
        herdr_client.call(
            "pane.report_agent_session",
            pane_id=anchored,
            agent_session_id="ses-attached-client",
            session_start_source=start,
            seq=seq,
            **SOURCE,
        )
    assert shown(herdr_client, anchored) == ("opencode", "working", "ses-a")


def test_sequenced_selection_follows_the_seq_rule(herdr_client: HerdrClient, anchored: str) -> None:
    select(herdr_client, anchored, "ses-b", seq=20)  # not above the last seq: ignored
    assert shown(herdr_client, anchored)[2] == "ses-a"
    select(herdr_client, anchored, "ses-b", seq=21)
    assert shown(herdr_client, anchored)[2] == "ses-b"


def test_selection_before_the_process_waits_for_it(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    select(herdr_client, root, "ses-startup")
    assert "agent_session" not in get(herdr_client, root)
    detect(sim, root, "opencode")
    assert shown(herdr_client, root) == ("opencode", "idle", "ses-startup")
    assert record(sim, root).selection is None


def test_report_parked_for_the_waiting_selection_applies_with_it(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    # the fake opencode's startup: selection and first report before detection sees it
    select(herdr_client, root, "ses-startup")
    report(herdr_client, root, "working", "ses-startup", 5)
    detect(sim, root, "opencode")
    assert shown(herdr_client, root) == ("opencode", "working", "ses-startup")


def test_waiting_selection_drops_a_report_parked_before_it(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "working", "ses-old", 5)
    select(herdr_client, root, "ses-new")
    assert record(sim, root).parked is None
    detect(sim, root, "opencode")
    assert shown(herdr_client, root) == ("opencode", "idle", "ses-new")
