"""``herdr_inbox``: consume and peek with offsets in the task record, limits, long-poll.

The inbox is a file the child appends to; Herdr is not involved, so these tests build a
context on a state directory alone.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from orchestrator.agent_tools.context import AgentToolsContext
from orchestrator.agent_tools.inbox_tool import INBOX_RESULT_SCHEMA, inbox
from orchestrator.agent_tools.records import TaskRecord
from orchestrator.core.config import Config
from tests.orchestrator.agent_tools.test_fleet import agent_result
from tests.waits import SCALE

INBOX = jsonschema.Draft202012Validator(INBOX_RESULT_SCHEMA)


@pytest.fixture
def ctx(tmp_path: Path) -> AgentToolsContext:
    """A context on a fresh state directory (no Herdr needed)."""
    state = tmp_path / "state"
    return AgentToolsContext.create(
        {}, config=Config(state_dir=state, artifact_dir=state / "artifacts")
    )


def task(ctx: AgentToolsContext, name: str, status: str = "running") -> TaskRecord:
    """A task record with an artifact directory."""
    record, _ = ctx.store.create(kind="pi", cwd="/", name=name)
    artifacts = ctx.config.artifact_dir / record.task_id
    artifacts.mkdir(parents=True)
    return ctx.store.update(record.task_id, status=status, artifact_dir=str(artifacts))


def append(record: TaskRecord, *messages: dict[str, Any]) -> None:
    """What the child does: append one JSON line per message."""
    assert record.artifact_dir is not None
    with (Path(record.artifact_dir) / "inbox.ndjson").open("a") as handle:
        for message in messages:
            handle.write(json.dumps(message) + "\n")


def read(ctx: AgentToolsContext, **params: Any) -> dict[str, Any]:
    """Call the tool and check the value's schema."""
    value = inbox(params, ctx)
    INBOX.validate(value)
    return value


def test_consume_advances_the_offset_in_the_record(ctx: AgentToolsContext) -> None:
    record = task(ctx, "w")
    append(record, {"ts": "2026-10-20T09:00:00Z", "type": "REVIEW_REQUEST", "text": "check a.ts"})
    first = read(ctx, target="w")
    (message,) = first["messages"]
    assert message == {
        "taskId": record.task_id,
        "name": "w",
        "type": "REVIEW_REQUEST",
        "text": "check a.ts",
        "ts": "2026-10-20T09:00:00Z",
        "offset": 0,
    }
    assert ctx.store.get(record.task_id).inbox_offset == first["tasks"][0]["nextOffset"] > 0
    assert read(ctx, target="w")["messages"] == []


def test_peek_does_not_consume(ctx: AgentToolsContext) -> None:
    record = task(ctx, "w")
    append(record, {"type": "NOTE", "text": "halfway"})
    one = read(ctx, target=record.task_id, consume=False)
    two = read(ctx, target=record.task_id, consume=False)
    assert (
        [m["text"] for m in one["messages"]] == [m["text"] for m in two["messages"]] == ["halfway"]
    )
    assert one["consumed"] is False
    assert ctx.store.get(record.task_id).inbox_offset == 0
    assert [m["text"] for m in read(ctx, target="w")["messages"]] == ["halfway"]


def test_unknown_types_become_notes(ctx: AgentToolsContext) -> None:
    record = task(ctx, "w")
    append(
        record,
        {"type": "PROGRESS", "text": "50%"},
        {"type": "COMPLETE /x/result.md", "text": "done"},
    )
    note, complete = read(ctx, target="w")["messages"]
    assert (note["type"], note["originalType"]) == ("NOTE", "PROGRESS")
    assert (complete["type"], complete["path"]) == ("COMPLETE", "/x/result.md")


def test_limit_is_capped_at_200_and_more_is_reported(ctx: AgentToolsContext) -> None:
    record = task(ctx, "w")
    append(record, *({"type": "NOTE", "text": str(i)} for i in range(205)))
    first = read(ctx, target="w", limit=1000)
    assert len(first["messages"]) == 200
    assert first["more"] is True
    rest = read(ctx, target="w")
    assert [m["text"] for m in rest["messages"]] == ["200", "201", "202", "203", "204"]
    assert rest["more"] is False


def test_without_target_all_open_tasks_are_read(ctx: AgentToolsContext) -> None:
    a, b, closed = task(ctx, "a"), task(ctx, "b", "completed"), task(ctx, "c", "closed")
    append(a, {"type": "NOTE", "text": "from a"})
    append(b, {"type": "COMPLETE", "text": "from b"})
    append(closed, {"type": "NOTE", "text": "from c"})
    value = read(ctx)
    assert [(m["name"], m["text"]) for m in value["messages"]] == [
        ("a", "from a"),
        ("b", "from b"),
    ]
    assert [t["name"] for t in value["tasks"]] == ["a", "b"]


def test_limit_counts_across_tasks(ctx: AgentToolsContext) -> None:
    a, b = task(ctx, "a"), task(ctx, "b")
    append(a, {"type": "NOTE", "text": "a1"}, {"type": "NOTE", "text": "a2"})
    append(b, {"type": "NOTE", "text": "b1"})
    value = read(ctx, limit=2)
    assert [m["text"] for m in value["messages"]] == ["a1", "a2"]
    assert value["more"] is True
    assert [m["text"] for m in read(ctx)["messages"]] == ["b1"]


def test_long_poll_returns_when_a_message_arrives(ctx: AgentToolsContext) -> None:
    record = task(ctx, "w")
    writer = threading.Timer(0.15, append, (record, {"type": "BLOCKED", "text": "which db?"}))
    writer.start()
    started = time.monotonic()
    try:
        value = read(ctx, target="w", wait=True, timeout_ms=10_000)
    finally:
        writer.join()
    assert time.monotonic() - started < 5 * SCALE
    assert [m["type"] for m in value["messages"]] == ["BLOCKED"]
    assert value["timedOut"] is False


def test_long_poll_times_out_empty(ctx: AgentToolsContext) -> None:
    task(ctx, "w")
    started = time.monotonic()
    value = read(ctx, wait=True, timeout_ms=200)
    assert 0.15 < time.monotonic() - started < 3 * SCALE
    assert (value["messages"], value["timedOut"]) == ([], True)


def test_malformed_lines_are_reported_and_skipped(ctx: AgentToolsContext) -> None:
    record = task(ctx, "w")
    assert record.artifact_dir is not None
    (Path(record.artifact_dir) / "inbox.ndjson").write_text(
        'not json\n{"type":"NOTE","text":"ok"}\n'
    )
    value = read(ctx, target="w")
    assert [m["text"] for m in value["messages"]] == ["ok"]
    (bad,) = value["tasks"][0]["malformed"]
    assert bad["offset"] == 0
    assert read(ctx, target="w")["tasks"][0]["malformed"] == []


def test_unknown_target_is_refused(ctx: AgentToolsContext) -> None:
    value = agent_result(inbox({"target": "nobody"}, ctx))
    assert (value["error"]["code"], value["error"]["field"]) == ("TASK_NOT_FOUND", "target")


def test_an_unreadable_record_is_skipped_with_a_warning(ctx: AgentToolsContext) -> None:
    record = task(ctx, "w")
    append(record, {"type": "NOTE", "text": "hi"})
    bad = ctx.store.tasks_dir / "t-0000000000aa.json"
    bad.write_bytes(b"")
    value = read(ctx)
    assert [m["text"] for m in value["messages"]] == ["hi"]
    assert len(value["warnings"]) == 1 and str(bad) in value["warnings"][0]
    assert read(ctx, target="w", consume=False)["messages"] == []  # lookups by name work
    refused = inbox({"target": "t-0000000000aa"}, ctx)
    assert refused["error"]["code"] == "TASK_NOT_FOUND"
    assert "unreadable" in refused["error"]["message"]


def test_a_symlinked_inbox_is_a_warning_and_its_target_is_never_shown(
    ctx: AgentToolsContext, tmp_path: Path
) -> None:
    record = task(ctx, "w")
    secret = tmp_path / "secret.ndjson"
    secret.write_text(json.dumps({"type": "NOTE", "text": "TOP-SECRET"}) + "\n")
    assert record.artifact_dir is not None
    (Path(record.artifact_dir) / "inbox.ndjson").symlink_to(secret)
    value = read(ctx)
    assert "TOP-SECRET" not in json.dumps(value)
    assert value["messages"] == [] and value["tasks"][0]["nextOffset"] == 0
    assert "symbolic link" in value["warnings"][0] and record.task_id in value["warnings"][0]


@pytest.mark.parametrize("wait", [False, True])
def test_a_fifo_inbox_never_blocks_the_tool(ctx: AgentToolsContext, wait: bool) -> None:
    # a child replaces its inbox with a FIFO: herdr_inbox answers (a warning), waiting or not,
    # within its own timeout, and never opens the FIFO for a blocking read
    record = task(ctx, "w")
    assert record.artifact_dir is not None
    os.mkfifo(Path(record.artifact_dir) / "inbox.ndjson")
    result: dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: result.update(read(ctx, wait=wait, timeout_ms=300)), daemon=True
    )
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "herdr_inbox blocked on a FIFO inbox"
    assert result["messages"] == []
    assert any(record.task_id in warning for warning in result["warnings"]), result
