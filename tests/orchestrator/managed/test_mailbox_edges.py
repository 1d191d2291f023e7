"""The mailbox's edges: the exact error every refusal carries, and each bound at its value.

A controller acts on a mailbox error by its fields (``category``, ``operation``,
``nextAction``, ``details.path``), so each refusal is pinned whole, not by a word of its
message; and each size or count bound is tried at its value (accepted) as well as past it.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from orchestrator.client.file_trust import private_files as safe_fs
from orchestrator.managed import mailbox as module
from orchestrator.managed.mailbox import (
    MAILBOX_BYTE_LIMIT,
    MAILBOX_RECORD_LIMIT,
    NAMESPACE,
    REQUEST_LIMIT_BYTES,
    RESULT_LIMIT_BYTES,
    Box,
    Kind,
    Mailbox,
    MailboxError,
    Message,
    RecordError,
)
from tests.orchestrator.managed.mailboxes import Clock, forged, make, plant, record_path

LEFT_IN_PLACE = "inspect or remove the mailbox file; it was left in place"


def refusal(call: Callable[[], object]) -> dict[str, Any]:
    """The public shape of the :class:`MailboxError` ``call`` raises."""
    with pytest.raises(MailboxError) as caught:
        call()
    shape = caught.value.to_dict()
    assert caught.value.path == (shape.get("details") or {}).get("path")
    return shape


def expected(
    category: str, message: str, operation: str, *, next_action: str = "", path: object = None
) -> dict[str, Any]:
    shape: dict[str, Any] = {
        "category": category,
        "message": message,
        "operation": operation,
        "rollbackOccurred": False,
        "retryAttempted": False,
    }
    if next_action:
        shape["nextAction"] = next_action
    if path is not None:
        shape["details"] = {"path": str(path)}
    return shape


def sized(kind: Kind, assignment: str, size: int, seq: int = 2) -> Message:
    """A valid record whose encoding is exactly ``size`` bytes."""
    message = forged(kind, assignment, "", seq)
    pad = size - len(message.encode())
    assert pad >= 0
    message = replace(message, text="x" * pad)
    assert len(message.encode()) == size
    return message


# -- opening ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    [
        "relative",
        "dotdot",
        "other-namespace",
        "short-name",
    ],
)
def test_a_path_that_is_not_a_mailbox_directory_is_an_invalid_request(
    tmp_path: Path, where: str
) -> None:
    name = "0" * 32
    target = {
        "relative": Path(NAMESPACE) / name,
        # resolves to a real mailbox directory, but only through ".."
        "dotdot": tmp_path / "x" / ".." / NAMESPACE / name,
        "other-namespace": tmp_path / "mailboxes-v3" / name,
        "short-name": tmp_path / NAMESPACE / ("0" * 31),
    }[where]
    assert refusal(lambda: Mailbox.at(target)) == expected(
        "invalid_request",
        f"not a mailbox directory (absolute <root>/{NAMESPACE}/<32 hex>): {target}",
        "mailbox open",
    )


def test_a_mailbox_opened_by_its_path_stamps_records_with_its_clock(tmp_path: Path) -> None:
    home = make(tmp_path)
    child = Mailbox.at(home.path, clock=Clock(5_000.0))
    task = child.post(Kind.TASK, "t")
    assert task.created_at == 5_001.0
    assert home.history() == [task]


def test_ensure_makes_exactly_the_protocols_directories(tmp_path: Path) -> None:
    box = make(tmp_path)
    box.ensure()
    assert sorted(p.name for p in box.path.iterdir()) == ["processed", "to-child", "to-owner"]
    assert sorted(p.name for p in (box.path / "processed").iterdir()) == ["to-child", "to-owner"]


# -- unsafe directories ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "call"),
    [
        ("mailbox open", lambda box: box.ensure()),
        ("mailbox consume", lambda box: box.consume(forged(Kind.TASK, "", "t", 1))),
        ("mailbox post task", lambda box: box.post(Kind.TASK, "t")),
    ],
)
def test_a_shared_mailbox_root_is_refused_naming_the_operation(
    tmp_path: Path, operation: str, call: Callable[[Mailbox], object]
) -> None:
    box = make(tmp_path)
    (tmp_path / NAMESPACE).mkdir(mode=0o700)
    (tmp_path / NAMESPACE).chmod(0o777)  # another local user could plant records here
    shape = refusal(lambda: call(box))
    assert shape["message"].startswith("unsafe mailbox root: ")
    assert shape == expected(
        "internal_failure", shape["message"], operation, next_action=LEFT_IN_PLACE
    )
    assert not box.path.exists()


@pytest.mark.parametrize(
    ("operation", "call"),
    [
        ("mailbox read", lambda box: box.pending(Box.TO_CHILD)),
        ("mailbox read", lambda box: box.history()),
        ("mailbox consume", lambda box: box.consume(forged(Kind.ASK, "", "q", 2))),
        ("mailbox post steer", lambda box: box.post(Kind.STEER, "s", assignment_id=box.task)),
    ],
)
@pytest.mark.parametrize("linked", ["to-owner", "processed/to-owner"])
def test_a_linked_box_directory_is_refused_naming_the_operation(
    tmp_path: Path, operation: str, call: Callable[[Any], object], linked: str
) -> None:
    box: Any = make(tmp_path)
    box.task = box.post(Kind.TASK, "t").message_id
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (box.path / linked).rmdir()
    (box.path / linked).symlink_to(elsewhere)
    shape = refusal(lambda: call(box))
    assert shape == expected(
        "internal_failure",
        f"unsafe mailbox directory: {box.path / linked} is a symbolic link, not a directory: "
        "not used",
        operation,
        next_action=LEFT_IN_PLACE,
        path=box.path / linked,
    )
    assert list(elsewhere.iterdir()) == []


# -- reading ---------------------------------------------------------------------------


def test_a_json_file_not_named_by_a_uuid_is_refused(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    stray = box.path / "to-child" / "notes.json"
    stray.write_bytes(record_path(box, task).read_bytes())
    assert refusal(lambda: box.pending(Box.TO_CHILD)) == expected(
        "internal_failure",
        "unexpected file in mailbox: notes.json",
        "mailbox read",
        next_action=LEFT_IN_PLACE,
        path=stray,
    )


def test_records_exactly_at_their_ceilings_are_read(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    steer = sized(Kind.STEER, task.message_id, REQUEST_LIMIT_BYTES, seq=2)
    result = sized(Kind.RESULT, task.message_id, RESULT_LIMIT_BYTES, seq=3)
    plant(box, steer)
    plant(box, result)
    assert box.history() == [task, steer, result]


@pytest.mark.parametrize(
    ("kind", "size", "message"),
    [
        (Kind.STEER, REQUEST_LIMIT_BYTES + 1, "steer record over its size ceiling"),
        (Kind.ASK, REQUEST_LIMIT_BYTES + 1, "ask record over its size ceiling"),
        (
            Kind.RESULT,
            RESULT_LIMIT_BYTES + 1,
            f"mailbox record is {RESULT_LIMIT_BYTES + 1} bytes, over the protocol ceiling",
        ),
    ],
)
def test_a_record_one_byte_over_its_ceiling_is_refused(
    tmp_path: Path, kind: Kind, size: int, message: str
) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    record = sized(kind, task.message_id, size)
    plant(box, record)
    assert refusal(box.history) == expected(
        "internal_failure",
        message,
        "mailbox read",
        next_action=LEFT_IN_PLACE,
        path=record_path(box, record),
    )


def test_a_record_consumed_while_the_box_is_listed_is_skipped_not_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    steers = [box.post(Kind.STEER, f"s{n}", assignment_id=task.message_id) for n in range(3)]
    listed = sorted(p for p in (box.path / "to-child").iterdir())
    gone = listed[0]
    real = safe_fs.read_bounded

    def racing(path: Path, limit: int) -> object:
        if Path(path) == gone and gone.exists():
            gone.unlink()  # the other side consumed it after the listing
        return real(path, limit)

    monkeypatch.setattr(module, "read_bounded", racing)
    assert box.pending(Box.TO_CHILD) == [m for m in [task, *steers] if record_path(box, m) != gone]


# -- the mailbox's bounds --------------------------------------------------------------


def test_a_mailbox_of_exactly_its_record_bound_is_read_and_temp_files_do_not_count(
    tmp_path: Path,
) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    planted = [
        forged(Kind.ASK, task.message_id, "q", n + 2) for n in range(MAILBOX_RECORD_LIMIT - 1)
    ]
    for message in planted:
        plant(box, message)
    for n in range(40):  # writers' temp files are never records
        (box.path / "to-owner" / f".{n}.json.tmp").write_bytes(b"{half")
    assert len(box.history()) == MAILBOX_RECORD_LIMIT
    assert len(box.pending(Box.TO_OWNER)) == MAILBOX_RECORD_LIMIT - 1
    # one more record is past the bound, wherever the temp files sort
    plant(box, forged(Kind.ASK, task.message_id, "q", MAILBOX_RECORD_LIMIT + 1))
    for reader in (box.history, lambda: box.pending(Box.TO_CHILD)):
        assert refusal(reader) == expected(
            "internal_failure",
            f"mailbox holds more than {MAILBOX_RECORD_LIMIT} records; nothing was read",
            "mailbox read",
            next_action="close the agent; inspect or remove its mailbox, which was left in place",
            path=box.path,
        )


def test_a_mailbox_of_exactly_its_byte_bound_is_read(tmp_path: Path) -> None:
    box = make(tmp_path)
    box.ensure()
    assignment = str(uuid.uuid4())
    quarter = MAILBOX_BYTE_LIMIT // 4
    assert quarter == RESULT_LIMIT_BYTES
    records = [sized(Kind.RESULT, assignment, quarter, seq=n + 1) for n in range(4)]
    for message in records:
        plant(box, message)
    assert box.pending(Box.TO_OWNER) == records
    (box.path / "to-child" / f"{uuid.uuid4()}.json").write_bytes(b"1")
    assert refusal(box.history) == expected(
        "internal_failure",
        f"mailbox holds {MAILBOX_BYTE_LIMIT + 1} bytes, over its bound of {MAILBOX_BYTE_LIMIT}; "
        "nothing was read",
        "mailbox read",
        next_action="close the agent; inspect or remove its mailbox, which was left in place",
        path=box.path,
    )


# -- consuming -------------------------------------------------------------------------


def test_consuming_moves_the_record_out_of_its_box(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    assert box.consume(task) is True
    assert not record_path(box, task).exists()
    assert record_path(box, task, processed=True).is_file()
    assert box.consume(task) is False


def test_consuming_a_record_never_posted_is_false_and_writes_nothing(tmp_path: Path) -> None:
    box = make(tmp_path)
    box.post(Kind.TASK, "t")
    ghost = forged(Kind.STEER, str(uuid.uuid4()), "s", 2)
    assert box.consume(ghost) is False
    assert list((box.path / "processed" / "to-child").iterdir()) == []


def test_consuming_never_hard_links_what_a_planted_link_points_to(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    outside = tmp_path / "outside.json"
    outside.write_bytes(record_path(box, task).read_bytes())
    record_path(box, task).unlink()
    record_path(box, task).symlink_to(outside)  # a hostile child swaps the record for a link
    box.consume(task)
    assert outside.stat().st_nlink == 1
    assert record_path(box, task, processed=True).is_symlink()


def test_a_crash_after_the_link_is_finished_by_the_next_consume(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    os.link(record_path(box, task), record_path(box, task, processed=True))
    assert box.consume(task) is False
    assert not record_path(box, task).exists()


# -- posting ---------------------------------------------------------------------------


def test_a_record_of_exactly_the_request_ceiling_is_posted(tmp_path: Path) -> None:
    message_id = str(uuid.uuid4())
    box = Mailbox(tmp_path, "w1", "impl", clock=lambda: 7.0)
    template = Message(Kind.TASK, message_id, message_id, "", 7.0, 1)
    text = "x" * (REQUEST_LIMIT_BYTES - len(template.encode()))
    posted = box.post(Kind.TASK, text, message_id=message_id)
    assert len(posted.encode()) == REQUEST_LIMIT_BYTES
    assert box.history() == [posted]
    again = Mailbox(tmp_path / "2", "w1", "impl", clock=lambda: 7.0)
    over = refusal(lambda: again.post(Kind.TASK, text + "x", message_id=message_id))
    assert over == expected(
        "invalid_request",
        f"Mailbox payload is {REQUEST_LIMIT_BYTES + 1} bytes; the protocol limit is "
        f"{REQUEST_LIMIT_BYTES} bytes",
        "mailbox post task",
    )


def test_a_result_may_be_larger_than_a_request(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    text = "r" * (2 * REQUEST_LIMIT_BYTES)
    result = box.post(Kind.RESULT, text, assignment_id=task.message_id, status="completed")
    assert box.pending(Box.TO_OWNER) == [result]


def test_a_record_id_is_never_published_twice(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    before = record_path(box, task).read_bytes()
    assert refusal(lambda: box._publish(task, "mailbox post task")) == expected(
        "internal_failure",
        f"mailbox record {task.message_id} already exists",
        "mailbox post task",
    )
    assert record_path(box, task).read_bytes() == before


def _post_refusals(aid: str, ask_id: str) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    other = "00000000-0000-4000-8000-000000000000"
    return [
        (
            "not-a-uuid",
            {"kind": Kind.STEER, "assignment_id": aid, "message_id": "m-1"},
            expected("invalid_request", "message id is not a UUID", "mailbox post steer"),
        ),
        (
            "no-assignment",
            {"kind": Kind.INTERRUPT},
            expected(
                "invalid_request", "a interrupt needs its assignment id", "mailbox post interrupt"
            ),
        ),
        (
            "surrogate",
            {"kind": Kind.STEER, "assignment_id": aid, "text": "\ud800"},
            expected("invalid_request", "text is not valid Unicode", "mailbox post steer"),
        ),
        (
            "bad-status",
            {"kind": Kind.RESULT, "assignment_id": aid, "status": "maybe"},
            expected(
                "invalid_request",
                "status 'maybe' is not completed or failed",
                "mailbox post result",
            ),
        ),
        (
            "second-task",
            {"kind": Kind.TASK},
            expected(
                "agent_busy",
                "Agent already has an assignment; an agent cannot receive a second one",
                "mailbox post task",
            ),
        ),
        (
            "wrong-assignment",
            {"kind": Kind.STEER, "assignment_id": other},
            expected(
                "target_not_found", f"no assignment {other} in this mailbox", "mailbox post steer"
            ),
        ),
        (
            "second-ask",
            {"kind": Kind.ASK, "assignment_id": aid},
            expected(
                "agent_busy",
                "An ask_owner question is already outstanding for this assignment",
                "mailbox post ask",
            ),
        ),
        (
            "steer-while-asking",
            {"kind": Kind.STEER, "assignment_id": aid},
            expected("agent_busy", "Agent is waiting for an owner reply", "mailbox post steer"),
        ),
        (
            "interrupt-while-asking",
            {"kind": Kind.INTERRUPT, "assignment_id": aid},
            expected("agent_busy", "Agent is waiting for an owner reply", "mailbox post interrupt"),
        ),
        (
            "reply-to-another-ask",
            {"kind": Kind.REPLY, "assignment_id": aid, "ask_id": other},
            expected(
                "target_not_found",
                f"Agent ask identity mismatch: the pending ask is {ask_id}",
                "mailbox post reply",
            ),
        ),
    ]


CASES = [case[0] for case in _post_refusals("a", "q")]


@pytest.mark.parametrize("case", CASES)
def test_each_refused_post_carries_its_exact_error_and_writes_nothing(
    tmp_path: Path, case: str
) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    ask = box.post(Kind.ASK, "q", assignment_id=task.message_id)
    attempt, want = next(
        (a, w) for name, a, w in _post_refusals(task.message_id, ask.message_id) if name == case
    )
    before = box.history()
    kind = attempt.pop("kind")
    text = attempt.pop("text", "x")
    assert refusal(lambda: box.post(kind, text, **attempt)) == want
    assert box.history() == before


def test_an_id_already_posted_is_refused(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    steer = box.post(Kind.STEER, "s", assignment_id=task.message_id)
    again = refusal(
        lambda: box.post(
            Kind.STEER, "s", assignment_id=task.message_id, message_id=steer.message_id
        )
    )
    assert again == expected(
        "internal_failure",
        f"mailbox record {steer.message_id} was already posted",
        "mailbox post steer",
    )


def test_no_reply_without_an_open_ask_and_nothing_after_the_result(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    aid = task.message_id
    assert refusal(
        lambda: box.post(Kind.REPLY, "a", assignment_id=aid, ask_id=str(uuid.uuid4()))
    ) == expected("agent_busy", "Agent has no outstanding ask_owner question", "mailbox post reply")
    box.post(Kind.RESULT, "r", assignment_id=aid, status="completed")
    assert refusal(lambda: box.post(Kind.STEER, "s", assignment_id=aid)) == expected(
        "agent_busy", "The assignment already has its final result", "mailbox post steer"
    )


def test_a_settled_only_post_waits_for_controls_not_for_the_task(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    aid = task.message_id
    # the unconsumed task does not hold the child's ask back
    ask = box.post(Kind.ASK, "q", assignment_id=aid, settled_only=True)
    box.post(Kind.REPLY, "a", assignment_id=aid, ask_id=ask.message_id)
    busy = refusal(
        lambda: box.post(Kind.RESULT, "r", assignment_id=aid, status="completed", settled_only=True)
    )
    assert busy == expected(
        "agent_busy", "a control request to the agent is still unconsumed", "mailbox post result"
    )
    for message in box.pending(Box.TO_CHILD):
        box.consume(message)
    result = box.post(Kind.RESULT, "r", assignment_id=aid, status="completed", settled_only=True)
    assert box.pending(Box.TO_OWNER)[-1] == result
    assert json.loads(record_path(box, result).read_bytes())["seq"] == 4


# -- records on disk -------------------------------------------------------------------


def test_a_record_on_disk_is_utf8_with_sorted_keys(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "héllo ✓")
    data = record_path(box, task).read_bytes()
    assert "héllo ✓".encode() in data  # written as UTF-8, not as \\u escapes
    keys = [key for key, _ in json.loads(data, object_pairs_hook=lambda pairs: pairs)]
    assert keys == sorted(keys) == sorted(task.to_record())


def _record(**changes: object) -> bytes:
    message_id = str(uuid.uuid4())
    base = Message(Kind.STEER, message_id, str(uuid.uuid4()), "s", 1.0, 2).to_record()
    return json.dumps({**base, **changes}).encode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[1]", "not a JSON object"),
        (_record(zz=1, lifetime=2), "unknown mailbox field(s): lifetime, zz"),
        (_record(version=5), "protocol version is 5, not 4"),
        (_record(version=True), "protocol version is True, not 4"),
        (_record(kind="note"), "unknown kind 'note'"),
        (_record(kind=["task"]), "unknown kind ['task']"),
        (_record(id=3), "id is not a UUID"),
        (_record(assignmentId="A" * 36), "assignmentId is not a UUID"),
        (_record(text=None), "text is not a string"),
        (_record(createdAt=-1), "createdAt is not a finite non-negative number"),
        (_record(seq=0), "seq is not a positive integer"),
        (_record(askId=str(uuid.uuid4())), "askId is required on a reply and only there"),
        (_record(kind="reply", askId="x"), "askId is not a UUID"),
        (_record(status="completed"), "status is required on a result and only there"),
        (_record(kind="task"), "a task's assignmentId must be its own id"),
    ],
)
def test_each_malformed_record_says_what_is_wrong(data: bytes, message: str) -> None:
    with pytest.raises(RecordError) as caught:
        Message.decode(data)
    assert str(caught.value) == message


def test_bytes_that_are_not_json_say_so() -> None:
    for data in (b"\xff\xfe", b"{"):
        with pytest.raises(RecordError) as caught:
            Message.decode(data)
        assert str(caught.value).startswith("not a JSON record (")


# -- the bound on posting --------------------------------------------------------------


def _filled_to(root: Path, free: int) -> tuple[Mailbox, str, int]:
    """A mailbox holding a task and replies, with exactly ``free`` bytes left under its byte
    bound; the next seq."""
    box = Mailbox(root, "w1", "impl", clock=lambda: 7.0)
    aid = box.post(Kind.TASK, "t").message_id
    used = len(record_path(box, box.history()[0]).read_bytes())
    seq = 2
    while MAILBOX_BYTE_LIMIT - used - free > 0:
        size = min(REQUEST_LIMIT_BYTES, MAILBOX_BYTE_LIMIT - used - free)
        plant(box, sized(Kind.REPLY, aid, size, seq=seq))
        used += size
        seq += 1
    return box, aid, seq


def test_a_post_that_fills_the_byte_bound_exactly_is_accepted(tmp_path: Path) -> None:
    message_id = str(uuid.uuid4())
    probe = Message(Kind.STEER, message_id, "", "s", 7.0, 99)  # seq 99: two digits, as below
    box, aid, seq = _filled_to(
        tmp_path, len(replace(probe, assignment_id=str(uuid.uuid4())).encode())
    )
    assert 10 <= seq < 100  # as many digits as the probe's
    final = box.post(Kind.STEER, "s", assignment_id=aid, message_id=message_id)
    assert final.seq == seq
    assert sum(p.stat().st_size for p in box.path.rglob("*.json")) == MAILBOX_BYTE_LIMIT


def test_a_post_one_byte_past_the_byte_bound_is_refused(tmp_path: Path) -> None:
    message_id = str(uuid.uuid4())
    probe = Message(Kind.STEER, message_id, str(uuid.uuid4()), "s", 7.0, 99)
    box, aid, _seq = _filled_to(tmp_path, len(probe.encode()))
    before = box.history()
    shape = refusal(lambda: box.post(Kind.STEER, "ss", assignment_id=aid, message_id=message_id))
    assert shape == expected(
        "invalid_request",
        f"The agent's mailbox would hold {MAILBOX_BYTE_LIMIT + 1} bytes, over its bound of "
        f"{MAILBOX_BYTE_LIMIT}; the record was not posted",
        "mailbox post steer",
        next_action="Close the agent and delegate a fresh one with the relevant files.",
    )
    assert box.history() == before


def test_a_post_that_makes_exactly_the_record_bound_is_accepted_and_one_more_is_not(
    tmp_path: Path,
) -> None:
    box = make(tmp_path)
    aid = box.post(Kind.TASK, "t").message_id
    for n in range(MAILBOX_RECORD_LIMIT - 2):
        plant(box, forged(Kind.REPLY, aid, "a", n + 2))
    box.post(Kind.STEER, "s", assignment_id=aid)  # the 512th record
    assert len(box.history()) == MAILBOX_RECORD_LIMIT
    assert refusal(lambda: box.post(Kind.STEER, "s", assignment_id=aid)) == expected(
        "invalid_request",
        f"The agent's mailbox would hold more than {MAILBOX_RECORD_LIMIT} records; the record "
        "was not posted",
        "mailbox post steer",
        next_action="Close the agent and delegate a fresh one with the relevant files.",
    )
    assert len(box.history()) == MAILBOX_RECORD_LIMIT


def test_a_bad_consumed_record_fails_the_read_of_what_is_pending(tmp_path: Path) -> None:
    box = make(tmp_path)
    task = box.post(Kind.TASK, "t")
    box.consume(task)
    record_path(box, task, processed=True).write_bytes(b"{broken")
    shape = refusal(lambda: box.pending(Box.TO_CHILD))
    assert shape["operation"] == "mailbox read"
    assert shape["details"] == {"path": str(record_path(box, task, processed=True))}
    assert shape["message"].startswith(f"malformed mailbox record {task.message_id}.json: ")


def test_a_box_directory_never_made_does_not_hide_the_records_of_the_others(
    tmp_path: Path,
) -> None:
    box = make(tmp_path)
    aid = str(uuid.uuid4())
    for n in range(MAILBOX_RECORD_LIMIT + 1):  # to-owner only: to-child was never made
        plant(box, forged(Kind.ASK, aid, "q", n + 1))
    assert not (box.path / "to-child").exists()
    shape = refusal(box.history)
    assert shape["message"] == (
        f"mailbox holds more than {MAILBOX_RECORD_LIMIT} records; nothing was read"
    )


def test_a_linked_record_is_refused_as_a_link_whatever_it_points_to(tmp_path: Path) -> None:
    box = make(tmp_path)
    box.post(Kind.TASK, "t")
    huge = tmp_path / "huge"
    with huge.open("wb") as handle:
        handle.truncate(MAILBOX_BYTE_LIMIT + 1)  # sparse: the target's size is not the link's
    planted = box.path / "to-owner" / f"{uuid.uuid4()}.json"
    planted.symlink_to(huge)
    shape = refusal(box.history)
    assert shape["details"] == {"path": str(planted)}
    assert shape["message"].startswith("unsafe mailbox file: ")
    assert "symbolic link" in shape["message"]
    assert huge.stat().st_size == MAILBOX_BYTE_LIMIT + 1


def test_a_post_past_the_byte_bound_at_exactly_the_record_bound_names_the_bytes(
    tmp_path: Path,
) -> None:
    box = make(tmp_path)
    aid = box.post(Kind.TASK, "t").message_id
    each = MAILBOX_BYTE_LIMIT // (MAILBOX_RECORD_LIMIT - 2)
    for n in range(MAILBOX_RECORD_LIMIT - 2):  # with the task: one record under the bound
        plant(box, sized(Kind.REPLY, aid, each, seq=n + 2))
    shape = refusal(lambda: box.post(Kind.STEER, "s" * 100_000, assignment_id=aid))
    assert shape["category"] == "invalid_request"
    assert " bytes, over its bound of " in shape["message"]
    assert "records" not in shape["message"]


def test_a_post_to_a_mailbox_already_past_its_bound_is_refused_as_unreadable(
    tmp_path: Path,
) -> None:
    box = make(tmp_path)
    aid = box.post(Kind.TASK, "t").message_id
    for n in range(MAILBOX_RECORD_LIMIT):  # with the task: one record past the bound
        plant(box, forged(Kind.REPLY, aid, "a", n + 2))
    shape = refusal(lambda: box.post(Kind.STEER, "s", assignment_id=aid))
    assert shape == expected(
        "internal_failure",
        f"mailbox holds more than {MAILBOX_RECORD_LIMIT} records; nothing was read",
        "mailbox read",
        next_action="close the agent; inspect or remove its mailbox, which was left in place",
        path=box.path,
    )
    assert len(list((box.path / "to-child").iterdir())) == MAILBOX_RECORD_LIMIT + 1
