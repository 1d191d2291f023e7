"""Agent lifecycle reports over the socket and the CLI (reference §5, §12 items 11–14, §14,
§17.4 and the 0.9.2 integration guide's resume layer)."""

from __future__ import annotations

from typing import Any

import pytest

from herdr_sim import Simulator, testing
from pytest_herdr.cli_runner import CliResult, HerdrCli
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import (
    Subscribe,
    cli_error,
    cli_quiet,
    detect,
    events_since,
    failure,
    get,
    invalid_request,
    record,
    take,
)

Raw = Any


# These tests drive detection through the seam; the live detection loop would see the
# pane's shell in the foreground and drop a seam-set agent.
pytestmark = [pytest.mark.herdr_sim_only, pytest.mark.herdr(agent_detection=False)]


def report(herdr_client: HerdrClient, pane: str, state: str = "working", **params: Any) -> None:
    """A custom ``pane.report_agent`` (source ``my-agent``, agent ``my-agent``)."""
    params.setdefault("source", "my-agent")
    params.setdefault("agent", "my-agent")
    herdr_client.call("pane.report_agent", pane_id=pane, state=state, **params)


def name(sim: Simulator, pane: str, value: str) -> None:
    """Give a pane an agent name (what ``agent.start``/``agent.rename`` will do)."""
    testing.set_agent_name(sim, pane, value)


# -- custom reports (§12 item 11) ---------------------------------------------------------------


def test_custom_report_makes_the_pane_an_agent(herdr_client: HerdrClient, root: str) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:hermes", agent="hermes", state="working"
    )
    info = get(herdr_client, root)
    assert (info["agent"], info["agent_status"]) == ("hermes", "working")


def test_report_emits_detected_then_status_changed(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    mark = len(sim.events)
    report(herdr_client, root)
    assert events_since(sim, mark) == [
        ("pane_agent_detected", {"type": "pane_agent_detected", "pane_id": root,
                                 "workspace_id": "w1", "agent": "my-agent"}),
        ("pane_agent_status_changed", {"type": "pane_agent_status_changed", "pane_id": root,
                                       "workspace_id": "w1", "agent_status": "working",
                                       "agent": "my-agent"}),
    ]  # fmt: skip


def test_same_status_again_emits_nothing(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root)
    mark = len(sim.events)
    report(herdr_client, root, message="still")
    assert events_since(sim, mark) == []


@pytest.mark.parametrize(
    ("reported", "shown"),
    [("claude-code", "claude"), ("Antigravity", "agy"), ("github-copilot", "copilot"),
     ("  docs-bot  ", "docs-bot"), ("cursor-agent", "cursor")],
)  # fmt: skip
def test_labels_are_normalised(
    herdr_client: HerdrClient, root: str, reported: str, shown: str
) -> None:
    report(herdr_client, root, source="custom:x", agent=reported)
    assert get(herdr_client, root)["agent"] == shown


def test_blank_agent_is_invalid_agent(herdr_client: HerdrClient, root: str) -> None:
    assert failure(
        herdr_client.call, "pane.report_agent", pane_id=root, source="s", agent=" ", state="idle"
    ) == (
        "invalid_agent",
        "agent label must not be empty",
    )


def test_unknown_pane_is_checked_before_the_label(herdr_client: HerdrClient, root: str) -> None:
    assert failure(
        herdr_client.call, "pane.report_agent", pane_id="w1:p9", source="s", agent="", state="idle"
    ) == (
        "pane_not_found",
        "pane w1:p9 not found",
    )


def test_done_is_not_a_reportable_state(raw: Raw, root: str) -> None:
    reply = raw("pane.report_agent", pane_id=root, source="s", agent="a", state="done")
    assert "unknown variant `done`" in invalid_request(reply)


def test_custom_sources_replace_each_other(herdr_client: HerdrClient, root: str) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:test", agent="pi", state="idle"
    )
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:wait", agent="pi", state="working"
    )
    assert get(herdr_client, root)["agent_status"] == "working"


def test_custom_session_refs_are_dropped(herdr_client: HerdrClient, root: str) -> None:
    report(herdr_client, root, agent_session_id="abc", agent_session_path="/tmp/s.jsonl")
    assert "agent_session" not in get(herdr_client, root)


# -- seq (§5.4) ---------------------------------------------------------------------------------


def test_stale_seq_is_ok_but_ignored(herdr_client: HerdrClient, root: str) -> None:
    report(herdr_client, root, "working", seq=5)
    report(herdr_client, root, "idle", seq=5)
    report(herdr_client, root, "blocked", seq=4)
    assert get(herdr_client, root)["agent_status"] == "working"
    report(herdr_client, root, "blocked", seq=6)
    assert get(herdr_client, root)["agent_status"] == "blocked"


def test_unsequenced_report_after_a_sequenced_one_is_ignored(
    herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "idle")
    report(herdr_client, root, "working", seq=1)
    report(herdr_client, root, "blocked")
    assert get(herdr_client, root)["agent_status"] == "working"


def test_seq_is_per_source(herdr_client: HerdrClient, root: str) -> None:
    report(herdr_client, root, "working", source="a", seq=10)
    report(herdr_client, root, "blocked", source="b", seq=1)
    assert get(herdr_client, root)["agent_status"] == "blocked"


# -- done / seen and rollups (§5.5, §12 item 13) --------------------------------------------------


@pytest.fixture
def background(herdr_client: HerdrClient, root: str) -> str:
    """A pane in a second tab; the first tab stays active."""
    tab = herdr_client.call("tab.create", workspace_id="w1", focus=False)
    pane: str = tab["root_pane"]["pane_id"]
    return pane


def test_completion_in_a_background_tab_is_done(herdr_client: HerdrClient, background: str) -> None:
    report(herdr_client, background, "working")
    report(herdr_client, background, "idle")
    assert get(herdr_client, background)["agent_status"] == "done"


def test_completion_in_the_active_tab_is_idle(herdr_client: HerdrClient, root: str) -> None:
    report(herdr_client, root, "working")
    report(herdr_client, root, "idle")
    assert get(herdr_client, root)["agent_status"] == "idle"


def test_first_idle_report_is_not_a_completion(herdr_client: HerdrClient, background: str) -> None:
    report(herdr_client, background, "idle")
    assert get(herdr_client, background)["agent_status"] == "idle"


def test_subscribing_to_done_when_already_done_emits_at_once(
    herdr_client: HerdrClient, background: str, subscribe: Subscribe
) -> None:
    report(herdr_client, background, "working")
    report(herdr_client, background, "idle")
    sub = subscribe(
        {"type": "pane.agent_status_changed", "pane_id": background, "agent_status": "done"}
    )
    [event] = take(sub, 1)
    assert event["event"] == "pane.agent_status_changed"
    assert event["data"]["agent_status"] == "done"


def test_background_completion_pushes_a_done_event(
    herdr_client: HerdrClient, background: str, subscribe: Subscribe
) -> None:
    report(herdr_client, background, "working")
    sub = subscribe({"type": "pane.agent_status_changed", "pane_id": background})
    report(herdr_client, background, "idle")
    [event] = take(sub, 1)
    assert event == {
        "event": "pane.agent_status_changed",
        "data": {"pane_id": background, "workspace_id": "w1", "agent_status": "done",
                 "agent": "my-agent"},
    }  # fmt: skip


def test_events_wait_sees_done(herdr_client: HerdrClient, background: str) -> None:
    report(herdr_client, background, "working")
    report(herdr_client, background, "idle")
    match = {"event": "pane_agent_status_changed", "pane_id": background, "agent_status": "done"}
    result = herdr_client.call("events.wait", match_event=match, timeout_ms=1000)
    assert result["event"]["data"]["agent_status"] == "done"


def test_focusing_the_pane_turns_done_into_idle(herdr_client: HerdrClient, background: str) -> None:
    report(herdr_client, background, "working")
    report(herdr_client, background, "idle")
    herdr_client.call("pane.focus", pane_id=background)
    assert get(herdr_client, background)["agent_status"] == "idle"


def test_focusing_the_tab_turns_done_into_idle(herdr_client: HerdrClient, background: str) -> None:
    report(herdr_client, background, "working")
    report(herdr_client, background, "idle")
    herdr_client.call("tab.focus", tab_id=get(herdr_client, background)["tab_id"])
    assert get(herdr_client, background)["agent_status"] == "idle"


def test_a_new_agent_process_becoming_ready_is_not_done(
    sim: Simulator, herdr_client: HerdrClient, background: str
) -> None:
    # Herdr's process acquisition: detected with a blank screen, then idle — readiness
    detect(sim, background, "claude", "unknown")
    detect(sim, background, "claude", "idle")
    assert get(herdr_client, background)["agent_status"] == "idle"
    # only the first idle is exempt: the next completion in the background tab is done
    detect(sim, background, "claude", "working")
    detect(sim, background, "claude", "idle")
    assert get(herdr_client, background)["agent_status"] == "done"


def test_an_agent_replacing_one_that_exited_is_not_exempt(
    sim: Simulator, herdr_client: HerdrClient, background: str
) -> None:
    detect(sim, background, "codex", "working")
    detect(sim, background, "claude", "unknown")  # codex exits, claude appears at once
    detect(sim, background, "claude", "idle")
    assert get(herdr_client, background)["agent_status"] == "done"


def test_rollups_pick_the_highest_priority(
    herdr_client: HerdrClient, root: str, background: str
) -> None:
    report(herdr_client, root, "working")
    report(herdr_client, background, "working")
    report(herdr_client, background, "idle")
    tabs = {
        tab["tab_id"]: tab["agent_status"]
        for tab in herdr_client.call("tab.list", workspace_id="w1")["tabs"]
    }
    assert tabs == {"w1:t1": "working", "w1:t2": "done"}
    assert (
        herdr_client.call("workspace.get", workspace_id="w1")["workspace"]["agent_status"] == "done"
    )
    report(herdr_client, root, "blocked")
    assert (
        herdr_client.call("workspace.get", workspace_id="w1")["workspace"]["agent_status"]
        == "blocked"
    )


# -- release and clear ----------------------------------------------------------------------------


def test_release_clears_the_agent_with_an_event(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "working", seq=1)
    mark = len(sim.events)
    herdr_client.call(
        "pane.release_agent", pane_id=root, source="my-agent", agent="my-agent", seq=2
    )
    info = get(herdr_client, root)
    assert "agent" not in info
    assert info["agent_status"] == "unknown"
    detected = [data for kind, data in events_since(sim, mark) if kind == "pane_agent_detected"]
    assert detected == [
        {"type": "pane_agent_detected", "pane_id": root, "workspace_id": "w1",
         "agent": "my-agent", "released": True, "final_status": "unknown"}
    ]  # fmt: skip


def test_release_from_another_source_is_ignored(herdr_client: HerdrClient, root: str) -> None:
    report(herdr_client, root, "working")
    herdr_client.call("pane.release_agent", pane_id=root, source="other", agent="my-agent")
    assert get(herdr_client, root)["agent"] == "my-agent"


def test_release_clears_the_agent_name_with_pane_updated(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "idle")
    name(sim, root, "worker")
    mark = len(sim.events)
    herdr_client.call("pane.release_agent", pane_id=root, source="my-agent", agent="my-agent")
    assert record(sim, root).name is None
    assert [kind for kind, _ in events_since(sim, mark)][:2] == [
        "pane_updated",
        "pane_agent_detected",
    ]


def test_clear_authority_makes_a_custom_agent_pane_plain(
    herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "working")
    herdr_client.call("pane.clear_agent_authority", pane_id=root, source="my-agent")
    info = get(herdr_client, root)
    assert ("agent" in info, info["agent_status"]) == (False, "unknown")


def test_unsequenced_clear_after_sequenced_reports_is_ignored(
    herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "working", seq=1)
    herdr_client.call("pane.clear_agent_authority", pane_id=root)
    assert get(herdr_client, root)["agent_status"] == "working"
    herdr_client.call("pane.clear_agent_authority", pane_id=root, seq=2)
    assert get(herdr_client, root)["agent_status"] == "unknown"


def test_clear_authority_with_another_source_is_ignored(
    herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "working")
    herdr_client.call("pane.clear_agent_authority", pane_id=root, source="other")
    assert get(herdr_client, root)["agent_status"] == "working"


# -- official sources (§5.3) -----------------------------------------------------------------------

SESSION = "/tmp/pi-session.jsonl"


def pi_session(herdr_client: HerdrClient, pane: str, seq: int = 1) -> None:
    herdr_client.call(
        "pane.report_agent_session",
        pane_id=pane,
        source="herdr:pi",
        agent="pi",
        agent_session_path=SESSION,
        session_start_source="startup",
        seq=seq,
    )


def test_full_lifecycle_report_needs_the_process_and_the_session(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    detect(sim, root, "pi", "idle")
    pi_session(herdr_client, root)
    herdr_client.call(
        "pane.report_agent",
        pane_id=root,
        source="herdr:pi",
        agent="pi",
        state="working",
        agent_session_path=SESSION,
        seq=2,
    )
    info = get(herdr_client, root)
    assert (info["agent"], info["agent_status"]) == ("pi", "working")
    assert info["agent_session"] == {"source": "herdr:pi", "agent": "pi", "kind": "path",
                                     "value": SESSION}  # fmt: skip
    [agent] = herdr_client.call("session.snapshot")["snapshot"]["agents"]
    assert agent["screen_detection_skipped"] is True


def test_full_lifecycle_report_without_the_process_is_ignored(
    herdr_client: HerdrClient, root: str
) -> None:
    pi_session(herdr_client, root)
    herdr_client.call(
        "pane.report_agent",
        pane_id=root,
        source="herdr:pi",
        agent="pi",
        state="working",
        agent_session_path=SESSION,
        seq=2,
    )
    info = get(herdr_client, root)
    assert ("agent" in info, info["agent_status"]) == (False, "unknown")


def test_full_lifecycle_report_before_the_process_is_applied_once_it_appears(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    # Herdr parks such a report and replays it when the process is detected.
    pi_session(herdr_client, root)
    herdr_client.call(
        "pane.report_agent",
        pane_id=root,
        source="herdr:pi",
        agent="pi",
        state="working",
        agent_session_path=SESSION,
        seq=2,
    )
    assert get(herdr_client, root)["agent_status"] == "unknown"
    detect(sim, root, "pi", "idle")
    info = get(herdr_client, root)
    assert (info["agent"], info["agent_status"]) == ("pi", "working")


def test_full_lifecycle_report_before_its_session_is_applied_once_anchored(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    detect(sim, root, "pi", "idle")
    herdr_client.call(
        "pane.report_agent",
        pane_id=root,
        source="herdr:pi",
        agent="pi",
        state="working",
        agent_session_path=SESSION,
        seq=2,
    )
    assert get(herdr_client, root)["agent_status"] == "idle"  # not anchored yet: parked
    pi_session(herdr_client, root, seq=3)
    assert get(herdr_client, root)["agent_status"] == "working"


def test_a_parked_report_goes_with_the_process(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    detect(sim, root, "pi", "idle")
    herdr_client.call(
        "pane.report_agent",
        pane_id=root,
        source="herdr:pi",
        agent="pi",
        state="working",
        agent_session_path=SESSION,
        seq=2,
    )
    detect(sim, root, None)  # pi exits before its session report
    detect(sim, root, "pi", "idle")
    pi_session(herdr_client, root, seq=3)
    assert get(herdr_client, root)["agent_status"] == "idle"


def test_clear_authority_restores_the_screen_status(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    detect(sim, root, "pi", "idle")
    pi_session(herdr_client, root)
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="herdr:pi", agent="pi", state="working", seq=2
    )
    herdr_client.call("pane.clear_agent_authority", pane_id=root, source="herdr:pi", seq=3)
    info = get(herdr_client, root)
    assert (info["agent"], info["agent_status"]) == ("pi", "idle")


def test_official_release_is_ignored_until_the_process_exits(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    detect(sim, root, "pi", "idle")
    pi_session(herdr_client, root)
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="herdr:pi", agent="pi", state="working", seq=2
    )
    herdr_client.call("pane.release_agent", pane_id=root, source="herdr:pi", agent="pi", seq=3)
    assert get(herdr_client, root)["agent_status"] == "working"
    detect(sim, root, None)
    info = get(herdr_client, root)
    assert ("agent" in info, "agent_session" in info, info["agent_status"]) == (
        False,
        False,
        "unknown",
    )


def test_reserved_native_report_records_only_the_session(
    herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call("pane.report_agent", pane_id=root, source="herdr:claude", agent="claude",
        state="working", agent_session_id="c-1")  # fmt: skip
    info = get(herdr_client, root)
    assert "agent" not in info
    assert info["agent_status"] == "unknown"
    assert info["agent_session"] == {"source": "herdr:claude", "agent": "claude", "kind": "id",
                                     "value": "c-1"}  # fmt: skip


def test_session_identity_only_report_agent_is_ignored(
    herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call("pane.report_agent", pane_id=root, source="herdr:hermes", agent="hermes",
        state="working", agent_session_id="h-1")  # fmt: skip
    info = get(herdr_client, root)
    assert ("agent" in info, "agent_session" in info) == (False, False)


def test_same_owner_session_replacement_needs_an_allowed_start(
    herdr_client: HerdrClient, root: str
) -> None:
    def claude(session: str, start: str) -> None:
        herdr_client.call(
            "pane.report_agent_session",
            pane_id=root,
            source="herdr:claude",
            agent="claude",
            agent_session_id=session,
            session_start_source=start,
        )

    claude("a", "startup")
    claude("b", "startup")
    assert get(herdr_client, root)["agent_session"]["value"] == "a"
    claude("c", "resume")
    assert get(herdr_client, root)["agent_session"]["value"] == "c"


# -- snapshot agents and state_change_seq ---------------------------------------------------------


def test_snapshot_lists_only_agent_panes(
    herdr_client: HerdrClient, root: str, background: str
) -> None:
    report(herdr_client, background, "working")
    agents = herdr_client.call("session.snapshot")["snapshot"]["agents"]
    assert [(agent["pane_id"], agent["agent"], agent["agent_status"]) for agent in agents] == [
        (background, "my-agent", "working")
    ]


def test_state_change_seq_bumps_on_state_changes_only(herdr_client: HerdrClient, root: str) -> None:
    def seq() -> int:
        [agent] = herdr_client.call("session.snapshot")["snapshot"]["agents"]
        value: int = agent["state_change_seq"]
        return value

    report(herdr_client, root, "working")
    first = seq()
    report(herdr_client, root, "working", message="same state")
    assert seq() == first
    report(herdr_client, root, "idle")
    assert seq() == first + 1


# -- resume commands (0.9.2 guide) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["my-agent", "--resume", "it's"], "resume_argv must not contain apostrophes"),
        (["my-agent", "a\tb"], "resume_argv must not contain control characters"),
        (["/usr/bin/my-agent"], "resume_argv must start with a bare command name on PATH"),
        (["./my-agent"], "resume_argv must start with a bare command name on PATH"),
        (["my-agent", *["x"] * 64], "resume_argv must have at most 64 arguments"),
        (["my-agent", "x" * 8200], "resume_argv must be at most 8192 bytes"),
    ],
)
def test_invalid_resume_argv_rejects_the_report(
    herdr_client: HerdrClient, root: str, argv: list[str], message: str
) -> None:
    code = failure(
        herdr_client.call,
        "pane.report_agent",
        pane_id=root,
        source="my-agent",
        agent="my-agent",
        state="working",
        resume_argv=argv,
    )
    assert code == ("invalid_resume_argv", message)
    assert "agent" not in get(herdr_client, root)


def test_resume_limits_are_inclusive(sim: Simulator, herdr_client: HerdrClient, root: str) -> None:
    argv = ["my-agent", *["x"] * 63]
    report(herdr_client, root, resume_argv=argv)
    assert record(sim, root).resume() == argv


def test_resume_argv_is_stored_with_the_report(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "idle", seq=2, resume_argv=["my-agent", "--resume", "s1"])
    assert record(sim, root).resume() == ["my-agent", "--resume", "s1"]


def test_session_report_resume_needs_the_source_to_hold_the_pane(
    herdr_client: HerdrClient, root: str
) -> None:
    code, _ = failure(
        herdr_client.call,
        "pane.report_agent_session",
        pane_id=root,
        source="my-agent",
        agent="my-agent",
        resume_argv=["my-agent", "--resume", "s1"],
    )
    assert code == "resume_not_accepted"


def test_session_report_updates_the_resume_command(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "idle", resume_argv=["my-agent", "--resume", "s1"])
    herdr_client.call(
        "pane.report_agent_session",
        pane_id=root,
        source="my-agent",
        agent="my-agent",
        resume_argv=["my-agent", "--resume", "s2"],
    )
    assert record(sim, root).resume() == ["my-agent", "--resume", "s2"]


def test_resume_from_another_holder_is_not_accepted(herdr_client: HerdrClient, root: str) -> None:
    report(herdr_client, root, source="first")
    code, _ = failure(herdr_client.call, "pane.report_agent_session", pane_id=root, source="second",
                      agent="my-agent", resume_argv=["my-agent"])  # fmt: skip
    assert code == "resume_not_accepted"


def test_herdr_prefix_sources_cannot_report_resume_commands(
    herdr_client: HerdrClient, root: str
) -> None:
    code, _ = failure(herdr_client.call, "pane.report_agent", pane_id=root, source="herdr:mine",
                      agent="my-agent", state="idle", resume_argv=["my-agent"])  # fmt: skip
    assert code == "resume_not_accepted"


def test_release_clears_name_state_and_resume_at_once(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "idle", seq=1, resume_argv=["my-agent", "--resume", "s1"])
    name(sim, root, "worker")
    herdr_client.call(
        "pane.release_agent", pane_id=root, source="my-agent", agent="my-agent", seq=2
    )
    rec = record(sim, root)
    assert (rec.name, rec.resume(), rec.resume_argv, rec.authority) == (None, None, None, None)
    assert get(herdr_client, root)["agent_status"] == "unknown"


# -- through the CLI ------------------------------------------------------------------------------


def cli(herdr_cli: HerdrCli, *argv: str) -> CliResult:
    return herdr_cli("pane", *argv)


def test_cli_reports_state_resume_and_release(
    sim: Simulator, herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    cli_quiet(cli(herdr_cli, "report-agent", root, "--source", "my-agent", "--agent", "my-agent",
                  "--state", "working", "--seq", "1"))  # fmt: skip
    assert get(herdr_client, root)["agent_status"] == "working"
    cli_quiet(cli(herdr_cli, "report-agent-session", root, "--source", "my-agent", "--agent",
                  "my-agent", "--seq", "2", "--", "my-agent", "--resume", "s1"))  # fmt: skip
    assert record(sim, root).resume() == ["my-agent", "--resume", "s1"]
    cli_quiet(cli(herdr_cli, "release-agent", root, "--source", "my-agent", "--agent", "my-agent",
                  "--seq", "3"))  # fmt: skip
    assert "agent" not in get(herdr_client, root)
    assert record(sim, root).resume() is None


def test_cli_invalid_resume_command_fails_and_applies_nothing(
    herdr_client: HerdrClient, herdr_cli: HerdrCli, root: str
) -> None:
    error = cli_error(cli(herdr_cli, "report-agent", root, "--source", "my-agent", "--agent",
                          "my-agent", "--state", "idle", "--", "my-agent", "it's"))  # fmt: skip
    assert error["error"] == {
        "code": "invalid_resume_argv",
        "message": "resume_argv must not contain apostrophes",
    }
    assert "agent" not in get(herdr_client, root)


def test_metadata_scoped_to_a_source_shows_only_while_it_holds_the_pane(
    herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call(
        "pane.report_metadata",
        pane_id=root,
        source="custom:meta",
        applies_to_source="custom:holder",
        title="Scoped title",
    )
    assert "title" not in herdr_client.call("pane.get", pane_id=root)["pane"]
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:holder", agent="bot", state="working"
    )
    assert herdr_client.call("pane.get", pane_id=root)["pane"]["title"] == "Scoped title"
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:other", agent="bot", state="idle"
    )
    assert "title" not in herdr_client.call("pane.get", pane_id=root)["pane"]
