"""``herdr_read_agent``: page through a pi agent's session transcript.

The reading itself (turns, truncation, the active branch) is :mod:`.transcript`; this module
finds the file. A target resolves through the task records first (task id, agent name, pane
id): the recorded ``sessionPath`` wins, else Herdr's ``agent.get`` reports it in
``agent_session`` (pi tells Herdr its session path). A target that is not one of our tasks is
looked up in Herdr directly, so a foreign pi agent can be read too (read-only anyway).

Only ``kind=pi`` exposes a session file. Anything else, a task that failed before its agent
started, or a session file pi has not written yet answers ``NO_TRANSCRIPT`` as an AgentResult
(``failed``, ``nextAction: inspect``) whose message carries the task's recorded error.

The page is ``{target, taskId, name, paneId, kind, observation, sessionPath, total, from,
limit, messages, nextFrom, prevFrom}`` (:data:`READ_RESULT_SCHEMA`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orchestrator.agent_tools.context import AgentToolsContext, agent_context
from orchestrator.agent_tools.contract import AgentResult, Artifacts, ResultError
from orchestrator.agent_tools.fleet import (
    artifact_dir_of,
    config_refusal,
    error_text,
    herdr_refusal,
    same_agent,
)
from orchestrator.agent_tools.records import TaskNotFound, TaskRecord
from orchestrator.agent_tools.remote_files import task_files
from orchestrator.agent_tools.transcript import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    NO_TRANSCRIPT,
    NoTranscript,
    read_transcript,
)
from orchestrator.client.errors import ClientError, NotFound
from orchestrator.client.types import AgentInfo
from orchestrator.core.tool import ToolContext
from orchestrator.logs import bind_task

TOOL = "herdr_read_agent"

READ_AGENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["target"],
    "properties": {
        "target": {
            "type": "string",
            "minLength": 1,
            "description": "Task id, agent name or pane id.",
        },
        "from": {
            "type": "integer",
            "default": 0,
            "description": "First turn index; negative counts from the end (-20: the last 20).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "default": DEFAULT_LIMIT,
            "description": f"Turns per page (capped at {MAX_LIMIT}).",
        },
    },
}
READ_AGENT_DESCRIPTION = (
    "Page through a pi agent's session transcript: one message per turn (user, assistant, "
    "tool, system) with toolCalls {name, detail}; total, nextFrom and prevFrom for paging. "
    "Messages are cut at 6,000 characters. Only kind=pi has a transcript (else NO_TRANSCRIPT)."
)

_MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["index", "role", "text", "toolCalls", "prompt", "timestamp"],
    "properties": {
        "index": {"type": "integer", "minimum": 0},
        "role": {"enum": ["user", "assistant", "tool", "system"]},
        "text": {"type": "string", "maxLength": 6200},
        "toolCalls": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "detail"],
                "properties": {"name": {"type": "string"}, "detail": {"type": "string"}},
            },
        },
        "prompt": {"type": "integer"},
        "timestamp": {"type": ["string", "null"]},
        "truncated": {"type": "boolean"},
        "chars": {"type": "integer"},
        "toolName": {"type": "string"},
        "isError": {"type": "boolean"},
        "durationMs": {"type": ["integer", "null"]},
        "stopReason": {"type": "string"},
        "errorMessage": {"type": "string"},
    },
    "additionalProperties": False,
}
_NULLABLE_STR: dict[str, Any] = {"type": ["string", "null"]}
_CURSOR: dict[str, Any] = {"type": ["integer", "null"], "minimum": 0}
#: JSON Schema of a successful ``herdr_read_agent`` page.
READ_RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "TranscriptPage",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "target",
        "taskId",
        "name",
        "paneId",
        "kind",
        "observation",
        "sessionPath",
        "total",
        "from",
        "limit",
        "messages",
        "nextFrom",
        "prevFrom",
    ],
    "properties": {
        "target": {"type": "string"},
        "taskId": {"type": ["string", "null"], "pattern": "^t-[0-9a-f]{12}$"},
        "name": _NULLABLE_STR,
        "paneId": _NULLABLE_STR,
        "kind": _NULLABLE_STR,
        "observation": {"type": "boolean"},
        "sessionPath": {"type": "string"},
        "total": {"type": "integer", "minimum": 0},
        "from": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        "messages": {"type": "array", "items": _MESSAGE_SCHEMA, "maxItems": MAX_LIMIT},
        "nextFrom": _CURSOR,
        "prevFrom": _CURSOR,
    },
}


def _session_of(agent: AgentInfo) -> str | None:
    session = agent.raw.get("agent_session")
    if isinstance(session, Mapping) and session.get("kind") == "path":
        value = session.get("value")
        return value if isinstance(value, str) and value else None
    return None


def _task_failure(
    ctx: AgentToolsContext, record: TaskRecord, code: str, message: str
) -> dict[str, Any]:
    """A failure about one of our tasks: names the task, its artifacts and its record."""
    return AgentResult.for_record(
        TOOL,
        record,
        "failed",
        # the directory and session only (as this tool always answered)
        artifacts=Artifacts(
            artifact_dir=str(artifact_dir_of(ctx, record)), session_file=record.session_path
        ),
        next_action="inspect",
        error=ResultError(code, message),
    ).to_dict()


def _foreign_failure(agent: AgentInfo | None, code: str, message: str) -> dict[str, Any]:
    return AgentResult.for_agent(
        TOOL,
        agent,
        "failed",
        next_action="inspect",
        error=ResultError(code, message, field="target"),
    ).to_dict()


def read_agent(params: Mapping[str, Any], tool_ctx: ToolContext) -> dict[str, Any]:
    """One transcript page, or an AgentResult refusal (``NO_TRANSCRIPT``, ``TASK_NOT_FOUND``)."""
    ctx = agent_context(tool_ctx)
    refused_config = config_refusal(TOOL, ctx)
    if refused_config is not None:
        return refused_config
    target = str(params["target"])
    from_ = int(params.get("from", 0))
    limit = max(1, min(int(params.get("limit", DEFAULT_LIMIT)), MAX_LIMIT))
    record: TaskRecord | None
    try:
        record = ctx.store.find(target)
        bind_task(record.task_id)
        ctx.select_machine(record.machine)  # the task lives where it was spawned
    except TaskNotFound:
        record = None
    agent: AgentInfo | None = None
    if record is None:
        try:
            agent = ctx.client.agent_get(target)
        except NotFound:
            return _foreign_failure(
                None,
                "TASK_NOT_FOUND",
                f"no task, agent name or pane {target!r} in the task registry or in Herdr",
            )
        except ClientError as exc:
            return herdr_refusal(TOOL, exc, field="target")
        kind = agent.agent
        path = _session_of(agent)
    else:
        kind = record.kind
        path = record.session_path
        if path is None and record.pane_id and kind == "pi":
            try:
                found = ctx.client.agent_get(record.pane_id)
            except ClientError:
                found = None
            if found is not None and same_agent(record, found):
                path = _session_of(found)
    if kind != "pi":
        message = (
            f"only kind=pi exposes a session transcript; {target!r} is kind {kind or 'unknown'}"
        )
        if record is not None:
            return _task_failure(ctx, record, NO_TRANSCRIPT, message)
        return _foreign_failure(agent, NO_TRANSCRIPT, message)
    try:
        page = read_transcript(
            path,
            from_=from_,
            limit=limit,
            task_error=error_text(record) if record else None,
            # an owned task's session is read where it runs (over SSH on its machine)
            files=task_files(ctx.config, record.machine) if record else None,
        )
    except NoTranscript as exc:
        if record is not None:
            return _task_failure(ctx, record, NO_TRANSCRIPT, exc.message)
        return _foreign_failure(agent, NO_TRANSCRIPT, exc.message)
    who_name = record.name if record else agent.name if agent else None
    who_pane = record.pane_id if record else agent.pane_id if agent else None
    return {
        "target": target,
        "taskId": record.task_id if record else None,
        "name": who_name,
        "paneId": who_pane,
        "kind": kind,
        "observation": record is None,
        **page,
    }


__all__ = ["READ_AGENT_DESCRIPTION", "READ_AGENT_SCHEMA", "READ_RESULT_SCHEMA", "read_agent"]
