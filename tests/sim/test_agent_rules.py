"""Herdr's agent rules on one :class:`AgentRecord`, without a server: the edges of the
resume-command check, who an agent name belongs to, OpenCode's session selection, stale
sessions and the exit safety net. The contract tests show each rule through the socket;
these pin the boundaries and the side conditions a socket test reaches only by chance."""

from __future__ import annotations

import pytest

from herdr_sim.model.agents import (
    RESUME_MAX_BYTES,
    AgentBook,
    AgentRecord,
    Authority,
    NameOwner,
    SessionRef,
    Snapshot,
    abandoned,
    clear_authority,
    effective,
    process_exited,
    release,
    replay_parked,
    report_agent,
    report_session,
    resume_argv_error,
    session_ref,
)

PI = "herdr:pi"
OPENCODE = "herdr:opencode"


def pi_session(value: str) -> SessionRef:
    return SessionRef(PI, "pi", "path", f"/sessions/{value}.jsonl")


def opencode_session(value: str) -> SessionRef:
    return SessionRef(OPENCODE, "opencode", "id", value)


# -- the resume command ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        ([], "resume_argv must not be empty"),
        (["pi", "x" * (RESUME_MAX_BYTES - 2)], None),  # exactly the byte bound
        (
            ["pi", "x" * (RESUME_MAX_BYTES - 1)],
            f"resume_argv must be at most {RESUME_MAX_BYTES} bytes",
        ),
        (["pi", "a\x1fb"], "resume_argv must not contain control characters"),
        (["pi", "a\x7fb"], "resume_argv must not contain control characters"),
        (["pi", "two words"], None),  # a space is no control character
        (["pi", "caf\x80"], None),  # nor is U+0080 (DEL is 0x7F)
        (["pi\\x"], "resume_argv must start with a bare command name on PATH"),
        (["bin/pi"], "resume_argv must start with a bare command name on PATH"),
        (["pi\u00a0"], "resume_argv must start with a bare command name on PATH"),
        (["p i"], "resume_argv must start with a bare command name on PATH"),
        (["pi", "--session", "/s.jsonl"], None),
    ],
)
def test_a_resume_command_is_refused_exactly_at_its_edges(
    argv: list[str], error: str | None
) -> None:
    assert resume_argv_error(argv) == error


# -- screen detection and an authority -------------------------------------------------


def test_only_a_live_full_lifecycle_authority_skips_screen_detection() -> None:
    custom = AgentRecord(authority=Authority("my-agent", "my-agent", "working"))
    assert custom.screen_detection_skipped() is False  # a custom source never does
    full = AgentRecord(authority=Authority(PI, "pi", "working"), detected="pi")
    assert full.screen_detection_skipped() is True
    full.detected = None  # its process is gone: the screen decides again
    assert full.screen_detection_skipped() is False


# -- who an agent name belongs to ------------------------------------------------------


def test_a_name_given_with_only_a_session_belongs_to_the_sessions_agent() -> None:
    ref = SessionRef("herdr:claude", "claude", "id", "s1")
    rec = AgentRecord(session=ref)
    rec.name = "reviewer"
    assert rec.name_owner == NameOwner("claude", ref)


def test_a_name_given_to_a_detected_agent_belongs_to_it_and_to_nobody_without_one() -> None:
    rec = AgentRecord(detected="codex")
    rec.name = "impl"
    assert rec.name_owner == NameOwner("codex", None)
    bare = AgentRecord()
    bare.name = "later"
    assert bare.name_owner is None


# -- sequence numbers ------------------------------------------------------------------


def anchored_pi(seq: int = 10) -> tuple[AgentRecord, SessionRef]:
    """A pane whose detected pi reports as the authority, anchored to its session."""
    rec = AgentRecord(detected="pi")
    first = pi_session("a")
    assert report_session(rec, source=PI, ref=first, start="startup", seq=1) is True
    assert report_agent(
        rec, source=PI, agent="pi", state="working", message=None, ref=first, seq=seq
    )
    return rec, first


def test_an_older_seq_changes_nothing_while_no_session_went_stale() -> None:
    rec, first = anchored_pi(seq=10)
    assert not report_agent(
        rec, source=PI, agent="pi", state="idle", message=None, ref=first, seq=5
    )
    assert rec.authority == Authority(PI, "pi", "working")


def test_a_new_session_renumbers_and_the_replaced_one_goes_stale() -> None:
    rec, first = anchored_pi(seq=10)
    second = pi_session("b")
    assert report_session(rec, source=PI, ref=second, start="new", seq=11) is True
    assert rec.stale == {PI: [first]} and rec.authority is None
    # the new session's own numbering starts again
    assert report_agent(rec, source=PI, agent="pi", state="idle", message=None, ref=second, seq=1)
    # the replaced session's late reports are ignored outright (not parked for later)
    assert not report_agent(
        rec, source=PI, agent="pi", state="working", message=None, ref=first, seq=99
    )
    assert rec.parked is None and rec.authority == Authority(PI, "pi", "idle")


def test_resuming_one_stale_session_leaves_the_others_stale() -> None:
    rec, first = anchored_pi(seq=10)
    second, third = pi_session("b"), pi_session("c")
    report_session(rec, source=PI, ref=second, start="new", seq=11)
    report_agent(rec, source=PI, agent="pi", state="idle", message=None, ref=second, seq=12)
    report_session(rec, source=PI, ref=third, start="new", seq=13)
    assert rec.stale == {PI: [first, second]}
    report_session(rec, source=PI, ref=first, start="resume", seq=14)
    assert rec.session == first
    assert rec.stale == {PI: [second]}


def test_clearing_with_an_older_seq_keeps_the_authority() -> None:
    rec = AgentRecord()
    assert report_agent(
        rec, source="my-agent", agent="my-agent", state="working", message=None, ref=None, seq=7
    )
    assert clear_authority(rec, source="my-agent", seq=3) is False
    assert rec.authority is not None
    assert clear_authority(rec, source="my-agent", seq=8) is True
    assert rec.authority is None


# -- OpenCode's selection --------------------------------------------------------------


def test_a_selection_before_opencode_is_detected_is_held_not_stored() -> None:
    rec = AgentRecord()
    ref = opencode_session("s1")
    assert report_session(rec, source=OPENCODE, ref=ref, start="select", seq=None) is False
    assert rec.held == ref and rec.session is None


def test_a_sequenced_selection_with_an_old_seq_changes_nothing() -> None:
    rec = AgentRecord(detected="opencode")
    first = opencode_session("s1")
    assert report_session(rec, source=OPENCODE, ref=first, start="select", seq=5) is True
    second = opencode_session("s2")
    assert report_session(rec, source=OPENCODE, ref=second, start="select", seq=4) is False
    assert rec.session == first


def test_selecting_the_same_session_again_is_no_change() -> None:
    rec = AgentRecord(detected="opencode")
    ref = opencode_session("s1")
    assert report_session(rec, source=OPENCODE, ref=ref, start="select", seq=None) is True
    assert report_session(rec, source=OPENCODE, ref=ref, start="select", seq=None) is False


def test_selecting_another_session_drops_the_authority_of_the_previous_one() -> None:
    rec = AgentRecord(detected="opencode")
    first = opencode_session("s1")
    report_session(rec, source=OPENCODE, ref=first, start="select", seq=None)
    assert report_agent(
        rec, source=OPENCODE, agent="opencode", state="working", message=None, ref=first, seq=1
    )
    second = opencode_session("s2")
    assert report_session(rec, source=OPENCODE, ref=second, start="select", seq=None) is True
    assert rec.session == second and rec.authority is None
    assert rec.stale == {OPENCODE: [first]}


def test_a_first_selection_leaves_another_sources_authority_alone() -> None:
    rec = AgentRecord(detected="opencode")
    assert report_agent(
        rec, source="my-agent", agent="my-agent", state="working", message=None, ref=None, seq=1
    )
    assert report_session(
        rec, source=OPENCODE, ref=opencode_session("s1"), start="select", seq=None
    )
    assert rec.authority == Authority("my-agent", "my-agent", "working")


# -- the exit safety net ---------------------------------------------------------------


def custom_authority(**fields: object) -> AgentRecord:
    rec = AgentRecord(**fields)  # type: ignore[arg-type]
    report_agent(
        rec, source="my-agent", agent="my-agent", state="working", message=None, ref=None, seq=1
    )
    rec.resume_argv, rec.resume_source = ["my-agent", "--resume"], "my-agent"
    return rec


def test_an_abandoned_custom_agent_is_cleared_like_a_release() -> None:
    rec = custom_authority(detected="my-agent", screen_state="working")
    rec.name = "helper"
    rec.exit_job = 4242
    assert abandoned(rec) is True
    assert rec.authority is None and rec.exit_job is None
    assert (rec.resume_argv, rec.resume_source) == (None, None)
    assert (rec.detected, rec.screen_state, rec.name) == (None, "unknown", None)


def test_the_safety_net_leaves_another_detected_agent_alone() -> None:
    rec = custom_authority(detected="codex", screen_state="working")
    rec.exit_job = 4242
    assert abandoned(rec) is True
    assert (rec.detected, rec.screen_state) == ("codex", "working")


def test_no_job_means_nothing_was_abandoned() -> None:
    rec = custom_authority()
    assert abandoned(rec) is False
    assert rec.authority is not None


def test_a_job_without_an_authority_is_forgotten() -> None:
    rec = AgentRecord(exit_job=4242)
    assert abandoned(rec) is False
    assert rec.exit_job is None


def test_official_sources_are_left_to_process_detection() -> None:
    rec, _first = anchored_pi()
    rec.exit_job = 4242
    assert abandoned(rec) is False
    assert rec.authority == Authority(PI, "pi", "working")
    assert rec.exit_job is None


def test_a_later_selection_leaves_another_sources_authority_alone() -> None:
    rec = AgentRecord(detected="opencode")
    report_session(rec, source=OPENCODE, ref=opencode_session("s1"), start="select", seq=None)
    assert report_agent(
        rec, source="my-agent", agent="my-agent", state="working", message=None, ref=None, seq=1
    )
    assert report_session(
        rec, source=OPENCODE, ref=opencode_session("s2"), start="select", seq=None
    )
    assert rec.authority == Authority("my-agent", "my-agent", "working")


# -- a name's owner when the authority and the session disagree -------------------------


def test_a_name_is_tied_to_the_authoritys_session_only_when_that_session_is_its_own() -> None:
    claude = SessionRef("herdr:claude", "claude", "id", "c1")
    rec = AgentRecord(authority=Authority(PI, "pi", "working"), session=claude)
    rec.name = "x"
    assert rec.name_owner == NameOwner("pi", None)
    alone = AgentRecord(authority=Authority(PI, "pi", "working"), detected="pi")
    alone.name = "y"  # a full authority with no session stored anchors nothing
    assert alone.name_owner == NameOwner("pi", None)


# -- the agent's process ended ---------------------------------------------------------


def leftovers(rec: AgentRecord) -> tuple[object, ...]:
    """The resume command and the name (read through a function: not narrowed by the test's
    own assignments)."""
    return rec.resume_argv, rec.resume_source, rec.name


def test_a_process_exit_clears_its_agent_and_only_its_own() -> None:
    assert process_exited(AgentRecord()) is False  # nothing was detected
    rec, _first = anchored_pi()
    rec.resume_argv, rec.resume_source = ["pi", "--resume"], PI
    rec.name = "impl"
    assert process_exited(rec) is True
    assert (rec.detected, rec.screen_state, rec.authority, rec.session) == (
        None,
        "unknown",
        None,
        None,
    )
    assert leftovers(rec) == (None, None, None)
    other = custom_authority(detected="codex", screen_state="working")
    assert process_exited(other) is True
    assert other.authority == Authority("my-agent", "my-agent", "working")  # not codex's
    assert other.resume_argv == ["my-agent", "--resume"]


# -- stored sessions -------------------------------------------------------------------


def test_another_agents_session_is_stored_only_while_that_agent_is_detected() -> None:
    claude = SessionRef("herdr:claude", "claude", "id", "c1")
    codex = SessionRef("herdr:codex", "codex", "id", "x1")
    rec = AgentRecord(session=claude)
    assert report_session(rec, source="herdr:codex", ref=codex, start="startup", seq=None) is False
    assert rec.session == claude
    rec.detected = "codex"
    assert report_session(rec, source="herdr:codex", ref=codex, start="startup", seq=None)
    assert rec.session == codex


def test_a_source_without_replacement_rules_keeps_its_first_session() -> None:
    first = SessionRef("herdr:cursor", "cursor", "id", "a")
    rec = AgentRecord(session=first, detected="cursor")
    second = SessionRef("herdr:cursor", "cursor", "id", "b")
    assert report_session(rec, source="herdr:cursor", ref=second, start="resume", seq=None) is False
    assert rec.session == first


def test_antigravity_replaces_its_session_whatever_the_start_source() -> None:
    first = SessionRef("herdr:antigravity_cli", "agy", "id", "a")
    rec = AgentRecord(session=first)
    second = SessionRef("herdr:antigravity_cli", "agy", "id", "b")
    source = "herdr:antigravity_cli"
    assert report_session(rec, source=source, ref=second, start=None, seq=None) is True
    assert rec.session == second


# -- release and clear -----------------------------------------------------------------


def test_a_release_while_the_process_runs_drops_only_the_authority() -> None:
    rec = custom_authority(detected="my-agent", screen_state="working")
    rec.name = "helper"
    assert release(rec, source="my-agent", agent="my-agent", seq=2) is False
    assert rec.authority is None and rec.resume_argv is None
    assert (rec.detected, rec.screen_state, rec.name) == ("my-agent", "working", "helper")


def test_a_release_clears_the_agent_and_leaves_another_agents_session() -> None:
    claude = SessionRef("herdr:claude", "claude", "id", "c1")
    rec = custom_authority(session=claude, screen_state="working")
    rec.name = "helper"
    assert release(rec, source="my-agent", agent="my-agent", seq=2) is True
    assert (rec.authority, rec.detected, rec.screen_state) == (None, None, "unknown")
    assert rec.name is None
    assert rec.session == claude  # not the releasing agent's to drop


def test_a_release_for_an_agent_not_in_the_pane_is_ignored() -> None:
    claude = SessionRef("herdr:claude", "claude", "id", "c1")
    rec = AgentRecord(session=claude, detected="codex", screen_state="working")
    assert release(rec, source="my-agent", agent="my-agent", seq=None) is None
    assert (rec.session, rec.detected, rec.screen_state) == (claude, "codex", "working")


def test_clearing_nothing_or_another_sources_authority_is_false() -> None:
    assert clear_authority(AgentRecord(), source=None, seq=None) is False
    rec = custom_authority()
    assert clear_authority(rec, source="someone-else", seq=None) is False
    assert rec.authority is not None


def test_another_agents_session_needs_a_start_source_other_than_branch() -> None:
    codex = SessionRef("herdr:codex", "codex", "id", "x1")
    for start in (None, "branch"):
        rec = AgentRecord(session=pi_session("a"), detected="codex")
        report_session(rec, source="herdr:codex", ref=codex, start=start, seq=None)
        assert rec.session == pi_session("a"), start


# -- session references ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("session_id", "kept"),
    [
        ("a" * 512, True),
        ("a" * 513, False),
        ("", False),
        ("with space", True),
        ("caf\x80", True),
        ("a\x1fb", False),
        ("a\x7fb", False),
    ],
    # plain ids: a control character in a test id cannot be selected on the command line
    ids=["512", "513", "empty", "space", "u0080", "unit-separator", "delete"],
)
def test_a_session_id_is_kept_within_its_length_and_without_control_characters(
    session_id: str, kept: bool
) -> None:
    ref = session_ref("herdr:claude", "claude", session_id, None)
    assert ref == (SessionRef("herdr:claude", "claude", "id", session_id) if kept else None)


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("/" + "p" * 4095, True),
        ("/" + "p" * 4096, False),
        ("relative/s.jsonl", False),
        ("/a\x1fb", False),
    ],
    ids=["4096", "4097", "relative", "control"],
)
def test_a_session_path_is_kept_when_absolute_short_enough_and_clean(path: str, kept: bool) -> None:
    ref = session_ref(PI, "pi", None, path)
    assert ref == (SessionRef(PI, "pi", "path", path) if kept else None)
    # a bad path leaves a good id usable
    assert session_ref(PI, "pi", "id-1", path) == (
        SessionRef(PI, "pi", "path", path) if kept else SessionRef(PI, "pi", "id", "id-1")
    )


# -- a full-lifecycle source's session reports -----------------------------------------


def test_a_held_session_needs_a_recognised_start_and_a_seq() -> None:
    for start, seq in (("branch", 1), ("startup", None), (None, 1)):
        rec = AgentRecord()
        assert report_session(rec, source=PI, ref=pi_session("a"), start=start, seq=seq) is False
        assert rec.held is None, (start, seq)


def test_a_new_held_session_drops_a_report_parked_for_another() -> None:
    rec = AgentRecord()
    assert not report_agent(
        rec, source=PI, agent="pi", state="working", message=None, ref=pi_session("a"), seq=5
    )
    assert rec.parked is not None
    assert report_session(rec, source=PI, ref=pi_session("b"), start="startup", seq=6) is False
    assert rec.held == pi_session("b") and rec.parked is None


def test_a_session_held_beside_another_agents_session_changes_nothing_yet() -> None:
    claude = SessionRef("herdr:claude", "claude", "id", "c1")
    rec = AgentRecord(session=claude)
    assert report_session(rec, source=PI, ref=pi_session("a"), start="startup", seq=1) is False
    assert rec.session == claude and rec.held == pi_session("a")


def test_an_anchored_session_report_with_an_old_seq_changes_nothing() -> None:
    rec, first = anchored_pi(seq=10)
    assert report_session(rec, source=PI, ref=pi_session("b"), start="new", seq=10) is False
    assert rec.session == first


def test_an_id_session_is_replaced_only_by_an_allowed_start_a_path_one_without_authority() -> None:
    first, second = (
        SessionRef("herdr:kimi", "kimi", "id", "k1"),
        SessionRef("herdr:kimi", "kimi", "id", "k2"),
    )
    rec = AgentRecord(session=first, detected="kimi")
    assert report_session(rec, source="herdr:kimi", ref=second, start="startup", seq=1) is False
    assert rec.session == first
    paths = AgentRecord(session=pi_session("a"), detected="pi")
    assert report_session(paths, source=PI, ref=pi_session("b"), start="startup", seq=1) is True
    assert paths.session == pi_session("b")


def test_an_owner_holding_the_pane_keeps_its_session_against_a_start_that_may_not_replace() -> None:
    rec, first = anchored_pi(seq=10)
    assert report_session(rec, source=PI, ref=pi_session("b"), start="startup", seq=11) is False
    assert rec.session == first and rec.authority == Authority(PI, "pi", "working")


# -- a report's own effects ------------------------------------------------------------


def test_a_report_carries_its_message_and_replaces_another_sources_resume_command() -> None:
    rec = custom_authority()
    assert report_agent(
        rec, source="other", agent="other", state="blocked", message="needs you", ref=None, seq=1
    )
    assert rec.authority == Authority("other", "other", "blocked", "needs you")
    assert (rec.resume_argv, rec.resume_source) == (None, None)  # it was my-agent's


def test_a_report_keeps_its_own_sources_resume_command() -> None:
    rec = custom_authority()
    rec.resume_source = "other"  # the command was reported by the next authority itself
    report_agent(rec, source="other", agent="other", state="idle", message=None, ref=None, seq=1)
    assert rec.resume_argv == ["my-agent", "--resume"]


def test_a_native_report_records_its_session_only_with_a_fresh_seq() -> None:
    claude = SessionRef("herdr:claude", "claude", "id", "c1")
    rec = AgentRecord()
    assert not report_agent(
        rec, source="herdr:claude", agent="claude", state="working", message=None, ref=claude, seq=3
    )
    assert rec.session == claude and rec.authority is None
    later = SessionRef("herdr:claude", "claude", "id", "c2")
    report_agent(
        rec, source="herdr:claude", agent="claude", state="idle", message=None, ref=later, seq=2
    )
    assert rec.seqs == {"herdr:claude": 3}


def test_a_session_only_source_never_becomes_the_authority() -> None:
    rec = AgentRecord(detected="hermes")
    ref = SessionRef("herdr:hermes", "hermes", "id", "h1")
    assert not report_agent(
        rec, source="herdr:hermes", agent="hermes", state="working", message=None, ref=ref, seq=1
    )
    assert rec.authority is None and rec.seqs == {}


def test_a_report_for_a_known_agent_other_than_the_detected_one_is_ignored() -> None:
    rec = AgentRecord(detected="codex")
    assert not report_agent(
        rec, source="my-wrapper", agent="claude", state="working", message=None, ref=None, seq=1
    )
    assert rec.authority is None


def test_only_the_newest_report_waits_for_its_process_with_its_seq_and_message() -> None:
    rec = AgentRecord()
    a = pi_session("a")
    report_agent(rec, source=PI, agent="pi", state="working", message="m1", ref=a, seq=5)
    assert rec.parked is not None and (rec.parked.seq, rec.parked.message) == (5, "m1")
    # an older or equal seq does not replace it
    for seq in (4, 5):
        report_agent(rec, source=PI, agent="pi", state="idle", message="old", ref=a, seq=seq)
        assert (rec.parked.seq, rec.parked.message) == (5, "m1")
    report_agent(rec, source=PI, agent="pi", state="blocked", message="m2", ref=a, seq=6)
    assert (rec.parked.seq, rec.parked.state, rec.parked.message) == (6, "blocked", "m2")
    # a report without a session or a seq cannot wait
    report_agent(rec, source=PI, agent="pi", state="idle", message=None, ref=None, seq=9)
    report_agent(rec, source=PI, agent="pi", state="idle", message=None, ref=a, seq=None)
    assert rec.parked.seq == 6


def test_a_parked_report_waits_only_above_the_sources_seq() -> None:
    rec, first = anchored_pi(seq=10)
    rec.detected = None  # the process went: later reports wait for it
    report_agent(rec, source=PI, agent="pi", state="idle", message=None, ref=first, seq=10)
    assert rec.parked is None
    report_agent(rec, source=PI, agent="pi", state="idle", message=None, ref=first, seq=11)
    assert rec.parked is not None and rec.parked.seq == 11


def test_a_parked_report_applies_once_its_session_is_stored() -> None:
    rec = AgentRecord()
    a = pi_session("a")
    report_agent(rec, source=PI, agent="pi", state="working", message="on it", ref=a, seq=5)
    report_session(rec, source=PI, ref=a, start="startup", seq=4)
    assert rec.session is None  # held: the process is not detected yet
    rec.detected = "pi"
    assert replay_parked(rec) is True
    assert rec.session == a and rec.parked is None
    assert rec.authority == Authority(PI, "pi", "working", "on it")
    assert rec.seqs[PI] == 5
    rec.name = "impl"
    assert rec.name_owner == NameOwner("pi", a)


def test_a_held_selection_is_stored_through_opencodes_rules() -> None:
    rec = AgentRecord()
    ref = opencode_session("s1")
    report_session(rec, source=OPENCODE, ref=ref, start="select", seq=None)
    assert replay_parked(rec) is False  # not detected yet
    rec.detected = "opencode"
    assert replay_parked(rec) is False  # stored, but no report was waiting
    assert rec.session == ref and rec.held is None


def test_a_report_parked_for_another_session_is_dropped_when_one_is_stored() -> None:
    rec = AgentRecord()
    report_agent(
        rec, source=PI, agent="pi", state="working", message=None, ref=pi_session("a"), seq=5
    )
    rec.held = pi_session("b")
    rec.detected = "pi"
    assert replay_parked(rec) is False
    assert rec.session == pi_session("b") and rec.parked is None and rec.authority is None


# -- names -----------------------------------------------------------------------------


def test_a_name_follows_its_agent_and_session_and_goes_with_another() -> None:
    rec, first = anchored_pi()
    rec.name = "impl"
    assert rec.name_owner == NameOwner("pi", first)
    report_agent(
        rec, source="my-agent", agent="my-agent", state="idle", message=None, ref=None, seq=1
    )
    assert rec.name is None  # another agent took the pane


def test_an_unowned_name_is_adopted_and_completed_with_the_session() -> None:
    rec = AgentRecord(detected="pi")
    object.__setattr__(rec, "name", "impl")  # a name restored before anything reported
    assert rec.name_owner is None
    report_session(rec, source=PI, ref=pi_session("a"), start="startup", seq=1)
    assert rec.name == "impl" and rec.name_owner == NameOwner("pi", pi_session("a"))


def test_a_name_given_to_an_agent_gets_its_session_once_it_reports_one() -> None:
    rec = AgentRecord(detected="pi")
    rec.name = "impl"
    assert rec.name_owner == NameOwner("pi", None)
    report_session(rec, source=PI, ref=pi_session("a"), start="startup", seq=1)
    assert rec.name_owner == NameOwner("pi", pi_session("a"))


def test_a_managed_launch_keeps_its_name_for_its_kind_and_only_its_kind() -> None:
    rec = AgentRecord(managed_kind="pi")
    object.__setattr__(rec, "name", "impl")
    report_agent(
        rec,
        source="herdr:claude",
        agent="claude",
        state="idle",
        message=None,
        ref=SessionRef("herdr:claude", "claude", "id", "c"),
        seq=1,
    )
    assert rec.name is None  # another kind took the pane
    kept = AgentRecord(managed_kind="pi", detected="pi")
    object.__setattr__(kept, "name", "impl")
    report_session(kept, source=PI, ref=pi_session("a"), start="startup", seq=1)
    assert kept.name == "impl"
    owned = AgentRecord(managed_kind="pi")
    object.__setattr__(owned, "name", "impl")
    report_agent(
        owned, source="my-agent", agent="my-agent", state="idle", message=None, ref=None, seq=1
    )
    assert owned.name is None


# -- the effective state ---------------------------------------------------------------


def test_a_visible_block_overrides_a_custom_authority_only_for_its_own_agent() -> None:
    rec = custom_authority(detected="my-agent", screen_state="blocked")
    assert effective(rec) == ("my-agent", "blocked")
    rec.screen_state = "idle"
    assert effective(rec) == ("my-agent", "working")
    other = custom_authority(detected="codex", screen_state="blocked")
    assert effective(other) == ("my-agent", "working")
    full, _first = anchored_pi()
    full.screen_state = "blocked"
    assert effective(full) == ("pi", "working")  # a full authority is not second-guessed


def test_a_snapshot_and_a_commit_carry_the_launch_and_the_release() -> None:
    rec = custom_authority()
    before = AgentBook.snapshot(rec, "working", True)
    assert before == Snapshot("my-agent", "working", True, None, False)
    assert AgentBook.snapshot(rec, "idle", False, launch_pending=True).launch_pending is True
    update = AgentBook().commit(rec, before, active_tab=False)
    assert update.released is False and update.state_changed is False
    rec.acquiring = True
    rec.authority = Authority("my-agent", "my-agent", "idle")
    update = AgentBook().commit(rec, before, active_tab=False)
    assert rec.acquiring is False and update.seen is True  # ready, not done


# -- the last edges --------------------------------------------------------------------


def test_a_bad_id_leaves_a_good_path_usable() -> None:
    assert session_ref(PI, "pi", "a\x1fb", "/s/a.jsonl") == SessionRef(
        PI, "pi", "path", "/s/a.jsonl"
    )


def test_a_report_without_its_session_keeps_the_names_session() -> None:
    rec, first = anchored_pi(seq=10)
    rec.name = "impl"
    report_agent(rec, source=PI, agent="pi", state="idle", message=None, ref=None, seq=11)
    assert rec.name_owner == NameOwner("pi", first)
    report_session(rec, source=PI, ref=pi_session("b"), start="new", seq=12)
    assert rec.name is None  # the name belonged to the replaced session


def test_a_first_report_parks_whatever_its_seq() -> None:
    for seq in (0, 1):
        rec = AgentRecord()
        report_agent(
            rec, source=PI, agent="pi", state="idle", message=None, ref=pi_session("a"), seq=seq
        )
        assert rec.parked is not None and rec.parked.seq == seq


def test_a_report_of_another_source_replaces_the_parked_one_whatever_their_seqs() -> None:
    rec = AgentRecord()
    omp = SessionRef("herdr:omp", "omp", "path", "/o.jsonl")
    report_agent(rec, source="herdr:omp", agent="omp", state="idle", message=None, ref=omp, seq=9)
    report_agent(
        rec, source=PI, agent="pi", state="working", message=None, ref=pi_session("a"), seq=2
    )
    assert rec.parked is not None and (rec.parked.source, rec.parked.seq) == (PI, 2)


def test_a_replayed_report_keeps_the_sources_higher_seq() -> None:
    rec = AgentRecord()
    a = pi_session("a")
    report_agent(rec, source=PI, agent="pi", state="working", message=None, ref=a, seq=5)
    report_session(rec, source=PI, ref=a, start="startup", seq=7)
    rec.detected = "pi"
    assert replay_parked(rec) is True
    assert rec.seqs[PI] == 7


def test_a_live_report_drops_its_sources_parked_one_and_only_that() -> None:
    rec, first = anchored_pi(seq=10)
    rec.detected = None
    report_agent(rec, source=PI, agent="pi", state="blocked", message=None, ref=first, seq=11)
    assert rec.parked is not None
    rec.detected = "pi"
    assert report_agent(rec, source=PI, agent="pi", state="idle", message=None, ref=first, seq=12)
    assert rec.parked is None
    other = AgentRecord()
    omp = SessionRef("herdr:omp", "omp", "path", "/o.jsonl")
    report_agent(other, source="herdr:omp", agent="omp", state="idle", message=None, ref=omp, seq=3)
    report_agent(other, source="x", agent="x", state="idle", message=None, ref=None, seq=1)
    assert other.parked is not None and other.parked.source == "herdr:omp"


def test_a_selection_held_while_opencode_flapped_drops_the_previous_sessions_authority() -> None:
    rec = AgentRecord(detected="opencode")
    first = opencode_session("s1")
    report_session(rec, source=OPENCODE, ref=first, start="select", seq=None)
    report_agent(
        rec, source=OPENCODE, agent="opencode", state="working", message=None, ref=first, seq=1
    )
    rec.detected = None  # the process is not seen for a moment
    second = opencode_session("s2")
    report_session(rec, source=OPENCODE, ref=second, start="select", seq=None)
    rec.detected = "opencode"
    replay_parked(rec)
    assert rec.session == second and rec.authority is None
    assert rec.stale == {OPENCODE: [first]}


def test_an_official_session_report_with_an_old_seq_is_refused() -> None:
    rec = AgentRecord()
    c1, c2 = (SessionRef("herdr:claude", "claude", "id", v) for v in ("c1", "c2"))
    assert report_session(rec, source="herdr:claude", ref=c1, start="startup", seq=5) is True
    assert report_session(rec, source="herdr:claude", ref=c2, start="clear", seq=4) is False
    assert rec.session == c1
    assert report_session(rec, source="herdr:claude", ref=c2, start="clear", seq=6) is True
    assert rec.session == c2
