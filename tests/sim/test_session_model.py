"""The pure session model: ids never reused, id parsing, focus rules, closes and moves."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from herdr_sim.model.session import PaneRef, Session


def make() -> tuple[Session, PaneRef]:
    session = Session()
    _ws, _tab, pane = session.create_workspace("/tmp", None, focus=False)
    return session, session.locate(pane.key)


def test_first_workspace_is_focused_and_numbered() -> None:
    session, ref = make()
    assert ref.pane_id == "w1:p1"
    assert ref.tab_id == "w1:t1"
    assert session.is_focused(ref)


def test_closed_pane_numbers_are_not_reused() -> None:
    session, ref = make()
    p2 = session.split(ref, "right", None, "/tmp", focus=False)
    p3 = session.split(ref, "down", None, "/tmp", focus=False)
    session.close_pane(session.locate(p2.key))
    p4 = session.split(ref, "right", None, "/tmp", focus=False)
    assert session.locate(p3.key).pane_id == "w1:p3"
    assert session.locate(p4.key).pane_id == "w1:p4"
    assert session.find_pane("w1:p2") is None


def test_workspace_numbers_are_not_reused() -> None:
    session, _ = make()
    ws2, _, _ = session.create_workspace("/tmp", None, focus=False)
    session.close_workspace(ws2)
    ws3, _, _ = session.create_workspace("/tmp", None, focus=False)
    assert ws3.public_id == "w3"


def test_new_tab_root_takes_next_pane_number() -> None:
    session, ref = make()
    tab, pane = session.create_tab(ref.workspace, "/tmp", None, focus=False)
    assert ref.workspace.tab_id(tab) == "w1:t2"
    assert session.locate(pane.key).pane_id == "w1:p2"


def test_legacy_and_positional_forms() -> None:
    session, ref = make()
    session.create_workspace("/tmp", None, focus=False)
    assert session.find_workspace("1") is ref.workspace
    assert session.find_workspace("w_1") is ref.workspace
    assert session.find_pane("w1-1") == ref
    assert session.find_pane("1-1") == ref
    assert session.find_pane(f"p_{ref.pane.key}") == ref
    found = session.find_tab("w1:1")
    assert found is not None and found[1] is ref.tab
    found = session.find_tab("t_w1_1")
    assert found is not None and found[1] is ref.tab
    assert session.find_pane("w1:p9") is None
    assert session.find_tab("w1:t9") is None
    assert session.find_workspace("w9") is None


def test_default_tab_label_is_position_and_number_is_stable() -> None:
    session, ref = make()
    ws = ref.workspace
    session.create_tab(ws, "/tmp", None, False)
    t3, _ = session.create_tab(ws, "/tmp", None, False)
    session.close_tab(ws, ws.tabs[0])
    assert t3.number == 3
    assert ws.tabs.index(t3) + 1 == 2


def test_cross_workspace_move_leaves_an_alias() -> None:
    session, ref = make()
    other, _, _ = session.create_workspace("/tmp", None, focus=False)
    p2 = session.split(ref, "right", None, "/tmp", focus=False)
    old = session.locate(p2.key)
    session.detach_pane(old)
    other.tabs[0].layout.split(other.tabs[0].layout.focused, p2.key, "right", None)
    old_id = session.renumber_into(p2, ref.workspace, other)
    assert old_id == "w1:p2"
    assert session.locate(p2.key).pane_id == "w2:p2"
    assert session.find_pane("w1:p2") == session.locate(p2.key)


def test_closing_last_pane_closes_tab_then_workspace() -> None:
    session, ref = make()
    _, pane = session.create_tab(ref.workspace, "/tmp", None, False)
    assert session.close_pane(session.locate(pane.key)) == "tab"
    assert session.close_pane(ref) == "workspace"
    assert session.workspaces == []
    assert session.active is None


class SessionMachine(RuleBasedStateMachine):
    """Random creates, splits and closes never reuse an id and keep focus valid."""

    def __init__(self) -> None:
        super().__init__()
        self.session = Session()
        self.issued: set[str] = set()

    def _record(self) -> None:
        for ref in self.session.all_panes():
            self.issued.add(f"{ref.pane_id}#{ref.pane.key}")

    @rule()
    def create_workspace(self) -> None:
        self.session.create_workspace("/tmp", None, focus=False)
        self._record()

    @precondition(lambda self: self.session.workspaces)
    @rule(
        index=st.integers(min_value=0, max_value=50), direction=st.sampled_from(["right", "down"])
    )
    def split(self, index: int, direction: str) -> None:
        refs = self.session.all_panes()
        ref = refs[index % len(refs)]
        if len(ref.tab.layout) < 24:
            self.session.split(ref, direction, None, "/tmp", focus=index % 2 == 0)  # type: ignore[arg-type]
            self._record()

    @precondition(lambda self: self.session.workspaces)
    @rule(index=st.integers(min_value=0, max_value=50))
    def new_tab(self, index: int) -> None:
        ws = self.session.workspaces[index % len(self.session.workspaces)]
        self.session.create_tab(ws, "/tmp", None, focus=index % 3 == 0)
        self._record()

    @precondition(lambda self: self.session.workspaces)
    @rule(index=st.integers(min_value=0, max_value=50))
    def close_pane(self, index: int) -> None:
        refs = self.session.all_panes()
        self.session.close_pane(refs[index % len(refs)])

    @invariant()
    def ids_are_unique_and_never_reused(self) -> None:
        live = [ref.pane_id for ref in self.session.all_panes()]
        assert len(live) == len(set(live))
        # a public id always names the same pane key it was first given to
        by_id: dict[str, str] = {}
        for entry in self.issued:
            public, key = entry.split("#")
            assert by_id.setdefault(public, key) == key

    @invariant()
    def focus_is_valid(self) -> None:
        if self.session.workspaces:
            assert self.session.active is not None
            focused = self.session.focused_pane()
            assert focused is not None and self.session.is_focused(focused)
        else:
            assert self.session.active is None


SessionMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
test_session_machine = SessionMachine.TestCase
