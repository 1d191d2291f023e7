"""Session rules of the full-lifecycle official sources (reference §5.3–§5.4; Herdr's
``src/terminal/state.rs``: ``set_agent_session_ref_for_session_start``,
``stale_full_lifecycle_hook_sessions``, ``suppressed_full_lifecycle_hook_reports`` and
``reconcile_agent_name_owner``, and the unit tests
``pi_session_replacement_reports_reanchor_full_lifecycle_authority``,
``pi_resume_reactivates_a_previously_stale_session``,
``pi_non_replacement_reports_preserve_full_lifecycle_authority``,
``omp_resume_session_report_reanchors_full_lifecycle_authority``,
``mastracode_session_start_replaces_current_root_session``,
``rapid_restart_replays_reports_that_arrive_before_process_evidence``,
``pi_session_replacement_clears_the_previous_sessions_alias``,
``agent_replacement_clears_alias_owned_by_hook_identity``,
``accepted_hook_replacement_clears_the_previous_agents_alias`` and
``managed_agent_name_survives_native_session_replacement``).

Three rules: an owner replacing its session drops the authority tied to the previous one (and
ignores that session's late reports); a session report is held until its process is detected;
an agent name goes when a different agent or session takes the pane. Detection is driven
through the seam.
"""

from __future__ import annotations

from typing import Any

import pytest

from herdr_sim import Simulator
from herdr_sim.model import agents
from herdr_sim.model.agents import AgentRecord, SessionRef
from pytest_herdr.client import HerdrClient
from tests.contract.helpers import detect, events_since, get, record

pytestmark = [pytest.mark.herdr_sim_only, pytest.mark.herdr(agent_detection=False)]

PI = {"source": "herdr:pi", "agent": "pi"}
OLD = "/s/pi-old.jsonl"
NEW = "/s/pi-new.jsonl"


def ref_params(agent: str, session: str) -> dict[str, str]:
    """pi and omp report a session path, the others an id."""
    key = "agent_session_path" if agent in ("pi", "omp") else "agent_session_id"
    return {key: session}


def session(
    herdr_client: HerdrClient, pane: str, value: str, start: str | None, seq: int | None, **who: str
) -> None:
    """A ``pane.report_agent_session`` (pi unless ``source``/``agent`` are given)."""
    who = who or PI
    params: dict[str, Any] = {"seq": seq} if seq is not None else {}
    if start is not None:
        params["session_start_source"] = start
    herdr_client.call(
        "pane.report_agent_session",
        pane_id=pane,
        **who,
        **ref_params(who["agent"], value),
        **params,
    )


def report(
    herdr_client: HerdrClient, pane: str, state: str, value: str, seq: int, **who: str
) -> None:
    """A ``pane.report_agent`` carrying its session (pi unless given)."""
    who = who or PI
    herdr_client.call(
        "pane.report_agent",
        pane_id=pane,
        state=state,
        seq=seq,
        **who,
        **ref_params(who["agent"], value),
    )


def shown(herdr_client: HerdrClient, pane: str) -> tuple[str | None, str, str | None]:
    """(agent, status, session value) of the pane."""
    info = get(herdr_client, pane)
    ref = info.get("agent_session")
    return info.get("agent"), info["agent_status"], None if ref is None else ref["value"]


def anchor(sim: Simulator, herdr_client: HerdrClient, pane: str, **who: str) -> None:
    """The agent detected, its session OLD stored (seq 10) and working by its report (11)."""
    who = who or PI
    detect(sim, pane, who["agent"])
    session(herdr_client, pane, OLD, "startup", 10, **who)
    report(herdr_client, pane, "working", OLD, 11, **who)
    assert shown(herdr_client, pane) == (who["agent"], "working", OLD)


@pytest.fixture
def anchored(sim: Simulator, herdr_client: HerdrClient, root: str) -> str:
    """pi detected, anchored to OLD and working by its report."""
    anchor(sim, herdr_client, root)
    return root


# -- the owner replaces its session ------------------------------------------------------------


@pytest.mark.parametrize("start", ["new", "resume", "fork"])
def test_pi_replacement_drops_the_previous_sessions_authority(
    sim: Simulator, herdr_client: HerdrClient, anchored: str, start: str
) -> None:
    session(herdr_client, anchored, NEW, start, 12)
    assert record(sim, anchored).authority is None
    # the state falls back to what the screen shows until the new session reports
    assert shown(herdr_client, anchored) == ("pi", "idle", NEW)
    assert (
        "screen_detection_skipped" not in herdr_client.call("agent.get", target=anchored)["agent"]
    )


@pytest.mark.parametrize(
    ("source", "agent", "start"),
    [
        ("herdr:omp", "omp", "resume"),
        ("herdr:omp", "omp", "startup"),
        ("herdr:mastracode", "mastracode", "startup"),
    ],
)
def test_other_owners_replacement_drops_the_authority(
    sim: Simulator, herdr_client: HerdrClient, root: str, source: str, agent: str, start: str
) -> None:
    anchor(sim, herdr_client, root, source=source, agent=agent)
    session(herdr_client, root, NEW, start, 12, source=source, agent=agent)
    assert shown(herdr_client, root) == (agent, "idle", NEW)
    assert record(sim, root).authority is None


@pytest.mark.parametrize("start", [None, "startup", "clear"])
def test_pi_non_replacement_keeps_the_session_and_authority(
    herdr_client: HerdrClient, anchored: str, start: str | None
) -> None:
    session(herdr_client, anchored, NEW, start, 12)
    report(herdr_client, anchored, "idle", NEW, 13)  # not its session: waits, never applies
    assert shown(herdr_client, anchored) == ("pi", "working", OLD)


@pytest.mark.parametrize(("source", "agent"), [("herdr:kilo", "kilo"), ("herdr:kimi", "kimi")])
def test_kilo_and_kimi_never_replace_their_session(
    herdr_client: HerdrClient, sim: Simulator, root: str, source: str, agent: str
) -> None:
    anchor(sim, herdr_client, root, source=source, agent=agent)
    for seq, start in enumerate(("startup", "new", "resume"), start=12):
        session(herdr_client, root, "other", start, seq, source=source, agent=agent)
    assert shown(herdr_client, root) == (agent, "working", OLD)


def test_replacement_session_regains_the_authority(
    herdr_client: HerdrClient, anchored: str
) -> None:
    session(herdr_client, anchored, NEW, "new", 12)
    report(herdr_client, anchored, "blocked", NEW, 13)
    assert shown(herdr_client, anchored) == ("pi", "blocked", NEW)
    assert (
        herdr_client.call("agent.get", target=anchored)["agent"]["screen_detection_skipped"] is True
    )


def test_previous_sessions_late_report_is_ignored_outright(
    sim: Simulator, herdr_client: HerdrClient, anchored: str
) -> None:
    session(herdr_client, anchored, NEW, "new", 12)
    report(herdr_client, anchored, "blocked", OLD, 13)
    rec = record(sim, anchored)
    assert (rec.parked, rec.seqs["herdr:pi"]) == (None, 12)  # not parked, seq not counted
    assert shown(herdr_client, anchored) == ("pi", "idle", NEW)


def test_late_report_of_the_previous_session_cannot_override_the_new_one(
    herdr_client: HerdrClient, anchored: str
) -> None:
    session(herdr_client, anchored, NEW, "new", 12)
    report(herdr_client, anchored, "working", NEW, 13)
    report(herdr_client, anchored, "idle", OLD, 14)
    assert shown(herdr_client, anchored) == ("pi", "working", NEW)


def test_resume_reactivates_a_stale_session(herdr_client: HerdrClient, anchored: str) -> None:
    session(herdr_client, anchored, NEW, "new", 12)
    report(herdr_client, anchored, "idle", NEW, 13)
    session(herdr_client, anchored, OLD, "resume", 14)
    report(herdr_client, anchored, "blocked", OLD, 15)
    assert shown(herdr_client, anchored) == ("pi", "blocked", OLD)
    report(herdr_client, anchored, "idle", NEW, 16)  # NEW is the stale one now
    assert shown(herdr_client, anchored) == ("pi", "blocked", OLD)


def test_new_sessions_reports_restart_the_seq_order(
    sim: Simulator, herdr_client: HerdrClient, anchored: str
) -> None:
    # Herdr re-anchors a source's seq on a session that follows a stale one
    session(herdr_client, anchored, NEW, "new", 12)
    report(herdr_client, anchored, "blocked", NEW, 5)
    assert shown(herdr_client, anchored) == ("pi", "blocked", NEW)
    assert record(sim, anchored).seqs["herdr:pi"] == 5


def test_replacement_emits_the_fallback_status(
    sim: Simulator, herdr_client: HerdrClient, anchored: str
) -> None:
    mark = len(sim.events)
    session(herdr_client, anchored, NEW, "new", 12)
    changes = [d for name, d in events_since(sim, mark) if name == "pane_agent_status_changed"]
    assert [change["agent_status"] for change in changes] == ["idle"]


# -- session reports wait for their process -------------------------------------------------


def test_session_report_before_the_process_is_held(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    session(herdr_client, root, OLD, "startup", 1)
    assert "agent_session" not in get(herdr_client, root)
    held = record(sim, root).held
    assert held == SessionRef("herdr:pi", "pi", "path", OLD)


def test_held_session_is_stored_when_the_process_appears(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    session(herdr_client, root, OLD, "startup", 1)
    detect(sim, root, "pi")
    assert shown(herdr_client, root) == ("pi", "idle", OLD)
    assert record(sim, root).held is None


def test_held_session_is_not_saved_before_its_process(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    session(herdr_client, root, OLD, "startup", 1)
    [agent_pane] = [p for p in herdr_client.call("pane.list")["panes"] if p["pane_id"] == root]
    assert "agent_session" not in agent_pane


def test_held_report_applies_with_its_session(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    # pi's startup: its session and first state reach Herdr before its process is seen
    session(herdr_client, root, OLD, "startup", 1)
    report(herdr_client, root, "working", OLD, 2)
    detect(sim, root, "pi")
    assert shown(herdr_client, root) == ("pi", "working", OLD)


@pytest.mark.parametrize(
    ("start", "seq"), [(None, 1), ("branch", 1), ("reload", 1), ("startup", None)]
)
def test_held_session_needs_a_recognised_start_and_a_seq(
    sim: Simulator, herdr_client: HerdrClient, root: str, start: str | None, seq: int | None
) -> None:
    session(herdr_client, root, OLD, start, seq)
    detect(sim, root, "pi")
    assert "agent_session" not in get(herdr_client, root)


def test_unanchored_session_with_the_process_is_stored_at_once(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    detect(sim, root, "pi")
    session(herdr_client, root, OLD, "startup", 1)
    assert shown(herdr_client, root) == ("pi", "idle", OLD)


def test_unanchored_session_without_a_start_source_is_ignored(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    # pi's agent_start report carries no start source: it only confirms an anchored session
    detect(sim, root, "pi")
    session(herdr_client, root, OLD, None, 1)
    assert "agent_session" not in get(herdr_client, root)


def test_newer_held_session_replaces_the_older(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    session(herdr_client, root, OLD, "startup", 1)
    session(herdr_client, root, NEW, "new", 2)
    detect(sim, root, "pi")
    assert shown(herdr_client, root)[2] == NEW


def test_stale_seq_session_report_is_not_held(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    session(herdr_client, root, OLD, "startup", 5)
    session(herdr_client, root, NEW, "new", 5)
    detect(sim, root, "pi")
    assert shown(herdr_client, root)[2] == OLD


def test_report_parked_for_another_session_is_dropped(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    report(herdr_client, root, "working", "/s/elsewhere.jsonl", 1)
    session(herdr_client, root, OLD, "startup", 2)
    detect(sim, root, "pi")
    assert shown(herdr_client, root) == ("pi", "idle", OLD)
    assert record(sim, root).parked is None


@pytest.mark.parametrize(
    ("source", "agent"),
    [("herdr:omp", "omp"), ("herdr:mastracode", "mastracode"), ("herdr:kilo", "kilo"),
     ("herdr:kimi", "kimi")],
)  # fmt: skip
def test_other_sources_hold_their_session_too(
    sim: Simulator, herdr_client: HerdrClient, root: str, source: str, agent: str
) -> None:
    session(herdr_client, root, "/s/1", "startup", 1, source=source, agent=agent)
    report(herdr_client, root, "working", "/s/1", 2, source=source, agent=agent)
    assert "agent_session" not in get(herdr_client, root)
    detect(sim, root, agent)
    assert shown(herdr_client, root) == (agent, "working", "/s/1")


# -- agent names belong to an agent and session ----------------------------------------------


def rename(herdr_client: HerdrClient, pane: str, name: str) -> None:
    """``agent.rename``."""
    herdr_client.call("agent.rename", target=pane, name=name)


def names(herdr_client: HerdrClient) -> list[str]:
    """The names ``agent.list`` shows."""
    return [a["name"] for a in herdr_client.call("agent.list")["agents"] if "name" in a]


def test_session_replacement_clears_the_name(herdr_client: HerdrClient, anchored: str) -> None:
    rename(herdr_client, anchored, "reviewer")
    session(herdr_client, anchored, NEW, "new", 12)
    assert names(herdr_client) == []


def test_reports_of_the_same_session_keep_the_name(
    herdr_client: HerdrClient, anchored: str
) -> None:
    rename(herdr_client, anchored, "reviewer")
    report(herdr_client, anchored, "idle", OLD, 12)
    session(herdr_client, anchored, OLD, None, 13)  # pi's agent_start confirmation
    assert names(herdr_client) == ["reviewer"]


def test_name_adopts_the_session_reported_after_it(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    detect(sim, root, "pi")
    rename(herdr_client, root, "reviewer")
    session(herdr_client, root, OLD, "startup", 1)
    assert names(herdr_client) == ["reviewer"]
    owner = record(sim, root).name_owner
    assert owner is not None and owner.ref == SessionRef("herdr:pi", "pi", "path", OLD)
    session(herdr_client, root, NEW, "new", 2)
    assert names(herdr_client) == []


def test_another_agent_detected_clears_a_custom_agents_name(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="my-agent", agent="my-agent", state="working"
    )
    rename(herdr_client, root, "reviewer")
    detect(sim, root, "claude")
    assert record(sim, root).name is None


def test_same_source_reporting_another_agent_clears_the_name(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:x", agent="pi", state="working", seq=1
    )
    rename(herdr_client, root, "reviewer")
    herdr_client.call(
        "pane.report_agent", pane_id=root, source="custom:x", agent="claude", state="idle", seq=2
    )
    assert names(herdr_client) == []


def test_the_same_agent_redetected_keeps_the_name(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    detect(sim, root, "claude")
    rename(herdr_client, root, "reviewer")
    detect(sim, root, "claude", "working")
    assert names(herdr_client) == ["reviewer"]


def test_opencode_selection_of_another_session_clears_the_name(
    sim: Simulator, herdr_client: HerdrClient, root: str
) -> None:
    opencode = {"source": "herdr:opencode", "agent": "opencode"}
    detect(sim, root, "opencode")
    session(herdr_client, root, "ses-a", "select", None, **opencode)
    rename(herdr_client, root, "reviewer")
    session(herdr_client, root, "ses-b", "select", None, **opencode)
    assert names(herdr_client) == []


def test_managed_kind_keeps_its_name_across_sessions() -> None:
    # the engine with the seam the handlers set from an agent.start launch
    rec = AgentRecord(detected="opencode")
    rec.managed_kind = "opencode"
    rec.name = "reviewer"
    for value in ("ses-a", "ses-b"):
        ref = SessionRef("herdr:opencode", "opencode", "id", value)
        agents.report_session(rec, source="herdr:opencode", ref=ref, start="select", seq=None)
    assert rec.session is not None and rec.session.value == "ses-b"
    assert rec.name == "reviewer"
