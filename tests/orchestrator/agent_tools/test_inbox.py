"""Reading ``inbox.ndjson``: offsets, limits, torn and malformed lines, types, long-poll."""

from __future__ import annotations

import json
import os
import resource
import threading
import time
from pathlib import Path
from typing import Any

from orchestrator.agent_tools import inbox as ib
from tests.waits import SCALE


def _line(type_: Any = "NOTE", text: Any = "hi", **extra: Any) -> str:
    data = {"ts": "2026-10-20T09:00:00Z", "type": type_, "text": text, **extra}
    return json.dumps(data) + "\n"


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def test_missing_file_is_an_empty_inbox(tmp_path: Path) -> None:
    read = ib.read_inbox(tmp_path / "inbox.ndjson", 0)
    assert read.messages == [] and read.next_offset == 0 and not read.partial


def test_inbox_path_is_in_the_artifact_dir(tmp_path: Path) -> None:
    assert ib.inbox_path(tmp_path) == tmp_path / "inbox.ndjson"


def test_consuming_reads_advance_and_never_replay(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, _line("REVIEW_REQUEST", "please check src/a.ts") + _line("NOTE", "x"))
    first = ib.read_inbox(path, 0)
    assert [(m["type"], m["text"]) for m in first.messages] == [
        ("REVIEW_REQUEST", "please check src/a.ts"),
        ("NOTE", "x"),
    ]
    assert first.messages[0]["ts"] == "2026-10-20T09:00:00Z"
    assert first.next_offset == path.stat().st_size
    assert ib.read_inbox(path, first.next_offset).messages == []
    _append(path, _line("BLOCKED", "which db?"))
    later = ib.read_inbox(path, first.next_offset)
    assert [m["type"] for m in later.messages] == ["BLOCKED"]


def test_peek_is_repeatable_from_the_same_offset(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, _line())
    assert ib.read_inbox(path, 0).messages == ib.read_inbox(path, 0).messages != []


def test_message_offsets_are_byte_positions(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    a, b = _line(text="é"), _line(text="b")
    _append(path, a + b)
    offsets = [m["offset"] for m in ib.read_inbox(path).messages]
    assert offsets == [0, len(a.encode())]


def test_limit_stops_early_and_says_there_is_more(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, "".join(_line(text=str(n)) for n in range(5)))
    read = ib.read_inbox(path, 0, limit=2)
    assert [m["text"] for m in read.messages] == ["0", "1"] and read.more
    rest = ib.read_inbox(path, read.next_offset, limit=10)
    assert [m["text"] for m in rest.messages] == ["2", "3", "4"] and not rest.more


def test_limit_defaults_to_50_and_caps_at_200(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, "".join(_line(text=str(n)) for n in range(250)))
    assert len(ib.read_inbox(path).messages) == ib.DEFAULT_LIMIT == 50
    assert len(ib.read_inbox(path, 0, limit=1000).messages) == ib.MAX_LIMIT == 200


def test_partial_last_line_is_not_consumed(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    whole = _line(text="done")
    _append(path, _line(text="a") + whole[:10])
    read = ib.read_inbox(path, 0)
    assert [m["text"] for m in read.messages] == ["a"] and read.partial
    assert read.next_offset == len(_line(text="a"))
    _append(path, whole[10:])
    after = ib.read_inbox(path, read.next_offset)
    assert [m["text"] for m in after.messages] == ["done"] and not after.partial


def test_complete_object_without_final_newline_is_read_once(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, _line(text="a").rstrip("\n"))
    read = ib.read_inbox(path, 0)
    assert [m["text"] for m in read.messages] == ["a"]
    _append(path, "\n" + _line(text="b"))
    assert [m["text"] for m in ib.read_inbox(path, read.next_offset).messages] == ["b"]


def test_malformed_lines_are_reported_once_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, "not json\n" + '["a list"]\n' + _line(text="ok"))
    read = ib.read_inbox(path, 0)
    assert [m["text"] for m in read.messages] == ["ok"]
    assert [(b["offset"], b["preview"]) for b in read.malformed] == [
        (0, "not json"),
        (9, '["a list"]'),
    ]
    assert "not JSON" in read.malformed[0]["error"]
    assert "not a JSON object" in read.malformed[1]["error"]
    again = ib.read_inbox(path, read.next_offset)
    assert again.malformed == [] and again.messages == []


def test_unknown_type_is_a_note_keeping_the_original(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, _line("PROGRESS", "50%") + _line(None, "no type"))
    first, second = ib.read_inbox(path).messages
    assert first["type"] == "NOTE" and first.get("originalType") == "PROGRESS"
    assert second["type"] == "NOTE" and second.get("originalType") is None
    assert "originalType" in second


def test_known_types_are_normalized_and_keep_no_original(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    kinds = ["BLOCKED", "review_request", " Accept ", "REJECT", "NOTE"]
    _append(path, "".join(_line(k) for k in kinds))
    messages = ib.read_inbox(path).messages
    assert [m["type"] for m in messages] == [
        "BLOCKED",
        "REVIEW_REQUEST",
        "ACCEPT",
        "REJECT",
        "NOTE",
    ]
    assert all("originalType" not in m for m in messages)


def test_complete_carries_the_result_path(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(
        path,
        _line("COMPLETE", "/art/result.md")
        + _line("COMPLETE /art/r2.md", "done")
        + _line("COMPLETE", "all good", path="/art/r3.md"),
    )
    paths = [m.get("path") for m in ib.read_inbox(path).messages]
    assert paths == ["/art/result.md", "/art/r2.md", "/art/r3.md"]


def test_non_string_text_is_rendered_as_json(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, _line(text={"k": 1}))
    assert ib.read_inbox(path).messages[0]["text"] == '{"k": 1}'


def test_offset_beyond_a_truncated_file_restarts_at_zero(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, _line(text="new"))
    read = ib.read_inbox(path, 10_000)
    assert read.offset == 0 and [m["text"] for m in read.messages] == ["new"]


def test_to_json_shape(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, _line())
    data = ib.read_inbox(path).to_json()
    assert set(data) == {"messages", "malformed", "offset", "nextOffset", "partial", "more"}


def test_wait_returns_at_once_when_messages_are_there(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    _append(path, _line(text="ready"))
    started = time.monotonic()
    (read,) = ib.wait_for_messages([(path, 0)], timeout=5)
    assert [m["text"] for m in read.messages] == ["ready"]
    assert time.monotonic() - started < 1 * SCALE


def test_wait_wakes_when_a_line_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    writer = threading.Timer(0.1, _append, (path, _line("COMPLETE", "/a/result.md")))
    writer.start()
    try:
        started = time.monotonic()
        (read,) = ib.wait_for_messages([(path, 0)], timeout=5)
        elapsed = time.monotonic() - started
    finally:
        writer.join()
    assert [m["type"] for m in read.messages] == ["COMPLETE"]
    assert elapsed < 1 * SCALE


def test_wait_times_out_with_empty_reads(tmp_path: Path) -> None:
    started = time.monotonic()
    reads = ib.wait_for_messages([(tmp_path / "a", 0), (tmp_path / "b", 0)], timeout=0.15)
    assert [r.messages for r in reads] == [[], []]
    assert 0.15 <= time.monotonic() - started < 1 * SCALE


def test_wait_ignores_a_partial_line_until_it_completes(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    line = _line(text="slow")
    _append(path, line[:5])
    writer = threading.Timer(0.1, _append, (path, line[5:]))
    writer.start()
    try:
        (read,) = ib.wait_for_messages([(path, 0)], timeout=5)
    finally:
        writer.join()
    assert [m["text"] for m in read.messages] == ["slow"]


def test_wait_over_several_inboxes_reports_the_one_that_moved(tmp_path: Path) -> None:
    quiet, busy = tmp_path / "q.ndjson", tmp_path / "b.ndjson"
    _append(quiet, _line(text="old"))
    consumed = quiet.stat().st_size
    writer = threading.Timer(0.05, _append, (busy, _line(text="new")))
    writer.start()
    try:
        reads = ib.wait_for_messages([(quiet, consumed), (busy, 0)], timeout=5)
    finally:
        writer.join()
    assert reads[0].messages == [] and [m["text"] for m in reads[1].messages] == ["new"]


def test_wait_ends_early_on_wake_or_stop(tmp_path: Path) -> None:
    wake = threading.Event()
    waker = threading.Timer(0.05, wake.set)
    waker.start()
    started = time.monotonic()
    try:
        (read,) = ib.wait_for_messages([(tmp_path / "x", 0)], timeout=5, wake=wake)
    finally:
        waker.join()
    assert read.messages == [] and time.monotonic() - started < 1 * SCALE
    (read,) = ib.wait_for_messages([(tmp_path / "x", 0)], timeout=5, stop=lambda: True)
    assert read.messages == []


# -- the file is the child's: links, FIFOs and huge files ---------------------------------------


def _read_within(path: Path, seconds: float = 5.0) -> ib.InboxRead:
    """``read_inbox`` in a thread, failing (not hanging) if it blocks."""
    found: list[ib.InboxRead] = []
    worker = threading.Thread(target=lambda: found.append(ib.read_inbox(path)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert found, f"read_inbox({path}) still blocked after {seconds} s"
    return found[0]


def test_a_symlinked_inbox_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET not json\n")
    path = ib.inbox_path(tmp_path / "art")
    path.parent.mkdir()
    path.symlink_to(secret)
    read = _read_within(path)
    assert read.messages == [] and read.malformed == []
    assert "TOP-SECRET" not in json.dumps(read.to_json())
    assert read.error is not None and "symbolic link" in read.error
    assert read.next_offset == 0


def test_a_fifo_inbox_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    os.mkfifo(path)
    read = _read_within(path)
    assert read.error is not None and "FIFO" in read.error
    # the long-poll neither blocks on it nor counts it as news
    started = time.monotonic()
    (waited,) = ib.wait_for_messages([(path, 0)], 0.2)
    assert time.monotonic() - started < 3 * SCALE
    assert waited.messages == []


def test_a_huge_sparse_inbox_is_read_in_bounded_pieces(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    with path.open("wb") as handle:
        handle.write((_line("NOTE", "first") + "\n").encode())
        handle.truncate(300 * 1024 * 1024)  # 300 MB of zero bytes, no newline
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    read = ib.read_inbox(path)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert [m["text"] for m in read.messages] == ["first"]
    assert read.more is True and len(read.malformed) == 0
    assert grown_kib < 50 * 1024, f"RSS grew by {grown_kib} KiB"
    rest = ib.read_inbox(path, read.next_offset)
    assert rest.messages == []
    assert [m["error"] for m in rest.malformed] == [
        f"line longer than {ib.MAX_READ_BYTES} bytes: skipped"
    ]
    assert rest.next_offset == path.stat().st_size and rest.more is False
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50 * 1024


def test_a_line_longer_than_the_bound_is_skipped_to_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    huge = "x" * (ib.MAX_READ_BYTES + 10)
    path.write_text(huge + "\n" + _line("NOTE", "after") + "\n")
    first = ib.read_inbox(path)
    assert [m["offset"] for m in first.malformed] == [0]
    assert first.next_offset == len(huge) + 1 and first.more is True
    second = ib.read_inbox(path, first.next_offset)
    assert [m["text"] for m in second.messages] == ["after"]


def test_many_lines_past_the_bound_are_read_on_the_next_call(tmp_path: Path) -> None:
    path = tmp_path / "inbox.ndjson"
    lines = [_line("NOTE", str(i) + "y" * 1000) for i in range(1500)]  # ~1.5 MB
    path.write_text("\n".join(lines) + "\n")
    seen: list[str] = []
    offset = 0
    for _ in range(100):
        read = ib.read_inbox(path, offset, limit=200)
        seen.extend(m["text"][:4].rstrip("y") for m in read.messages)
        assert not read.malformed and not read.partial
        offset = read.next_offset
        if not read.more:
            break
    assert seen == [str(i) for i in range(1500)]
