"""The pure agent engine (:mod:`herdr_sim.model.agents`): example rules and properties.

Properties over random report sequences: per-source ``seq`` never goes back and a stale or
late unsequenced report changes nothing; the global ``state_change_seq`` moves exactly when
a terminal's effective state changes; ``done`` is exactly idle-and-unseen, and only a
completion transition outside the active tab makes a pane unseen.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herdr_sim.model import agents
from herdr_sim.model.agents import AgentBook, AgentRecord, AgentState, Update

# -- pure helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "label"),
    [("claude-code", "claude"), ("Kiro-CLI", "kiro"), ("opencode.exe", "opencode"),
     (" docs-bot ", "docs-bot"), ("pi", "pi"), ("", None), ("   ", None)],
)  # fmt: skip
def test_normalize_label(text: str, label: str | None) -> None:
    assert agents.normalize_label(text) == label


@pytest.mark.parametrize(
    ("source", "agent", "kind"),
    [("herdr:pi", "pi", "full"), ("herdr:claude", "claude", "native"),
     ("herdr:hermes", "hermes", "session_only"), ("herdr:antigravity_cli", "agy", "session_only"),
     ("herdr:qwen", "qwen", "native"), ("herdr:pi", "claude", "custom"),
     ("custom:pi", "pi", "custom"), ("herdr:foo", "foo", "custom")],
)  # fmt: skip
def test_source_classes(source: str, agent: str, kind: str) -> None:
    assert agents.classify(source, agent) == kind


def test_public_status_done_is_idle_unseen() -> None:
    assert [agents.public_status("idle", False), agents.public_status("idle", True)] == [
        "done",
        "idle",
    ]
    assert agents.public_status("working", False) == "working"


@pytest.mark.parametrize(
    ("before", "after", "labels", "completion"),
    [("working", "idle", ("a", "a"), True), ("blocked", "idle", (None, "a"), True),
     ("unknown", "idle", ("a", "a"), True), ("unknown", "idle", (None, "a"), False),
     ("unknown", "idle", ("a", "b"), False), ("idle", "idle", ("a", "a"), False),
     ("working", "blocked", ("a", "a"), False)],
)  # fmt: skip
def test_completion_transitions(
    before: AgentState, after: AgentState, labels: tuple[str | None, str | None], completion: bool
) -> None:
    assert agents.is_completion(before, after, *labels) is completion


def test_resume_argv_accepts_a_plain_command() -> None:
    assert agents.resume_argv_error(["my-agent", "--resume", "abc", "--model", "m"]) is None


def test_pi_session_prefers_the_path() -> None:
    ref = agents.session_ref("herdr:pi", "pi", "id-1", "/s.jsonl")
    assert ref is not None and (ref.kind, ref.value) == ("path", "/s.jsonl")
    ref = agents.session_ref("herdr:codex", "codex", "id-1", "/s.jsonl")
    assert ref is not None and (ref.kind, ref.value) == ("id", "id-1")


def test_custom_report_conflicting_with_the_detected_agent_is_ignored() -> None:
    rec = AgentRecord(detected="pi")
    accepted = agents.report_agent(
        rec, source="custom:x", agent="claude", state="working", message=None, ref=None, seq=None
    )
    assert not accepted and rec.authority is None


def test_visible_blocker_overrides_a_custom_hook_of_the_same_agent() -> None:
    rec = AgentRecord(detected="pi", screen_state="blocked")
    agents.report_agent(
        rec, source="custom:x", agent="pi", state="working", message=None, ref=None, seq=None
    )
    assert agents.effective(rec) == ("pi", "blocked")


# -- a pane driven by random operations ------------------------------------------------------------


@dataclass
class PaneSim:
    """A record plus the pane-level ``state``/``seen`` the runtime keeps."""

    rec: AgentRecord
    state: AgentState = "unknown"
    seen: bool = True

    def apply(self, book: AgentBook, op: tuple[Any, ...], active: bool) -> Update:
        before = book.snapshot(self.rec, self.state, self.seen)
        released = False
        kind = op[0]
        if kind == "report":
            _, source, agent, state, seq = op
            ref = agents.session_ref(source, agent, "s1", "/s1")
            agents.report_agent(
                self.rec, source=source, agent=agent, state=state, message=None, ref=ref, seq=seq
            )
        elif kind == "session":
            _, source, agent, seq = op
            ref = agents.session_ref(source, agent, "s1", "/s1")
            agents.report_session(self.rec, source=source, ref=ref, start="startup", seq=seq)
        elif kind == "release":
            _, source, agent, seq = op
            released = bool(agents.release(self.rec, source=source, agent=agent, seq=seq))
        elif kind == "clear":
            agents.clear_authority(self.rec, source=op[1], seq=op[2])
        elif kind == "detect":
            if op[1] is None and self.rec.detected is not None:
                released = agents.process_exited(self.rec)
            self.rec.detected = op[1]
            self.rec.screen_state = op[2] if op[1] is not None else "unknown"
        update = book.commit(self.rec, before, active_tab=active, released=released)
        self.state, self.seen = update.state, update.seen
        if kind == "focus":
            self.seen = True
        return update


SOURCES = st.sampled_from(["custom:a", "custom:b", "herdr:pi", "herdr:claude", "herdr:hermes"])
AGENT_LABELS = st.sampled_from(["pi", "claude", "hermes", "my-agent"])
STATES = st.sampled_from(["idle", "working", "blocked", "unknown"])
SEQS = st.one_of(st.none(), st.integers(min_value=0, max_value=8))
OPS = st.one_of(
    st.tuples(st.just("report"), SOURCES, AGENT_LABELS, STATES, SEQS),
    st.tuples(st.just("session"), SOURCES, AGENT_LABELS, SEQS),
    st.tuples(st.just("release"), SOURCES, AGENT_LABELS, SEQS),
    st.tuples(st.just("clear"), st.one_of(st.none(), SOURCES), SEQS),
    st.tuples(st.just("detect"), st.one_of(st.none(), st.just("pi")), STATES),
    st.tuples(st.just("focus")),
)
RUNS = st.lists(st.tuples(OPS, st.booleans()), max_size=40)


@settings(max_examples=300, deadline=None)
@given(RUNS)
def test_seq_never_goes_back_and_stale_reports_change_nothing(
    run: list[tuple[tuple[Any, ...], bool]],
) -> None:
    book, pane = AgentBook(), PaneSim(AgentRecord())
    for op, active in run:
        seqs = dict(pane.rec.seqs)
        source = op[1] if op[0] in ("report", "session", "release") else None
        seq = op[-1] if op[0] in ("report", "session", "release") else None
        stale = source is not None and (
            (seq is None and source in seqs) or (seq is not None and seq <= seqs.get(source, -1))
        )
        rec_before = copy.deepcopy(pane.rec)
        pane.apply(book, op, active)
        for name, last in seqs.items():
            assert pane.rec.seqs[name] >= last
        if stale:
            assert pane.rec == rec_before


@settings(max_examples=300, deadline=None)
@given(RUNS)
def test_state_change_seq_moves_exactly_on_effective_state_changes(
    run: list[tuple[tuple[Any, ...], bool]],
) -> None:
    book, pane = AgentBook(), PaneSim(AgentRecord())
    for op, active in run:
        counter, state = book.state_change_seq, pane.state
        update = pane.apply(book, op, active)
        changed = update.state != state
        assert book.state_change_seq == counter + (1 if changed else 0)
        assert update.state_changed is changed
        if changed:
            assert pane.rec.state_change_seq == book.state_change_seq
        assert pane.state == agents.effective(pane.rec)[1]


@settings(max_examples=300, deadline=None)
@given(RUNS)
def test_done_means_an_unseen_completion(run: list[tuple[tuple[Any, ...], bool]]) -> None:
    book, pane = AgentBook(), PaneSim(AgentRecord())
    for op, active in run:
        before = (pane.state, pane.seen, agents.effective(pane.rec)[0])
        update = pane.apply(book, op, active)
        status = agents.public_status(pane.state, pane.seen)
        assert (status == "done") == (pane.state == "idle" and not pane.seen)
        if pane.state != "idle":
            assert pane.seen
        if before[1] and not pane.seen:
            # only a completion transition outside the active tab hides a pane
            assert not active
            assert agents.is_completion(before[0], pane.state, before[2], update.label)
        if op[0] == "focus":
            assert status != "done"
