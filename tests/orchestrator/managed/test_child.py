"""The managed child's protocol brain (:class:`ManagedChild`) on a real mailbox.

The controller's side is played by posting records straight into the :class:`Mailbox`;
the driver's side by calling the brain's event methods, as the fake pi and the pi
extension's bridge do. Time is a :class:`ManualClock`, so the 5 s activity throttle is
tested without waiting.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from orchestrator.managed.child import ACTIVITY_THROTTLE_S, RESULT_TEXT_LIMIT_BYTES, ManagedChild
from orchestrator.managed.child_state import read_state
from orchestrator.managed.clock import ManualClock
from orchestrator.managed.env import PANE_ENV, ChildEnvError, ChildIdentity, child_env
from orchestrator.managed.mailbox import Box, Kind, Mailbox, MailboxError, Message

WORKSPACE = "w1"
LABEL = "scout"


def identity_env(root: Path, **overrides: str) -> dict[str, str]:
    """A valid child environment for a mailbox under ``root`` (``overrides`` replace)."""
    box = Mailbox(root, WORKSPACE, LABEL)
    env = child_env(
        mailbox_dir=box.path,
        run_id=str(uuid.uuid4()),
        owner_session_id="owner-1",
        label=LABEL,
        workspace_id=WORKSPACE,
        definition="scout",
        python="/usr/bin/python3",
    )
    env[PANE_ENV] = "w1:p3"
    env.update(overrides)
    return env


class Wall:
    """A wall clock a test moves by hand."""

    def __init__(self, now: float = 1_764_600_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_child(root: Path, clock: ManualClock | None = None) -> tuple[ManagedChild, Mailbox]:
    """A child that said hello, and the owner's view of its mailbox."""
    identity = ChildIdentity.from_env(identity_env(root))
    child = ManagedChild(identity, clock=clock or ManualClock(), wall=Wall())
    child.hello(pi_session_id="sess-1", pi_session_file=None, cwd="/work", pid=os.getpid())
    return child, Mailbox(root, WORKSPACE, LABEL)


def in_a_turn(root: Path) -> tuple[ManagedChild, Mailbox, Message]:
    """A child in the first turn of the task "t" (posted, polled, its turn started)."""
    child, box = make_child(root)
    task = box.post(Kind.TASK, "t")
    child.poll()
    child.turn_start()
    return child, box, task


def to_owner(box: Mailbox) -> list[Message]:
    return box.pending(Box.TO_OWNER)


def test_hello_writes_the_readiness_state(tmp_path: Path) -> None:
    child, box = make_child(tmp_path)
    state = read_state(box.path)
    assert state is not None
    assert state == child.state
    assert (state.run_id, state.label, state.pane_id) == (child.identity.run_id, LABEL, "w1:p3")
    assert (state.operation, state.active_request_id, state.completed_request_id) == (
        "idle",
        None,
        None,
    )
    raw = json.loads((box.path / "state.json").read_text())
    assert raw["version"] == 4 and raw["piSessionFile"] is None
    with pytest.raises(MailboxError, match="already"):
        child.hello(pi_session_id="s", pi_session_file=None, cwd="/w", pid=1)


def test_calls_before_hello_are_refused(tmp_path: Path) -> None:
    child = ManagedChild(ChildIdentity.from_env(identity_env(tmp_path)), clock=ManualClock())
    for call in (child.poll, child.turn_start, child.tool_end, lambda: child.ask("q")):
        with pytest.raises(MailboxError, match="hello") as caught:
            call()
        assert caught.value.category == "invalid_request"


def test_task_to_one_completed_result(tmp_path: Path) -> None:
    child, box = make_child(tmp_path)
    task = box.post(Kind.TASK, "find the bug")
    (action,) = child.poll()
    assert (action.do, action.text, action.request_id) == (
        "start_turn",
        "find the bug",
        task.message_id,
    )
    assert box.pending(Box.TO_CHILD) == []  # consumed = acknowledged
    assert read_state(box.path).active_request_id == task.message_id  # type: ignore[union-attr]
    child.turn_start()
    child.tool_start()
    child.tool_end()
    assert child.turn_end("  it is in parse()  ") == "completed"
    (result,) = to_owner(box)
    assert (result.kind, result.status, result.text) == (
        Kind.RESULT,
        "completed",
        "it is in parse()",
    )
    assert result.assignment_id == task.message_id
    state = read_state(box.path)
    assert state is not None
    assert (state.operation, state.active_request_id, state.completed_request_id) == (
        "idle",
        None,
        task.message_id,
    )
    # exactly one result: a second turn end posts nothing
    child.turn_start()
    assert child.turn_end("more") is None
    assert [m.kind for m in box.history()].count(Kind.RESULT) == 1


@pytest.mark.parametrize("text", [None, "", "  \n "])
def test_no_assistant_text_is_a_failed_empty_result(tmp_path: Path, text: str | None) -> None:
    child, box = make_child(tmp_path)
    box.post(Kind.TASK, "t")
    child.poll()
    child.turn_start()
    assert child.turn_end(text) == "failed"
    (result,) = to_owner(box)
    assert result.status == "failed" and result.text.startswith("empty_result: ")


def test_an_oversized_final_text_is_a_failed_result_too_large(tmp_path: Path) -> None:
    child, box = make_child(tmp_path)
    box.post(Kind.TASK, "t")
    child.poll()
    child.turn_start()
    assert child.turn_end("x" * (RESULT_TEXT_LIMIT_BYTES + 1)) == "failed"
    (result,) = to_owner(box)
    assert result.text.startswith("result_too_large: ")


def test_a_turn_without_an_assignment_posts_nothing(tmp_path: Path) -> None:
    child, box = make_child(tmp_path)
    child.turn_start()
    assert read_state(box.path).operation == "working"  # type: ignore[union-attr]
    assert child.turn_end("hello") is None
    assert box.history() == [] and read_state(box.path).operation == "idle"  # type: ignore[union-attr]


def test_a_task_waits_while_a_typed_turn_runs(tmp_path: Path) -> None:
    child, box = make_child(tmp_path)
    child.turn_start()  # a prompt typed into pi before the task came
    task = box.post(Kind.TASK, "t")
    assert child.poll() == []
    assert box.pending(Box.TO_CHILD) == [task]  # not taken, not consumed
    child.turn_end("typed answer")
    (action,) = child.poll()
    assert action.do == "start_turn" and action.request_id == task.message_id


def test_ask_reply_result(tmp_path: Path) -> None:
    child, box, task = in_a_turn(tmp_path)
    ask_id = child.ask("A or B?")
    (ask,) = to_owner(box)
    assert (ask.kind, ask.message_id, ask.text, ask.assignment_id) == (
        Kind.ASK,
        ask_id,
        "A or B?",
        task.message_id,
    )
    # a second ask in the same turn is refused
    with pytest.raises(MailboxError, match="already waiting") as caught:
        child.ask("again?")
    assert caught.value.category == "agent_busy"
    assert child.turn_end("I asked") is None  # the ask turn ends asking, no result
    assert read_state(box.path).operation == "asking"  # type: ignore[union-attr]
    box.consume(ask)
    reply = box.post(Kind.REPLY, "B", assignment_id=task.message_id, ask_id=ask_id)
    (action,) = child.poll()
    assert (action.do, action.text, action.request_id) == ("start_turn", "B", reply.message_id)
    assert child.state.operation == "working"
    child.turn_start()
    assert child.turn_end("did B") == "completed"
    assert [m.kind for m in to_owner(box)] == [Kind.RESULT]


def test_ask_is_refused_without_assignment_blank_or_with_a_control_waiting(
    tmp_path: Path,
) -> None:
    child, box = make_child(tmp_path)
    child.turn_start()
    with pytest.raises(MailboxError, match="no active assignment"):
        child.ask("q")
    child.turn_end(None)
    task = box.post(Kind.TASK, "t")
    child.poll()
    child.turn_start()
    with pytest.raises(MailboxError, match="blank") as caught:
        child.ask("  ")
    assert caught.value.category == "invalid_request"
    # a steer posted but not yet polled: the ask would strand it
    box.post(Kind.STEER, "also docs", assignment_id=task.message_id)
    with pytest.raises(MailboxError, match="unconsumed") as caught:
        child.ask("q")
    assert caught.value.category == "agent_busy"
    # handed to pi but not yet at a steering boundary
    (steer,) = child.poll()
    assert steer.do == "steer"
    with pytest.raises(MailboxError, match="control request is still pending"):
        child.ask("q")
    child.tool_end()
    assert child.ask("q")  # delivered at the boundary: now it may ask
    assert box.pending_ask() is not None


def test_steer_is_queued_while_working_and_starts_a_turn_while_idle(tmp_path: Path) -> None:
    child, box, task = in_a_turn(tmp_path)
    box.post(Kind.STEER, "s1", assignment_id=task.message_id)
    box.post(Kind.STEER, "s2", assignment_id=task.message_id)
    assert [(a.do, a.text) for a in child.poll()] == [("steer", "s1"), ("steer", "s2")]
    assert child.turn_end("done with steers") == "completed"


def test_a_control_posted_as_the_turn_ends_starts_the_next_turn_not_a_result(
    tmp_path: Path,
) -> None:
    child, box, task = in_a_turn(tmp_path)
    box.post(Kind.STEER, "late", assignment_id=task.message_id)  # not polled yet
    assert child.turn_end("first answer") is None
    assert to_owner(box) == [] and child.state.operation == "idle"
    (action,) = child.poll()
    assert (action.do, action.text) == ("start_turn", "late")
    child.turn_start()
    assert child.turn_end("final") == "completed"
    (result,) = to_owner(box)
    assert result.text == "final"


def test_interrupt_aborts_drops_steers_and_continues_the_assignment(tmp_path: Path) -> None:
    child, box, task = in_a_turn(tmp_path)
    box.post(Kind.STEER, "queued", assignment_id=task.message_id)
    assert [a.do for a in child.poll()] == ["steer"]
    box.post(Kind.INTERRUPT, "stop; do X", assignment_id=task.message_id)
    (action,) = child.poll()
    assert (action.do, action.text) == ("abort_and_start", "stop; do X")
    # the aborted turn ends: no result, still the same assignment
    assert child.turn_end("partial") is None
    assert to_owner(box) == []
    assert child.state.active_request_id == task.message_id
    child.turn_start()
    assert child.ask("ok to do X?")
    child.turn_end(None)
    assert child.state.operation == "asking"


def test_an_interrupt_in_the_same_poll_supersedes_the_steer_before_it(tmp_path: Path) -> None:
    """A steer and an interrupt arriving between two polls: only the interrupt is handed
    over (the steer never reaches pi, which would queue it after its own abort), and both
    records are consumed so neither comes again."""
    child, box, task = in_a_turn(tmp_path)
    box.post(Kind.STEER, "superseded steer", assignment_id=task.message_id)
    box.post(Kind.INTERRUPT, "do X instead", assignment_id=task.message_id)
    box.post(Kind.STEER, "after the interrupt", assignment_id=task.message_id)
    actions = [(a.do, a.text) for a in child.poll()]
    assert actions == [("abort_and_start", "do X instead"), ("steer", "after the interrupt")]
    assert box.pending(Box.TO_CHILD) == []
    assert child.poll() == []


def test_interrupt_while_idle_starts_a_turn(tmp_path: Path) -> None:
    child, box, task = in_a_turn(tmp_path)
    box.post(Kind.STEER, "s", assignment_id=task.message_id)
    child.turn_end("x")  # the steer is unconsumed: no result, idle
    box.post(Kind.INTERRUPT, "i", assignment_id=task.message_id)
    assert [(a.do, a.text) for a in child.poll()] == [("start_turn", "s"), ("abort_and_start", "i")]


def test_activity_writes_are_throttled_to_one_per_five_seconds(tmp_path: Path) -> None:
    clock = ManualClock()
    child, box = make_child(tmp_path, clock)
    wall = child._wall
    assert isinstance(wall, Wall)
    box.post(Kind.TASK, "t")
    child.poll()
    child.turn_start()
    written = read_state(box.path)
    assert written is not None
    wall.now += 1
    clock.advance(1)
    child.tool_start()
    assert read_state(box.path) == written  # activity only, inside 5 s: not written
    assert child.state.last_activity_at == wall.now  # but kept
    wall.now += ACTIVITY_THROTTLE_S
    clock.advance(ACTIVITY_THROTTLE_S)
    child.tool_end()
    after = read_state(box.path)
    assert after is not None and after.last_activity_at == wall.now
    # a change of operation is written at once, throttle or not
    wall.now += 0.5
    clock.advance(0.5)
    child.turn_end("done")
    final = read_state(box.path)
    assert final is not None and final.operation == "idle" and final.updated_at == wall.now


def test_session_file_is_reported(tmp_path: Path) -> None:
    child, box = make_child(tmp_path)
    child.session_file("/home/u/.pi/agent/sessions/x.jsonl")
    assert read_state(box.path).pi_session_file == "/home/u/.pi/agent/sessions/x.jsonl"  # type: ignore[union-attr]


def test_a_corrupt_record_is_an_error_and_is_left_in_place(tmp_path: Path) -> None:
    child, box = make_child(tmp_path)
    bad = box.path / "to-child" / f"{uuid.uuid4()}.json"
    bad.write_text("{not json")
    with pytest.raises(MailboxError) as caught:
        child.poll()
    assert caught.value.category == "internal_failure"
    assert bad.exists()


def test_a_symlinked_mailbox_dir_is_refused(tmp_path: Path) -> None:
    env = identity_env(tmp_path)
    real = tmp_path / "elsewhere"
    real.mkdir()
    target = Path(env["PI_HERDSMAN_MAILBOX"])
    target.parent.mkdir(parents=True, mode=0o700)
    target.symlink_to(real)
    child = ManagedChild(ChildIdentity.from_env(env), clock=ManualClock())
    with pytest.raises(MailboxError) as caught:
        child.hello(pi_session_id="s", pi_session_file=None, cwd="/w", pid=1)
    assert caught.value.category == "internal_failure"
    assert list(real.iterdir()) == []


def test_a_reply_racing_the_end_of_the_asking_turn_is_neither_lost_nor_a_result(
    tmp_path: Path,
) -> None:
    child, box, task = in_a_turn(tmp_path)
    ask_id = child.ask("A or B?")
    # the owner answers before pi has ended the asking turn
    reply = box.post(Kind.REPLY, "B", assignment_id=task.message_id, ask_id=ask_id)
    assert child.poll() == []
    assert box.pending(Box.TO_CHILD) == [reply]  # kept, not consumed and dropped
    assert child.turn_end(None) is None  # no result: the reply is still to be answered
    assert [m.kind for m in to_owner(box)] == [Kind.ASK]
    (action,) = child.poll()
    assert (action.do, action.text) == ("start_turn", "B")
    child.turn_start()
    assert child.turn_end("did B") == "completed"


def test_a_turn_typed_while_asking_does_not_complete_the_assignment(tmp_path: Path) -> None:
    child, box = make_child(tmp_path)
    box.post(Kind.TASK, "t")
    child.poll()
    child.turn_start()
    child.ask("q")
    child.turn_end(None)
    child.turn_start()  # someone typed into the asking child's pi
    assert child.turn_end("typed answer") is None
    assert child.state.operation == "asking"
    assert [m.kind for m in to_owner(box)] == [Kind.ASK]


def test_an_interrupt_before_the_turn_started_still_aborts_that_turn(tmp_path: Path) -> None:
    child, box = make_child(tmp_path)
    task = box.post(Kind.TASK, "t")
    box.post(Kind.INTERRUPT, "i", assignment_id=task.message_id)
    # one poll hands both: the task's turn is about to start when the interrupt comes
    assert [a.do for a in child.poll()] == ["start_turn", "abort_and_start"]
    child.turn_start()  # the task's turn starts, then is aborted
    assert child.turn_end("partial") is None
    child.turn_start()  # the interrupt's turn
    assert child.turn_end("final") == "completed"
    (result,) = to_owner(box)
    assert result.text == "final"


def test_two_interrupts_each_swallow_one_aborted_end(tmp_path: Path) -> None:
    child, box, task = in_a_turn(tmp_path)
    for text in ("i1", "i2"):
        box.post(Kind.INTERRUPT, text, assignment_id=task.message_id)
    assert [a.do for a in child.poll()] == ["abort_and_start", "abort_and_start"]
    with pytest.raises(MailboxError, match="not eligible"):
        child.ask("q")  # an abort is in flight
    assert child.turn_end("aborted") is None
    child.turn_start()
    assert child.turn_end("i1 turn, aborted too") is None
    child.turn_start()
    assert child.turn_end("i2 turn") == "completed"
    assert [m.text for m in to_owner(box)] == ["i2 turn"]


def test_a_compaction_under_pressure_retires_the_session_before_the_result(
    tmp_path: Path,
) -> None:
    """contextRetirement (on by default): pi's own compaction during an assignment marks
    the session retired in state.json, before the result; a ``threshold`` compaction is
    cancelled (the agent hands off), an ``overflow`` one proceeds."""
    child, box = make_child(tmp_path)
    assert child.context_pressure("threshold") == (False, False)  # no assignment yet
    box.post(Kind.TASK, "t")
    child.poll()
    child.turn_start()
    assert child.context_pressure("manual") == (False, False)  # the user's /compact
    assert child.context_pressure("threshold") == (True, True)
    assert child.retired
    state = read_state(box.path)
    assert state is not None and state.session_retired
    assert json.loads((box.path / "state.json").read_text())["sessionRetired"] is True
    assert child.context_pressure("overflow") == (True, False)
    assert child.turn_end("handoff: done X, next Y") == "completed"
    after = read_state(box.path)
    assert after is not None and after.session_retired and after.completed_request_id


def test_without_context_retirement_a_compaction_changes_nothing(tmp_path: Path) -> None:
    env = identity_env(tmp_path, PI_HERDSMAN_CONTEXT_RETIREMENT="0")
    child = ManagedChild(ChildIdentity.from_env(env), clock=ManualClock(), wall=Wall())
    child.hello(pi_session_id="s", pi_session_file=None, cwd="/work", pid=os.getpid())
    box = Mailbox(tmp_path, WORKSPACE, LABEL)
    box.post(Kind.TASK, "t")
    child.poll()
    child.turn_start()
    assert child.context_pressure("threshold") == (False, False)
    assert "sessionRetired" not in json.loads((box.path / "state.json").read_text())
    with pytest.raises(ChildEnvError, match="PI_HERDSMAN_CONTEXT_RETIREMENT is not 0 or 1"):
        ChildIdentity.from_env(identity_env(tmp_path, PI_HERDSMAN_CONTEXT_RETIREMENT="yes"))
