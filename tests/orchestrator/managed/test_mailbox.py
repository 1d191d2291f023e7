"""The managed-agent file mailbox (protocol V4): round trips, invariants and faults."""

from __future__ import annotations

import json
import os
import stat
import threading
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.client.file_trust import private_files as safe_fs
from orchestrator.managed.mailbox import (
    MARKER,
    NAMESPACE,
    PROTOCOL_VERSION,
    Box,
    Kind,
    Mailbox,
    MailboxError,
    Message,
    RecordError,
    control_marker,
    parse_control_marker,
)
from tests.orchestrator.managed.mailboxes import forged, make, plant, record_path


def test_constants_are_the_seeds_v4() -> None:
    assert PROTOCOL_VERSION == 4
    assert NAMESPACE == "mailboxes-v4"
    assert MARKER == "__PI_HERDSMAN_AGENT_V4__:"


def test_marker_round_trip_and_refusals() -> None:
    rid = str(uuid.uuid4())
    assert control_marker(rid) == f"__PI_HERDSMAN_AGENT_V4__:{rid}"
    assert parse_control_marker(control_marker(rid)) == rid
    assert parse_control_marker(f"__PI_HERDSMAN_AGENT_V5__:{rid}") is None
    assert parse_control_marker(control_marker(rid) + "\n") is None
    assert parse_control_marker("hello") is None


def test_layout_permissions_and_full_flow(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "Implement it")
    assert box.path.parent == tmp_path / NAMESPACE
    assert stat.S_IMODE(box.path.stat().st_mode) == 0o700
    assert stat.S_IMODE((box.path / "to-child").stat().st_mode) == 0o700
    assert stat.S_IMODE(record_path(box, task).stat().st_mode) == 0o600
    on_disk = json.loads(record_path(box, task).read_text())
    assert on_disk["version"] == 4 and on_disk["kind"] == "task"
    assert on_disk["assignmentId"] == task.message_id

    assert box.pending(Box.TO_CHILD) == [task]
    assert box.consume(task) is True
    assert box.pending(Box.TO_CHILD) == []
    assert record_path(box, task, processed=True).is_file()

    ask = box.post(Kind.ASK, "A or B?", assignment_id=task.message_id)
    assert box.pending_ask() == ask
    assert box.pending(Box.TO_OWNER) == [ask]
    assert box.consume(ask)
    reply = box.post(Kind.REPLY, "B", assignment_id=task.message_id, ask_id=ask.message_id)
    assert box.pending_ask() is None
    steer = box.post(Kind.STEER, "also docs", assignment_id=task.message_id)
    assert box.pending(Box.TO_CHILD) == [reply, steer]  # oldest first
    result = box.post(Kind.RESULT, "done", assignment_id=task.message_id, status="completed")
    assert box.pending(Box.TO_OWNER) == [result]
    assert [m.kind for m in box.history()] == [
        Kind.TASK,
        Kind.ASK,
        Kind.REPLY,
        Kind.STEER,
        Kind.RESULT,
    ]
    # no temp file is left behind by a successful post
    assert not [p for p in box.path.rglob(".*") if p.is_file()]


def test_restart_between_read_and_consume_loses_nothing_and_duplicates_nothing(
    tmp_path: Path,
) -> None:
    first = make(tmp_path)
    task = first.post(Kind.TASK, "work")
    result = first.post(Kind.RESULT, "out", assignment_id=task.message_id, status="completed")
    seen = first.pending(Box.TO_OWNER)
    assert seen == [result]
    # the controller "crashes" here, before consuming; a new process opens the mailbox
    restarted = make(tmp_path)
    assert restarted.pending(Box.TO_OWNER) == [result]
    assert restarted.consume(result) is True
    assert first.consume(result) is False  # the stale reader cannot consume it twice
    assert restarted.consume(result) is False
    assert restarted.pending(Box.TO_OWNER) == []
    assert [m.kind for m in restarted.history()].count(Kind.RESULT) == 1


def test_concurrent_consumers_exactly_one_wins(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "work")
    wins: list[bool] = []
    lock = threading.Lock()

    def consume() -> None:
        won = make(tmp_path).consume(task)
        with lock:
            wins.append(won)

    threads = [threading.Thread(target=consume) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(wins) == [False] * 7 + [True]


def test_consumed_id_cannot_be_posted_again(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "work")
    steer = box.post(Kind.STEER, "s", assignment_id=task.message_id)
    assert box.consume(steer)
    with pytest.raises(MailboxError) as caught:
        box.post(Kind.STEER, "s", assignment_id=task.message_id, message_id=steer.message_id)
    assert caught.value.category == "internal_failure"
    assert "already posted" in caught.value.message


@pytest.mark.parametrize(
    ("setup", "category", "needle"),
    [
        ("second_task", "agent_busy", "second"),
        ("second_ask", "agent_busy", "already outstanding"),
        ("steer_while_ask", "agent_busy", "waiting for an owner reply"),
        ("interrupt_while_ask", "agent_busy", "waiting for an owner reply"),
        ("reply_without_ask", "agent_busy", "no outstanding"),
        ("reply_wrong_ask", "target_not_found", "ask identity mismatch"),
        ("reply_twice", "agent_busy", "no outstanding"),
        ("wrong_assignment", "target_not_found", "no assignment"),
        ("after_result", "agent_busy", "final result"),
        ("no_task", "target_not_found", "no assignment"),
    ],
)
def test_protocol_invariants(tmp_path: Path, setup: str, category: str, needle: str) -> None:
    box = make(tmp_path)
    other = str(uuid.uuid4())
    if setup == "no_task":
        with pytest.raises(MailboxError) as caught:
            box.post(Kind.STEER, "s", assignment_id=other)
        assert caught.value.category == category and needle in caught.value.message
        return
    task = box.post(Kind.TASK, "t")
    aid = task.message_id
    attempt: dict[str, object]
    if setup == "second_task":
        attempt = {"kind": Kind.TASK}
    elif setup == "second_ask":
        box.post(Kind.ASK, "q1", assignment_id=aid)
        attempt = {"kind": Kind.ASK, "assignment_id": aid}
    elif setup in ("steer_while_ask", "interrupt_while_ask"):
        box.post(Kind.ASK, "q1", assignment_id=aid)
        kind = Kind.STEER if setup == "steer_while_ask" else Kind.INTERRUPT
        attempt = {"kind": kind, "assignment_id": aid}
    elif setup == "reply_without_ask":
        attempt = {"kind": Kind.REPLY, "assignment_id": aid, "ask_id": other}
    elif setup == "reply_wrong_ask":
        box.post(Kind.ASK, "q1", assignment_id=aid)
        attempt = {"kind": Kind.REPLY, "assignment_id": aid, "ask_id": other}
    elif setup == "reply_twice":
        ask = box.post(Kind.ASK, "q1", assignment_id=aid)
        box.post(Kind.REPLY, "a", assignment_id=aid, ask_id=ask.message_id)
        attempt = {"kind": Kind.REPLY, "assignment_id": aid, "ask_id": ask.message_id}
    elif setup == "wrong_assignment":
        attempt = {"kind": Kind.STEER, "assignment_id": other}
    else:
        box.post(Kind.RESULT, "r", assignment_id=aid, status="completed")
        attempt = {"kind": Kind.RESULT, "assignment_id": aid, "status": "failed"}
    before = box.history()
    kind_arg = attempt.pop("kind")
    assert isinstance(kind_arg, Kind)
    with pytest.raises(MailboxError) as caught:
        box.post(kind_arg, "x", **attempt)  # type: ignore[arg-type]
    assert caught.value.category == category
    assert needle in caught.value.message
    assert box.history() == before  # a refused post writes nothing


def test_ask_after_reply_is_allowed(tmp_path: Path) -> None:
    box = make(tmp_path)
    aid = box.post(Kind.TASK, "t").message_id
    ask = box.post(Kind.ASK, "q1", assignment_id=aid)
    box.post(Kind.REPLY, "a", assignment_id=aid, ask_id=ask.message_id)
    second = box.post(Kind.ASK, "q2", assignment_id=aid)
    assert box.pending_ask() == second


def test_oversized_payload_is_invalid_request(tmp_path: Path) -> None:
    box = make(tmp_path)
    with pytest.raises(MailboxError) as caught:
        box.post(Kind.TASK, "x" * (1 << 20))
    assert caught.value.category == "invalid_request"
    assert "protocol limit" in caught.value.message
    assert box.history() == []


def _fault_mailbox(tmp_path: Path) -> tuple[Mailbox, Message]:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    return box, task


@pytest.mark.parametrize(
    ("fault", "needle"),
    [
        ("corrupt", "malformed mailbox record"),
        ("truncated", "malformed mailbox record"),
        ("symlink", "symbolic link"),
        ("fifo", "FIFO"),
        ("oversize", "over the protocol ceiling"),
        ("version", "protocol version"),
        ("unknown_field", "unknown mailbox field"),
        ("id_mismatch", "carries id"),
        ("wrong_box", "wrong box"),
        ("stray_name", "unexpected file"),
    ],
)
def test_fault_is_structured_error_and_file_is_kept(
    tmp_path: Path, fault: str, needle: str
) -> None:
    box, task = _fault_mailbox(tmp_path)
    path = record_path(box, task)
    good = path.read_bytes()
    target = path
    if fault == "corrupt":
        path.write_bytes(b"{not json")
    elif fault == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif fault == "symlink":
        secret = tmp_path / "secret.json"
        secret.write_bytes(good)
        path.unlink()
        path.symlink_to(secret)
    elif fault == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif fault == "oversize":
        with path.open("ab") as handle:
            handle.truncate(4 * (1 << 20) + 10)
    elif fault == "version":
        path.write_text(json.dumps({**json.loads(good), "version": 5}))
    elif fault == "unknown_field":
        path.write_text(json.dumps({**json.loads(good), "lifetime": 1}))
    elif fault == "id_mismatch":
        target = path.with_name(f"{uuid.uuid4()}.json")
        path.rename(target)
    elif fault == "wrong_box":
        target = box.path / "to-owner" / path.name
        path.rename(target)
    else:
        target = path.with_name("notes.txt")
        target.write_text("x")
    with pytest.raises(MailboxError) as caught:
        box.history()
    error = caught.value
    assert error.category == "internal_failure"
    assert needle in error.message
    assert error.path == str(target)
    as_dict = error.to_dict()
    assert as_dict["category"] == "internal_failure"
    assert as_dict["operation"] == "mailbox read"
    assert as_dict["rollbackOccurred"] is False and as_dict["retryAttempted"] is False
    assert os.path.lexists(target)  # never deleted: the evidence stays
    # posting against an unreadable mailbox fails closed too (nothing written)
    with pytest.raises(MailboxError):
        box.post(Kind.STEER, "s", assignment_id=task.message_id)


def test_symlinked_box_directory_is_refused(tmp_path: Path) -> None:
    box, _task = _fault_mailbox(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (box.path / "to-owner").rmdir()
    (box.path / "to-owner").symlink_to(elsewhere)
    with pytest.raises(MailboxError) as caught:
        box.pending(Box.TO_OWNER)
    assert caught.value.category == "internal_failure"
    assert "unsafe mailbox directory" in caught.value.message
    assert list(elsewhere.iterdir()) == []


def test_leftover_temp_file_of_a_crashed_writer_is_ignored(tmp_path: Path) -> None:
    box, task = _fault_mailbox(tmp_path)
    leftover = box.path / "to-child" / f".{uuid.uuid4()}.json.abc.tmp"
    leftover.write_bytes(b"{half")
    assert box.pending(Box.TO_CHILD) == [task]


def test_decode_rejects_nan_and_bad_types() -> None:
    base = Message(Kind.TASK, str(uuid.uuid4()), "", "t", 1.0, 1)
    record = {**base.to_record(), "assignmentId": base.message_id}
    Message.decode(json.dumps(record).encode())
    for bad in (
        {"createdAt": float("nan")},
        {"createdAt": True},
        {"seq": 0},
        {"seq": True},
        {"seq": 1.5},
        {"kind": ["task"]},
        {"text": 3},
        {"id": base.message_id + "\n"},
        {"askId": str(uuid.uuid4())},
    ):
        with pytest.raises(RecordError):
            Message.decode(json.dumps({**record, **bad}).encode())


ids = st.uuids(version=4).map(str)
texts = st.text(max_size=200)
times = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)


@st.composite
def messages(draw: st.DrawFn) -> Message:
    kind = draw(st.sampled_from(list(Kind)))
    mid = draw(ids)
    return Message(
        kind=kind,
        message_id=mid,
        assignment_id=mid if kind is Kind.TASK else draw(ids),
        text=draw(texts),
        created_at=draw(times),
        seq=draw(st.integers(min_value=1, max_value=2**53)),
        ask_id=draw(ids) if kind is Kind.REPLY else None,
        status=draw(st.sampled_from(["completed", "failed"])) if kind is Kind.RESULT else None,
    )


@given(messages())
def test_record_round_trip(message: Message) -> None:
    assert Message.decode(message.encode()) == message


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(["steer", "interrupt", "ask", "reply"]), max_size=8), texts)
def test_mailbox_round_trip_through_disk(
    tmp_path_factory: pytest.TempPathFactory, steps: list[str], text: str
) -> None:
    root = tmp_path_factory.mktemp("mb")
    box = make(root)
    task = box.post(Kind.TASK, text)
    posted = [task]
    refusals: list[str] = []
    for step in steps:
        aid = task.message_id
        pending = box.pending_ask()
        try:
            if step == "reply":
                posted.append(
                    box.post(
                        Kind.REPLY,
                        text,
                        assignment_id=aid,
                        ask_id=pending.message_id if pending else str(uuid.uuid4()),
                    )
                )
            else:
                posted.append(box.post(Kind(step), text, assignment_id=aid))
        except MailboxError as error:
            refusals.append(error.category)
    posted.append(box.post(Kind.RESULT, text, assignment_id=task.message_id, status="failed"))
    assert set(refusals) <= {"agent_busy", "target_not_found"}
    # every accepted record is read back exactly as posted, in order, once
    restarted = make(root)
    assert restarted.history() == posted
    consumed = []
    for box_name in Box:
        for message in restarted.pending(box_name):
            assert restarted.consume(message)
            consumed.append(message)
    assert sorted(consumed, key=lambda m: m.seq) == posted
    assert restarted.pending(Box.TO_CHILD) == restarted.pending(Box.TO_OWNER) == []


def test_order_is_the_post_order_even_when_the_clock_ties_or_steps_back(tmp_path: Path) -> None:
    stamps = iter([50.0, 50.0, 10.0, 50.0])
    box = Mailbox(tmp_path, "w1", "impl", clock=lambda: next(stamps))
    task = box.post(Kind.TASK, "t")
    posted = [task] + [
        box.post(kind, "x", assignment_id=task.message_id)
        for kind in (Kind.STEER, Kind.INTERRUPT, Kind.STEER)
    ]
    assert [m.seq for m in posted] == [1, 2, 3, 4]
    assert box.pending(Box.TO_CHILD) == posted
    assert make(tmp_path).history() == posted


def test_crash_inside_consume_neither_redelivers_nor_duplicates(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    result = box.post(Kind.RESULT, "r", assignment_id=task.message_id, status="completed")
    # the first step of consume (link into processed/) happened, then the process died
    os.link(record_path(box, result), record_path(box, result, processed=True))
    restarted = make(tmp_path)
    assert restarted.pending(Box.TO_OWNER) == []
    assert [m.message_id for m in restarted.history()].count(result.message_id) == 1
    assert restarted.consume(result) is False  # finishes the interrupted step
    assert not record_path(box, result).exists()
    assert record_path(box, result, processed=True).is_file()


def test_reading_never_creates_a_mailbox(tmp_path: Path) -> None:
    box = make(tmp_path, "nobody")
    assert box.pending(Box.TO_OWNER) == []
    assert box.history() == []
    assert box.pending_ask() is None
    assert not box.path.exists()
    assert not (tmp_path / NAMESPACE).exists()


def _no_load(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every record read from now on (the bound must refuse before any)."""
    from orchestrator.managed import mailbox as module

    read: list[Path] = []
    real = safe_fs.read_bounded

    def counting(path: Path, limit: int) -> object:
        read.append(path)
        return real(path, limit)

    monkeypatch.setattr(module, "read_bounded", counting)
    return read


def test_a_mailbox_past_its_byte_bound_is_a_fault_with_nothing_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.managed.mailbox import MAILBOX_BYTE_LIMIT, REQUEST_LIMIT_BYTES

    box = make(tmp_path)
    task = box.post(Kind.TASK, "go")
    big = "x" * (REQUEST_LIMIT_BYTES - 1024)
    for n in range(MAILBOX_BYTE_LIMIT // len(big) + 1):
        plant(box, forged(Kind.ASK, task.message_id, big, n + 2))
    read = _no_load(monkeypatch)
    for reader in (lambda: box.pending(Box.TO_OWNER), box.history, box.pending_ask):
        with pytest.raises(MailboxError) as caught:
            reader()
        assert caught.value.category == "internal_failure"
        assert "nothing was read" in caught.value.message
        assert (caught.value.details or {})["path"] == str(box.path)
    assert read == []


def test_a_mailbox_past_its_record_bound_is_a_fault_with_nothing_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.managed.mailbox import MAILBOX_RECORD_LIMIT

    box = make(tmp_path)
    task = box.post(Kind.TASK, "go")
    for n in range(MAILBOX_RECORD_LIMIT):
        plant(box, forged(Kind.ASK, task.message_id, "q", n + 2))
    read = _no_load(monkeypatch)
    with pytest.raises(MailboxError, match=f"more than {MAILBOX_RECORD_LIMIT} records"):
        box.pending(Box.TO_OWNER)
    assert read == []


def test_a_post_that_would_cross_the_bound_is_refused(tmp_path: Path) -> None:
    from orchestrator.managed.mailbox import MAILBOX_BYTE_LIMIT, REQUEST_LIMIT_BYTES

    box = make(tmp_path)
    task = box.post(Kind.TASK, "go")
    big = "x" * (REQUEST_LIMIT_BYTES - 1024)
    for n in range(MAILBOX_BYTE_LIMIT // len(big)):  # just under the bound
        plant(box, forged(Kind.STEER, task.message_id, big, n + 2))
    with pytest.raises(MailboxError) as caught:
        box.post(Kind.STEER, big, assignment_id=task.message_id)
    assert caught.value.category == "invalid_request"
    assert "was not posted" in caught.value.message
    assert box.pending(Box.TO_CHILD)[-1].text == big  # still readable: under the bound
