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
from tests.contract.helpers import Api, detect, events_since, get, record

pytestmark = [pytest.mark.herdr_sim_only, pytest.mark.herdr(agent_detection=False)]

PI = {"source": "herdr:pi", "agent": "pi"}
OLD = "/s/pi-old.jsonl"
NEW = "/s/pi-new.jsonl"


def ref_params(agent: str, session: str) -> dict[str, str]:
    """pi and omp report a session path, the others an id."""
    key = "agent_session_path" if agent in ("pi", "omp") else "agent_session_id"
    return {key: session}


def session(
    api: Api, pane: str, value: str, start: str | None, seq: int | None, **who: str
) -> None:
    """A ``pane.report_agent_session`` (pi unless ``source``/``agent`` are given)."""
    who = who or PI
    params: dict[str, Any] = {"seq": seq} if seq is not None else {}
    if start is not None:
        params["session_start_source"] = start
    api(
        "pane.report_agent_session",
        pane_id=pane,
        **who,
        **ref_params(who["agent"], value),
        **params,
    )


def report(api: Api, pane: str, state: str, value: str, seq: int, **who: str) -> None:
    """A ``pane.report_agent`` carrying its session (pi unless given)."""
    who = who or PI
    api(
        "pane.report_agent",
        pane_id=pane,
        state=state,
        seq=seq,
        **who,
        **ref_params(who["agent"], value),
    )


def shown(api: Api, pane: str) -> tuple[str | None, str, str | None]:
    """(agent, status, session value) of the pane."""
    info = get(api, pane)
    ref = info.get("agent_session")
    return info.get("agent"), info["agent_status"], None if ref is None else ref["value"]


def anchor(sim: Simulator, api: Api, pane: str, **who: str) -> None:
    """The agent detected, its session OLD stored (seq 10) and working by its report (11)."""
    who = who or PI
    detect(sim, pane, who["agent"])
    session(api, pane, OLD, "startup", 10, **who)
    report(api, pane, "working", OLD, 11, **who)
    assert shown(api, pane) == (who["agent"], "working", OLD)


@pytest.fixture
def anchored(sim: Simulator, api: Api, root: str) -> str:
    """pi detected, anchored to OLD and working by its report."""
    anchor(sim, api, root)
    return root


# -- the owner replaces its session ------------------------------------------------------------


@pytest.mark.parametrize("start", ["new", "resume", "fork"])
def test_pi_replacement_drops_the_previous_sessions_authority(
    sim: Simulator, api: Api, anchored: str, start: str
) -> None:
    session(api, anchored, NEW, start, 12)
    assert record(sim, anchored).authority is None
    # the state falls back to what the screen shows until the new session reports
    assert shown(api, anchored) == ("pi", "idle", NEW)
    assert "screen_detection_skipped" not in api("agent.get", target=anchored)["agent"]


@pytest.mark.parametrize(
    ("source", "agent", "start"),
    [
        ("herdr:omp", "omp", "resume"),
        ("herdr:omp", "omp", "startup"),
        ("herdr:mastracode", "mastracode", "startup"),
    ],
)
def test_other_owners_replacement_drops_the_authority(
    sim: Simulator, api: Api, root: str, source: str, agent: str, start: str
) -> None:
    anchor(sim, api, root, source=source, agent=agent)
    session(api, root, NEW, start, 12, source=source, agent=agent)
    assert shown(api, root) == (agent, "idle", NEW)
    assert record(sim, root).authority is None


@pytest.mark.parametrize("start", [None, "startup", "clear"])
def test_pi_non_replacement_keeps_the_session_and_authority(
    api: Api, anchored: str, start: str | None
) -> None:
    session(api, anchored, NEW, start, 12)
    report(api, anchored, "idle", NEW, 13)  # not its session: waits, never applies
    assert shown(api, anchored) == ("pi", "working", OLD)


@pytest.mark.parametrize(("source", "agent"), [("herdr:kilo", "kilo"), ("herdr:kimi", "kimi")])
def test_kilo_and_kimi_never_replace_their_session(
    api: Api, sim: Simulator, root: str, source: str, agent: str
) -> None:
    anchor(sim, api, root, source=source, agent=agent)
    for seq, start in enumerate(("startup", "new", "resume"), start=12):
        session(api, root, "other", start, seq, source=source, agent=agent)
    assert shown(api, root) == (agent, "working", OLD)


def test_replacement_session_regains_the_authority(api: Api, anchored: str) -> None:
    session(api, anchored, NEW, "new", 12)
    report(api, anchored, "blocked", NEW, 13)
    assert shown(api, anchored) == ("pi", "blocked", NEW)
    assert api("agent.get", target=anchored)["agent"]["screen_detection_skipped"] is True


def test_previous_sessions_late_report_is_ignored_outright(
    sim: Simulator, api: Api, anchored: str
) -> None:
    session(api, anchored, NEW, "new", 12)
    report(api, anchored, "blocked", OLD, 13)
    rec = record(sim, anchored)
    assert (rec.parked, rec.seqs["herdr:pi"]) == (None, 12)  # not parked, seq not counted
    assert shown(api, anchored) == ("pi", "idle", NEW)


def test_late_report_of_the_previous_session_cannot_override_the_new_one(
    api: Api, anchored: str
) -> None:
    session(api, anchored, NEW, "new", 12)
    report(api, anchored, "working", NEW, 13)
    report(api, anchored, "idle", OLD, 14)
    assert shown(api, anchored) == ("pi", "working", NEW)


def test_resume_reactivates_a_stale_session(api: Api, anchored: str) -> None:
    session(api, anchored, NEW, "new", 12)
    report(api, anchored, "idle", NEW, 13)
    session(api, anchored, OLD, "resume", 14)
    report(api, anchored, "blocked", OLD, 15)
    assert shown(api, anchored) == ("pi", "blocked", OLD)
    report(api, anchored, "idle", NEW, 16)  # NEW is the stale one now
    assert shown(api, anchored) == ("pi", "blocked", OLD)


def test_new_sessions_reports_restart_the_seq_order(
    sim: Simulator, api: Api, anchored: str
) -> None:
    # Herdr re-anchors a source's seq on a session that follows a stale one
    session(api, anchored, NEW, "new", 12)
    report(api, anchored, "blocked", NEW, 5)
    assert shown(api, anchored) == ("pi", "blocked", NEW)
    assert record(sim, anchored).seqs["herdr:pi"] == 5


def test_replacement_emits_the_fallback_status(sim: Simulator, api: Api, anchored: str) -> None:
    mark = len(sim.events)
    session(api, anchored, NEW, "new", 12)
    changes = [d for name, d in events_since(sim, mark) if name == "pane_agent_status_changed"]
    assert [change["agent_status"] for change in changes] == ["idle"]


# -- session reports wait for their process -------------------------------------------------


def test_session_report_before_the_process_is_held(sim: Simulator, api: Api, root: str) -> None:
    session(api, root, OLD, "startup", 1)
    assert "agent_session" not in get(api, root)
    held = record(sim, root).held
    assert held == SessionRef("herdr:pi", "pi", "path", OLD)


def test_held_session_is_stored_when_the_process_appears(
    sim: Simulator, api: Api, root: str
) -> None:
    session(api, root, OLD, "startup", 1)
    detect(sim, root, "pi")
    assert shown(api, root) == ("pi", "idle", OLD)
    assert record(sim, root).held is None


def test_held_session_is_not_saved_before_its_process(sim: Simulator, api: Api, root: str) -> None:
    session(api, root, OLD, "startup", 1)
    [agent_pane] = [p for p in api("pane.list")["panes"] if p["pane_id"] == root]
    assert "agent_session" not in agent_pane


def test_held_report_applies_with_its_session(sim: Simulator, api: Api, root: str) -> None:
    # pi's startup: its session and first state reach Herdr before its process is seen
    session(api, root, OLD, "startup", 1)
    report(api, root, "working", OLD, 2)
    detect(sim, root, "pi")
    assert shown(api, root) == ("pi", "working", OLD)


@pytest.mark.parametrize(
    ("start", "seq"), [(None, 1), ("branch", 1), ("reload", 1), ("startup", None)]
)
def test_held_session_needs_a_recognised_start_and_a_seq(
    sim: Simulator, api: Api, root: str, start: str | None, seq: int | None
) -> None:
    session(api, root, OLD, start, seq)
    detect(sim, root, "pi")
    assert "agent_session" not in get(api, root)


def test_unanchored_session_with_the_process_is_stored_at_once(
    sim: Simulator, api: Api, root: str
) -> None:
    detect(sim, root, "pi")
    session(api, root, OLD, "startup", 1)
    assert shown(api, root) == ("pi", "idle", OLD)


def test_unanchored_session_without_a_start_source_is_ignored(
    sim: Simulator, api: Api, root: str
) -> None:
    # pi's agent_start report carries no start source: it only confirms an anchored session
    detect(sim, root, "pi")
    session(api, root, OLD, None, 1)
    assert "agent_session" not in get(api, root)


def test_newer_held_session_replaces_the_older(sim: Simulator, api: Api, root: str) -> None:
    session(api, root, OLD, "startup", 1)
    session(api, root, NEW, "new", 2)
    detect(sim, root, "pi")
    assert shown(api, root)[2] == NEW


def test_stale_seq_session_report_is_not_held(sim: Simulator, api: Api, root: str) -> None:
    session(api, root, OLD, "startup", 5)
    session(api, root, NEW, "new", 5)
    detect(sim, root, "pi")
    assert shown(api, root)[2] == OLD


def test_report_parked_for_another_session_is_dropped(sim: Simulator, api: Api, root: str) -> None:
    report(api, root, "working", "/s/elsewhere.jsonl", 1)
    session(api, root, OLD, "startup", 2)
    detect(sim, root, "pi")
    assert shown(api, root) == ("pi", "idle", OLD)
    assert record(sim, root).parked is None


@pytest.mark.parametrize(
    ("source", "agent"),
    [("herdr:omp", "omp"), ("herdr:mastracode", "mastracode"), ("herdr:kilo", "kilo"),
     ("herdr:kimi", "kimi")],
)  # fmt: skip
def test_other_sources_hold_their_session_too(
    sim: Simulator, api: Api, root: str, source: str, agent: str
) -> None:
    session(api, root, "/s/1", "startup", 1, source=source, agent=agent)
    report(api, root, "working", "/s/1", 2, source=source, agent=agent)
    assert "agent_session" not in get(api, root)
    detect(sim, root, agent)
    assert shown(api, root) == (agent, "working", "/s/1")


# -- agent names belong to an agent and session ----------------------------------------------


def rename(api: Api, pane: str, name: str) -> None:
    """``agent.rename``."""
    api("agent.rename", target=pane, name=name)


def names(api: Api) -> list[str]:
    """The names ``agent.list`` shows."""
    return [a["name"] for a in api("agent.list")["agents"] if "name" in a]


def test_session_replacement_clears_the_name(api: Api, anchored: str) -> None:
    rename(api, anchored, "reviewer")
    session(api, anchored, NEW, "new", 12)
    assert names(api) == []


def test_reports_of_the_same_session_keep_the_name(api: Api, anchored: str) -> None:
    rename(api, anchored, "reviewer")
    report(api, anchored, "idle", OLD, 12)
    session(api, anchored, OLD, None, 13)  # pi's agent_start confirmation
    assert names(api) == ["reviewer"]


def test_name_adopts_the_session_reported_after_it(sim: Simulator, api: Api, root: str) -> None:
    detect(sim, root, "pi")
    rename(api, root, "reviewer")
    session(api, root, OLD, "startup", 1)
    assert names(api) == ["reviewer"]
    owner = record(sim, root).name_owner
    assert owner is not None and owner.ref == SessionRef("herdr:pi", "pi", "path", OLD)
    session(api, root, NEW, "new", 2)
    assert names(api) == []


def test_another_agent_detected_clears_a_custom_agents_name(
    sim: Simulator, api: Api, root: str
) -> None:
    api("pane.report_agent", pane_id=root, source="my-agent", agent="my-agent", state="working")
    rename(api, root, "reviewer")
    detect(sim, root, "claude")
    assert record(sim, root).name is None


def test_same_source_reporting_another_agent_clears_the_name(
    sim: Simulator, api: Api, root: str
) -> None:
    api("pane.report_agent", pane_id=root, source="custom:x", agent="pi", state="working", seq=1)
    rename(api, root, "reviewer")
    api("pane.report_agent", pane_id=root, source="custom:x", agent="claude", state="idle", seq=2)
    assert names(api) == []


def test_the_same_agent_redetected_keeps_the_name(sim: Simulator, api: Api, root: str) -> None:
    detect(sim, root, "claude")
    rename(api, root, "reviewer")
    detect(sim, root, "claude", "working")
    assert names(api) == ["reviewer"]


def test_opencode_selection_of_another_session_clears_the_name(
    sim: Simulator, api: Api, root: str
) -> None:
    opencode = {"source": "herdr:opencode", "agent": "opencode"}
    detect(sim, root, "opencode")
    session(api, root, "ses-a", "select", None, **opencode)
    rename(api, root, "reviewer")
    session(api, root, "ses-b", "select", None, **opencode)
    assert names(api) == []


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
