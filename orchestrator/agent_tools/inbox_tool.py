"""``herdr_inbox``: read the child → DSH messages of one task or of every open task.

The file format and the reading rules are :mod:`.inbox`; this module adds the task side:

* **Targets.** ``target`` (task id, agent name or pane id) names one task; without it every
  open task is read (every record not ``closed``: a finished task's last ``COMPLETE`` is
  exactly what a caller wants to see), oldest first.
* **Offsets live in the task record** (``inboxOffset``). A consuming read reads and advances
  the offset under the record's lock (:meth:`TaskStore.modify`), so two processes consuming
  at once never return the same message twice. ``consume: false`` peeks and stores nothing.
* **``limit`` counts across tasks** (default 50, capped at 200): tasks are read in order until
  the limit is used up; ``more`` says a task had messages left.
* **Long-poll.** ``wait: true`` with nothing unread polls every inbox (stat-based, see
  :func:`.inbox.wait_for_messages`) for up to ``timeout_ms``; it returns as soon as one
  message arrives. ``timedOut`` says the budget ran out empty.

The value is ``{messages[], tasks[], consumed, more, timedOut}`` (:data:`INBOX_RESULT_SCHEMA`);
each message is the inbox message plus ``taskId`` and ``name``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.agent_tools.context import AgentToolsContext, agent_context
from orchestrator.agent_tools.contract import ResultError, refusal
from orchestrator.agent_tools.fleet import artifact_dir_of, config_refusal
from orchestrator.agent_tools.inbox import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MESSAGE_TYPES,
    InboxRead,
    inbox_path,
    read_inbox,
    wait_for_messages,
)
from orchestrator.agent_tools.records import TaskNotFound, TaskRecord
from orchestrator.agent_tools.remote_files import RemoteFiles, task_files
from orchestrator.core.tool import ToolContext
from orchestrator.logs import bind_task

TOOL = "herdr_inbox"
DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 3_600_000

INBOX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "target": {
            "type": "string",
            "minLength": 1,
            "description": "Task id, agent name or pane id (default: all open tasks).",
        },
        "wait": {
            "type": "boolean",
            "default": False,
            "description": "true: if nothing is unread, wait up to timeout_ms for a message.",
        },
        "timeout_ms": {
            "type": "integer",
            "minimum": 0,
            "default": DEFAULT_TIMEOUT_MS,
            "description": "How long wait:true waits, in milliseconds (default 30000).",
        },
        "consume": {
            "type": "boolean",
            "default": True,
            "description": "true (default): mark what is returned as read. false: peek only.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "default": DEFAULT_LIMIT,
            "description": f"Max messages (capped at {MAX_LIMIT}).",
        },
    },
}
INBOX_DESCRIPTION = (
    "Read child -> DSH messages from <artifactDir>/inbox.ndjson (BLOCKED, REVIEW_REQUEST, "
    "COMPLETE, NOTE, ACCEPT, REJECT; unknown types come back as NOTE). consume advances the "
    "offset kept in the task record (nothing is replayed); wait long-polls up to timeout_ms."
)

_NULLABLE_STR: dict[str, Any] = {"type": ["string", "null"]}
#: JSON Schema of a ``herdr_inbox`` value.
INBOX_RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "InboxRead",
    "type": "object",
    "additionalProperties": False,
    "required": ["messages", "tasks", "consumed", "more", "timedOut"],
    "properties": {
        "messages": {
            "type": "array",
            "maxItems": MAX_LIMIT,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["taskId", "name", "type", "text", "ts", "offset"],
                "properties": {
                    "taskId": {"type": "string", "pattern": "^t-[0-9a-f]{12}$"},
                    "name": _NULLABLE_STR,
                    "type": {"enum": list(MESSAGE_TYPES)},
                    "text": {"type": "string"},
                    "ts": _NULLABLE_STR,
                    "offset": {"type": "integer", "minimum": 0},
                    "originalType": _NULLABLE_STR,
                    "path": {"type": "string"},
                },
            },
        },
        "tasks": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "taskId",
                    "name",
                    "status",
                    "inbox",
                    "offset",
                    "nextOffset",
                    "count",
                    "partial",
                    "more",
                    "malformed",
                ],
                "properties": {
                    "taskId": {"type": "string"},
                    "name": _NULLABLE_STR,
                    "status": {"type": "string"},
                    "inbox": {"type": "string"},
                    "offset": {"type": "integer", "minimum": 0},
                    "nextOffset": {"type": "integer", "minimum": 0},
                    "count": {"type": "integer", "minimum": 0},
                    "partial": {"type": "boolean"},
                    "more": {"type": "boolean"},
                    "malformed": {"type": "array"},
                },
            },
        },
        "consumed": {"type": "boolean"},
        "more": {"type": "boolean"},
        "timedOut": {"type": "boolean"},
        # Present when a task record or an inbox file could not be read (skipped, by path).
        "warnings": {"type": "array", "items": {"type": "string"}},
    },
}


def _open_records(ctx: AgentToolsContext) -> list[TaskRecord]:
    return [r for r in ctx.store.list_records() if r.status != "closed"]


def _path(ctx: AgentToolsContext, record: TaskRecord) -> Path:
    return inbox_path(artifact_dir_of(ctx, record))


def _files(ctx: AgentToolsContext, record: TaskRecord) -> RemoteFiles:
    """Where the task's inbox is: this host, or its machine over SSH."""
    return task_files(ctx.config, record.machine)


def _read(
    ctx: AgentToolsContext, record: TaskRecord, limit: int, consume: bool
) -> tuple[TaskRecord, InboxRead]:
    """Read ``record``'s inbox from its stored offset; a consuming read stores the new one
    in the same locked step."""
    path = _path(ctx, record)
    files = _files(ctx, record)
    if not consume:
        return record, read_inbox(path, record.inbox_offset, limit, files=files)
    found: list[InboxRead] = []

    def advance(current: TaskRecord) -> dict[str, Any]:
        read = read_inbox(path, current.inbox_offset, limit, files=files)
        found.append(read)
        return {"inbox_offset": read.next_offset}

    updated = ctx.store.modify(record.task_id, advance)
    return updated, found[0]


def inbox(params: Mapping[str, Any], tool_ctx: ToolContext) -> dict[str, Any]:
    """Read (and by default consume) inbox messages; optionally long-poll."""
    ctx = agent_context(tool_ctx)
    refused_config = config_refusal(TOOL, ctx)
    if refused_config is not None:
        return refused_config
    limit = max(1, min(int(params.get("limit", DEFAULT_LIMIT)), MAX_LIMIT))
    consume = bool(params.get("consume", True))
    wait = bool(params.get("wait", False))
    timeout_ms = max(0, min(int(params.get("timeout_ms", DEFAULT_TIMEOUT_MS)), MAX_TIMEOUT_MS))
    target = params.get("target")
    if target is not None:
        try:
            records = [ctx.store.find(str(target))]
            bind_task(records[0].task_id)
        except TaskNotFound as exc:
            return refusal(TOOL, ResultError("TASK_NOT_FOUND", str(exc), field="target"))
    else:
        records = _open_records(ctx)
    warnings = ctx.store.unreadable_warnings() if target is None else []
    timed_out = False
    if wait and records:
        sources = [(_path(ctx, r), r.inbox_offset) for r in records]
        peeked = wait_for_messages(
            sources, timeout_ms / 1000, limit=limit, files=[_files(ctx, r) for r in records]
        )
        timed_out = not any(r.messages or r.malformed for r in peeked)
    elif wait:
        timed_out = True
    messages: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    more = False
    for record in records:
        room = limit - len(messages)
        if room <= 0:
            # The limit is used up: report whether this task still has something unread.
            peek = read_inbox(_path(ctx, record), record.inbox_offset, 1, files=_files(ctx, record))
            more = more or bool(peek.messages)
            continue
        current, read = _read(ctx, record, room, consume)
        more = more or read.more
        if read.error is not None:
            warnings.append(f"task {current.task_id}: inbox not read ({read.error})")
        messages.extend(
            {"taskId": current.task_id, "name": current.name, **message}
            for message in read.messages
        )
        tasks.append(
            {
                "taskId": current.task_id,
                "name": current.name,
                "status": current.status,
                "inbox": str(_path(ctx, record)),
                "offset": read.offset,
                "nextOffset": read.next_offset,
                "count": len(read.messages),
                "partial": read.partial,
                "more": read.more,
                "malformed": list(read.malformed),
            }
        )
    value: dict[str, Any] = {
        "messages": messages,
        "tasks": tasks,
        "consumed": consume,
        "more": more,
        "timedOut": timed_out,
    }
    if warnings:
        value["warnings"] = warnings
    return value


__all__ = ["INBOX_DESCRIPTION", "INBOX_RESULT_SCHEMA", "INBOX_SCHEMA", "inbox"]
