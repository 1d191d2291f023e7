"""The AgentResult contract: the one shape every agent tool returns, its schema and rendering.

Why one shape: a model delegating work reads the same fields whichever tool answered (spawn,
get_result, message, interrupt, close), so it learns one rule set: ``status`` says where the
task is, ``nextAction`` what to do about it, ``evidence`` where each claim came from, and the
big texts (final message, ``result.md``, diff) are bounded so a tool result never floods the
context, while the full ``result.md`` path is always there to read the rest.

Every key is always present (null when unknown) so a consumer never has to guess between
"absent" and "empty". The document is docs/orchestrator/result-contract.md;
:data:`AGENT_RESULT_SCHEMA` is its machine form and tests validate every tool result with it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from orchestrator.agent_tools.remote_files import LocalFiles, RemoteFiles
from orchestrator.client.protocol import AGENT_STATUSES
from orchestrator.core.config import (
    DEFAULT_MAX_DIFF_BYTES,
    DEFAULT_MAX_RESULT_CHARS,
    LOCAL_MACHINE,
)
from orchestrator.logs import task_logger

if TYPE_CHECKING:
    from orchestrator.agent_tools.records import TaskRecord
    from orchestrator.client.types import AgentInfo

logger = task_logger(__name__)

ResultStatus = Literal["completed", "blocked", "running", "failed", "gone", "idle"]
#: The seed's statuses for a task this orchestrator spawned.
RESULT_STATUSES: tuple[str, ...] = ("completed", "blocked", "running", "failed", "gone")
#: The status of an observation (a target this orchestrator did not spawn).
OBSERVATION_STATUS = "idle"
NextAction = Literal["review", "ask_user", "wait", "inspect", "retry", "none"]
NEXT_ACTIONS: tuple[str, ...] = ("review", "ask_user", "wait", "inspect", "retry", "none")
#: The usual next action per status (a tool may choose another, e.g. ``retry`` on a refusal).
DEFAULT_NEXT_ACTION: dict[str, NextAction] = {
    "completed": "review",
    "blocked": "ask_user",
    "running": "wait",
    "failed": "inspect",
    "gone": "inspect",
    "idle": "none",
}
#: What each next action asks of the caller (the rendering's ``Next:`` line).
NEXT_ACTION_TEXT: dict[str, str] = {
    "review": "review the final message, result.md and diff; then ACCEPT, REJECT or send "
    "REVIEW_FINDINGS with herdr_message_agent",
    "ask_user": "ask the user the agent's question, then send the answer with "
    "herdr_message_agent kind=ANSWER; never answer it yourself",
    "wait": "call herdr_get_agent_result later (wait=true) to harvest the result",
    "inspect": "read the error, the pane tail or the transcript (herdr_read_agent) before "
    "deciding whether to spawn again",
    "retry": "fix the request or wait for capacity, then call the tool again",
    "none": "nothing to do: this is an observation of an agent this orchestrator did not spawn",
}
#: The ``Next:`` line of a preview (``preview: true``), whose ``nextAction`` is ``ask_user``.
PREVIEW_NEXT_TEXT = (
    "show the user what would be done and get approval; nothing ran. Under "
    "DSH_HERDR_PREVIEW_REQUIRED the tool refuses to run it: the user runs it or lifts the gate"
)
EVIDENCE_SOURCES: tuple[str, ...] = (
    "session",
    "pane",
    "result.md",
    "inbox",
    "herdr",
    "record",
    "git",
)
FILE_STATUSES: tuple[str, ...] = ("added", "modified", "deleted", "renamed", "copied", "binary")


# -- truncation -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Truncated:
    """A possibly shortened text: ``text`` as returned, ``chars`` of the original."""

    text: str
    truncated: bool
    chars: int


def truncate_text(text: str, limit: int, *, full_path: str | None = None) -> Truncated:
    """``text`` within ``limit`` characters, keeping its beginning and its end.

    Both ends matter: the beginning says what was done, the end holds the conclusion. The
    middle is replaced by a marker naming how much was cut and where the full text is.
    """
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return Truncated(text, False, len(text))
    where = f"; full text: {full_path}" if full_path else ""
    marker = f"\n\n[... {{cut}} of {len(text)} characters truncated{where} ...]\n\n"
    room = limit - len(marker.format(cut=len(text)))
    if room <= 0:
        return Truncated(text[:limit], True, len(text))
    head = room * 3 // 5
    tail = room - head
    cut = len(text) - head - tail
    body = text[:head] + marker.format(cut=cut) + text[-tail:]  # room >= 1: tail >= 1
    return Truncated(body, True, len(text))


@dataclass(frozen=True)
class TruncatedPatch:
    """A patch cut to ``maxDiffBytes`` on a line boundary; ``bytes`` is the full size."""

    patch: str
    truncated: bool
    bytes: int
    shown_bytes: int


def truncate_patch(patch: str, max_bytes: int) -> TruncatedPatch:
    """The first whole lines of ``patch`` within ``max_bytes`` UTF-8 bytes.

    No marker is added to the patch itself (so what is shown stays valid diff text up to the
    cut); ``truncated`` and ``bytes`` say what is missing.
    """
    data = patch.encode("utf-8")
    if len(data) <= max_bytes:
        return TruncatedPatch(patch, False, len(data), len(data))
    cut = data.rfind(b"\n", 0, max_bytes)  # a newline at index max_bytes - 1 ends within
    kept = data[: cut + 1] if cut >= 0 else data[:max_bytes]
    text = kept.decode("utf-8", errors="ignore")
    return TruncatedPatch(text, True, len(data), len(text.encode("utf-8")))


# -- building blocks --------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """One observation behind the result: where it came from and what it showed."""

    source: str
    detail: str
    path: str | None = None
    at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{source, detail, path, at}``."""
        if self.source not in EVIDENCE_SOURCES:
            raise ValueError(f"unknown evidence source {self.source!r}")
        return {"source": self.source, "detail": self.detail, "path": self.path, "at": self.at}


@dataclass(frozen=True)
class FileChange:
    """One file of a diff (``git diff --numstat`` / ``--name-status``)."""

    path: str
    status: str
    additions: int | None = None
    deletions: int | None = None
    old_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{path, status, additions, deletions, oldPath}`` (counts null for binary files)."""
        return {
            "path": self.path,
            "status": self.status,
            "additions": self.additions,
            "deletions": self.deletions,
            "oldPath": self.old_path,
        }


@dataclass(frozen=True)
class Diff:
    """The task's changes against ``base`` (the commit the task started from)."""

    patch: str
    base: str | None
    files: Sequence[FileChange] = ()
    head: str | None = None

    def to_dict(self, max_bytes: int = DEFAULT_MAX_DIFF_BYTES) -> dict[str, Any]:
        """``{patch, truncated, bytes, shownBytes, base, head, files, additions, deletions}``."""
        cut = truncate_patch(self.patch, max_bytes)
        adds = [f.additions for f in self.files if f.additions is not None]
        dels = [f.deletions for f in self.files if f.deletions is not None]
        return {
            "patch": cut.patch,
            "truncated": cut.truncated,
            "bytes": cut.bytes,
            "shownBytes": cut.shown_bytes,
            "maxBytes": max_bytes,
            "base": self.base,
            "head": self.head,
            "files": [f.to_dict() for f in self.files],
            "additions": sum(adds),
            "deletions": sum(dels),
        }


@dataclass(frozen=True)
class Artifacts:
    """Where a task's files are; ``result_md`` is always named, existing or not."""

    artifact_dir: str
    session_file: str | None = None
    worktree: str | None = None
    result_md_exists: bool = False

    @classmethod
    def of(
        cls, record: TaskRecord, artifact_root: Path, files: RemoteFiles | None = None
    ) -> Artifacts:
        """The artifact paths of a task (its directory by :meth:`TaskRecord.artifact_path`);
        ``files``: where they are (this host by default; a machine that cannot be asked
        reads as no ``result.md``)."""
        directory = record.artifact_path(artifact_root)
        try:
            # a link is not the child's report
            exists = (files or LocalFiles()).is_regular_file(str(directory / "result.md"))
        except OSError:
            exists = False
        return cls(
            artifact_dir=str(directory),
            session_file=record.session_path,
            worktree=record.worktree_path,
            result_md_exists=exists,
        )

    @property
    def result_md(self) -> str:
        """``<artifactDir>/result.md``: the child's full report."""
        return f"{self.artifact_dir.rstrip('/')}/result.md"

    @property
    def inbox(self) -> str:
        """``<artifactDir>/inbox.ndjson``: child → orchestrator messages."""
        return f"{self.artifact_dir.rstrip('/')}/inbox.ndjson"

    def to_dict(self) -> dict[str, Any]:
        """``{artifactDir, resultMd, resultMdExists, inbox, sessionFile, worktree}``."""
        return {
            "artifactDir": self.artifact_dir,
            "resultMd": self.result_md,
            "resultMdExists": self.result_md_exists,
            "inbox": self.inbox,
            "sessionFile": self.session_file,
            "worktree": self.worktree,
        }


def elapsed_ms(started: float) -> int:
    """Milliseconds since ``started`` (``time.monotonic()``): a result's ``elapsedMs``."""
    return max(0, int((time.monotonic() - started) * 1000))


@dataclass(frozen=True)
class ResultError:
    """What went wrong: our code (UPPER_SNAKE), Herdr's code when Herdr refused, the field."""

    code: str
    message: str
    field: str | None = None
    herdr_code: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{code, message, field, herdrCode}``."""
        return {
            "code": self.code,
            "message": self.message,
            "field": self.field,
            "herdrCode": self.herdr_code,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, code: str, message: str) -> ResultError:
        """The error a task record stored (:meth:`to_dict`'s shape, read defensively: a
        record is a file); ``code`` and ``message`` stand in for missing or empty ones."""
        field_, herdr = data.get("field"), data.get("herdrCode")
        return cls(
            str(data.get("code") or code),
            str(data.get("message") or message),
            field_ if isinstance(field_, str) else None,
            herdr if isinstance(herdr, str) else None,
        )


#: Record fields copied into a result's ``task`` summary (camelCase, as stored).
TASK_SUMMARY_KEYS: tuple[str, ...] = (
    "taskId",
    "status",
    "kind",
    "name",
    "role",
    "model",
    "thinking",
    "cwd",
    "machine",
    "paneId",
    "clientTaskId",
    "isolated",
    "worktreePath",
    "branch",
    "baseCommit",
    "createdAt",
    "updatedAt",
    "endedAt",
    "error",
)


def task_summary(record: Mapping[str, Any]) -> dict[str, Any]:
    """The ``task`` block of a result from a stored record (``TaskRecord.to_dict()``)."""
    return {key: record.get(key) for key in TASK_SUMMARY_KEYS}


# -- the result -------------------------------------------------------------------------------


@dataclass
class AgentResult:
    """Builder of one AgentResult; :meth:`to_dict` is the tool's value."""

    status: ResultStatus
    tool: str
    next_action: NextAction | None = None
    observation: bool = False
    task_id: str | None = None
    name: str | None = None
    pane_id: str | None = None
    kind: str | None = None
    model: str | None = None
    machine: str = "local"
    final_message: str | None = None
    result_text: str | None = None
    question: str | None = None
    diff: Diff | None = None
    artifacts: Artifacts | None = None
    task: Mapping[str, Any] | None = None
    evidence: list[Evidence] = field(default_factory=list)
    error: ResultError | None = None
    warnings: list[str] = field(default_factory=list)
    elapsed_ms: int | None = None
    #: ``preview: true``: what the tool would do (``{action, target}``, payloads redacted).
    preview: Mapping[str, Any] | None = None

    # -- the builders: every AgentResult the tools answer starts in one of these ------------

    @classmethod
    def for_record(
        cls,
        tool: str,
        record: TaskRecord,
        status: ResultStatus,
        *,
        artifact_root: Path | None = None,
        artifacts: Artifacts | None = None,
        **fields: Any,
    ) -> AgentResult:
        """A result about one of our tasks: the record's identity (task id, name, pane, kind,
        model, machine), its summary (``task``) and its artifacts — :meth:`Artifacts.of`
        under ``artifact_root``, unless ``artifacts`` are given. ``fields`` set the rest."""
        if artifacts is None and artifact_root is not None:
            artifacts = Artifacts.of(record, artifact_root)
        return cls(
            status=status,
            tool=tool,
            task_id=record.task_id,
            name=record.name,
            pane_id=record.pane_id,
            kind=record.kind,
            model=record.model,
            machine=record.machine,
            artifacts=artifacts,
            task=task_summary(record.to_dict()),
            **fields,
        )

    @classmethod
    def for_agent(
        cls, tool: str, agent: AgentInfo | None, status: ResultStatus, **fields: Any
    ) -> AgentResult:
        """A result about a Herdr agent that is not one of our tasks (an observation, or a
        failure naming it): its name, pane and kind when known. ``fields`` set the rest."""
        return cls(
            status=status,
            tool=tool,
            name=agent.name if agent else None,
            pane_id=agent.pane_id if agent else None,
            kind=agent.agent if agent else None,
            **fields,
        )

    @classmethod
    def refused(
        cls,
        tool: str,
        error: ResultError,
        *,
        next_action: NextAction = "retry",
        machine: str | None = None,
    ) -> AgentResult:
        """A request refused before any task existed (a gate, a bad argument, the queue),
        on the machine the request named (default: this one)."""
        return cls(
            status="failed",
            tool=tool,
            next_action=next_action,
            error=error,
            machine=machine or LOCAL_MACHINE,
        )

    def to_dict(
        self,
        *,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        max_diff_bytes: int = DEFAULT_MAX_DIFF_BYTES,
    ) -> dict[str, Any]:
        """The contract object, texts and diff truncated, header computed."""
        next_action = self.next_action or DEFAULT_NEXT_ACTION[self.status]
        full = self.artifacts.result_md if self.artifacts else None
        final = (
            truncate_text(self.final_message, max_result_chars, full_path=full)
            if self.final_message is not None
            else None
        )
        text = (
            truncate_text(self.result_text, max_result_chars, full_path=full)
            if self.result_text is not None
            else None
        )
        out: dict[str, Any] = {
            "status": self.status,
            "nextAction": next_action,
            "observation": self.observation,
            "tool": self.tool,
            "header": "",
            "taskId": self.task_id,
            "name": self.name,
            "paneId": self.pane_id,
            "kind": self.kind,
            "model": self.model,
            "machine": self.machine,
            "finalMessage": final.text if final else None,
            "resultText": text.text if text else None,
            "truncated": {
                "finalMessage": bool(final and final.truncated),
                "resultText": bool(text and text.truncated),
            },
            "chars": {
                "finalMessage": final.chars if final else 0,
                "resultText": text.chars if text else 0,
                "max": max_result_chars,
            },
            "question": self.question,
            "evidence": [e.to_dict() for e in self.evidence],
            "diff": self.diff.to_dict(max_diff_bytes) if self.diff else None,
            "artifacts": self.artifacts.to_dict() if self.artifacts else None,
            "task": dict(self.task) if self.task is not None else None,
            "error": self.error.to_dict() if self.error else None,
            "warnings": list(self.warnings),
            "elapsedMs": self.elapsed_ms,
            "preview": dict(self.preview) if self.preview is not None else None,
        }
        out["header"] = header(out)
        return out


def refusal(
    tool: str,
    error: ResultError,
    *,
    next_action: NextAction = "retry",
    log_field: bool = True,
    machine: str | None = None,
) -> dict[str, Any]:
    """A request refused before any task existed (a gate, a bad argument, the queue), on the
    machine the request named (``machine``; default this one).

    ``log_field=False`` keeps ``error.field`` out of the log: an argument name the schema does
    not know is the caller's text, which the result may show but the logs must not keep.
    """
    # the code and field only: a message may quote what the caller sent
    shown = error.field if log_field else "(not in the schema)"
    logger.info("%s refused: %s (field %s)", tool, error.code, shown)
    return AgentResult.refused(tool, error, next_action=next_action, machine=machine).to_dict()


def is_failure(value: Mapping[str, Any]) -> bool:
    """Whether an agent tool's value reports a failure (MCP ``isError``, exit status 1).

    An AgentResult failed when its ``status`` is ``failed`` or an ``error`` is set: a refusal,
    a turn that ended in error, an agent that exited, a pane gone under its task
    (``PANE_GONE``), a close refused because the agent works (``AGENT_WORKING``). Everything
    else is a result to read and act on: ``completed`` (review it), ``running`` (wait),
    ``failed`` with ``INTERRUPTED`` from ``herdr_interrupt_agent`` (the abort it was asked for),
    ``blocked`` (ask the user: the agent asked a question, nothing went wrong), the ``gone`` of
    a successful close (no error), an observation. A page (``herdr_list_agents``,
    ``herdr_inbox``, ``herdr_read_agent``, ``herdr_doctor``: no ``nextAction``) is always a
    result to read; its failures come back as AgentResult refusals, and a doctor's own ``ok``
    judges the environment, not the call.
    """
    if "nextAction" not in value or "status" not in value:
        return False
    error = value.get("error")
    if value.get("tool") == "herdr_interrupt_agent" and isinstance(error, Mapping):
        # The outcome the caller asked for: the turn was aborted (``INTERRUPTED``).
        return error.get("code") != "INTERRUPTED"
    return value.get("status") == "failed" or error is not None


def compact(value: Mapping[str, Any]) -> dict[str, Any]:
    """The wire form of a tool value (MCP): an AgentResult's ``task`` without repeats.

    ``task`` summarises the stored record, and most of its fields (``taskId``, ``status``,
    ``kind``, ``name``, ``model``, ``paneId``, ``machine``) usually say again what the result's
    top level says. Over MCP every repeated field costs a model tokens on every call, so the
    wire form keeps under ``task`` only the keys whose value differs from the top-level key of
    the same name (e.g. ``task.status: interrupted`` under ``status: completed``). Lossless: a
    reader restores a dropped key as ``task.get(key, result[key])``. Anything that is not an
    AgentResult with a ``task`` comes back unchanged (as a new dict).
    """
    out = dict(value)
    task = out.get("task")
    if "nextAction" not in out or not isinstance(task, Mapping):
        return out
    out["task"] = {key: item for key, item in task.items() if not (key in out and out[key] == item)}
    return out


def _seconds(ms: int | None) -> str:
    return "" if ms is None else f"{ms / 1000:.1f}s"


def header(result: Mapping[str, Any]) -> str:
    """One line saying who, what state, and what next (the first line a model reads).

    ``[completed] fix-tests (pi · deepseek/deepseek-flash) task t-… pane w1:p2 · 12.3s
    · next: review``.
    """
    status = result["status"]
    tag = f"[{status} · observation]" if result.get("observation") else f"[{status}]"
    who = result.get("name") or result.get("paneId") or result.get("taskId")
    parts: list[str] = [tag]
    preview = result.get("preview")
    if preview:
        parts = [f"[{status} · preview]", f"{result.get('tool')} would {preview.get('action')};"]
        parts.append("nothing was started or sent")
    elif who is None:
        error = result.get("error") or {}
        parts.append(f"{result.get('tool')} refused")
        if error:
            parts.append(f"{error.get('code')}: {error.get('message')}")
    else:
        parts.append(str(who))
        details = " · ".join(str(v) for v in (result.get("kind"), result.get("model")) if v)
        if details:
            parts.append(f"({details})")
        if result.get("taskId") and result.get("taskId") != who:
            parts.append(f"task {result['taskId']}")
        if result.get("paneId") and result.get("paneId") != who:
            parts.append(f"pane {result['paneId']}")
        if result.get("machine") not in (None, "local"):
            parts.append(f"on {result['machine']}")
        error = result.get("error")
        if error:
            parts.append(f"· {error.get('code')}")
    line = " ".join(parts)
    elapsed = _seconds(result.get("elapsedMs"))
    if elapsed:
        line += f" · {elapsed}"
    return f"{line} · next: {result['nextAction']}"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"


def render(result: Mapping[str, Any]) -> str:
    """The model-facing text: header, next step, evidence, diff summary, error, final message.

    The raw dict stays the tool's value; this is what a chat transcript shows. The patch itself
    is not repeated here (it is in ``diff.patch``); the rendering lists changed files only.
    """
    lines = [str(result["header"])]
    if result.get("preview"):
        lines.append(f"Next: {PREVIEW_NEXT_TEXT}.")
        lines.append(f"Would do: {result['preview']['action']} {result['preview']['target']}")
    else:
        lines.append(f"Next: {NEXT_ACTION_TEXT[result['nextAction']]}.")
    error = result.get("error")
    if error:
        field_ = f" (field {error['field']})" if error.get("field") else ""
        herdr = f" [herdr: {error['herdrCode']}]" if error.get("herdrCode") else ""
        lines.append(f"Error {error['code']}{field_}{herdr}: {error['message']}")
    if result.get("question"):
        lines.append(f"Question from the agent: {result['question']}")
    evidence = result.get("evidence") or []
    if evidence:
        lines.append("Evidence:")
        for item in evidence:
            where = f" ({item['path']})" if item.get("path") else ""
            lines.append(f"- {item['source']}: {item['detail']}{where}")
    diff = result.get("diff")
    if diff:
        files = diff.get("files") or []
        base = f" against {str(diff['base'])[:12]}" if diff.get("base") else ""
        cut = (
            f"; patch truncated to {_size(diff['shownBytes'])} of {_size(diff['bytes'])}"
            if diff.get("truncated")
            else f"; patch {_size(diff['bytes'])}"
        )
        lines.append(
            f"Diff: {len(files)} file(s), +{diff['additions']} -{diff['deletions']}{base}{cut}"
        )
        for change in files:
            counts = (
                f" (+{change['additions']} -{change['deletions']})"
                if change.get("additions") is not None
                else ""
            )
            lines.append(f"  {change['status']} {change['path']}{counts}")
    artifacts = result.get("artifacts")
    if artifacts:
        exists = "" if artifacts.get("resultMdExists") else " (not written)"
        lines.append(f"Result file: {artifacts['resultMd']}{exists}")
    lines.extend(f"Warning: {warning}" for warning in result.get("warnings") or [])
    if result.get("finalMessage") is not None:
        cut = " (truncated)" if result["truncated"]["finalMessage"] else ""
        lines.append(f"Final message{cut}:")
        lines.append(str(result["finalMessage"]))
    return "\n".join(lines)


# -- schemas ----------------------------------------------------------------------------------

_NULLABLE_STR = {"type": ["string", "null"]}
_ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["code", "message", "field", "herdrCode"],
    "properties": {
        "code": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
        "message": {"type": "string", "minLength": 1},
        "field": _NULLABLE_STR,
        "herdrCode": _NULLABLE_STR,
    },
}
_TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": list(TASK_SUMMARY_KEYS),
    "properties": {
        **{key: {} for key in TASK_SUMMARY_KEYS},
        "taskId": {"type": "string", "pattern": "^t-[0-9a-f]{12}$"},
        "status": {
            "enum": [
                "starting",
                "running",
                "blocked",
                "completed",
                "failed",
                "gone",
                "interrupted",
                "closed",
            ]
        },
        "kind": {"type": "string"},
        "isolated": {"type": "boolean"},
        "error": {"type": ["object", "null"]},
    },
}

#: JSON Schema (2020-12) of an AgentResult, including the rules that tie fields together.
AGENT_RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://pytest-herdr.dev/schemas/agent-result.json",
    "title": "AgentResult",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "status",
        "nextAction",
        "observation",
        "tool",
        "header",
        "taskId",
        "name",
        "paneId",
        "kind",
        "model",
        "machine",
        "finalMessage",
        "resultText",
        "truncated",
        "chars",
        "question",
        "evidence",
        "diff",
        "artifacts",
        "task",
        "error",
        "warnings",
        "elapsedMs",
        "preview",
    ],
    "properties": {
        "status": {"enum": [*RESULT_STATUSES, OBSERVATION_STATUS]},
        "nextAction": {"enum": list(NEXT_ACTIONS)},
        "observation": {"type": "boolean"},
        "tool": {"type": "string", "pattern": "^herdr_[a-z_]+$"},
        "header": {"type": "string", "minLength": 1, "pattern": "^[^\\n]*$"},
        "taskId": {"type": ["string", "null"], "pattern": "^t-[0-9a-f]{12}$"},
        "name": _NULLABLE_STR,
        "paneId": _NULLABLE_STR,
        "kind": _NULLABLE_STR,
        "model": _NULLABLE_STR,
        "machine": {"type": "string", "minLength": 1},
        "finalMessage": _NULLABLE_STR,
        "resultText": _NULLABLE_STR,
        "truncated": {
            "type": "object",
            "additionalProperties": False,
            "required": ["finalMessage", "resultText"],
            "properties": {
                "finalMessage": {"type": "boolean"},
                "resultText": {"type": "boolean"},
            },
        },
        "chars": {
            "type": "object",
            "additionalProperties": False,
            "required": ["finalMessage", "resultText", "max"],
            "properties": {
                "finalMessage": {"type": "integer", "minimum": 0},
                "resultText": {"type": "integer", "minimum": 0},
                "max": {"type": "integer", "minimum": 1},
            },
        },
        "question": _NULLABLE_STR,
        "evidence": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["source", "detail", "path", "at"],
                "properties": {
                    "source": {"enum": list(EVIDENCE_SOURCES)},
                    "detail": {"type": "string", "minLength": 1},
                    "path": _NULLABLE_STR,
                    "at": _NULLABLE_STR,
                },
            },
        },
        "diff": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [
                        "patch",
                        "truncated",
                        "bytes",
                        "shownBytes",
                        "maxBytes",
                        "base",
                        "head",
                        "files",
                        "additions",
                        "deletions",
                    ],
                    "properties": {
                        "patch": {"type": "string"},
                        "truncated": {"type": "boolean"},
                        "bytes": {"type": "integer", "minimum": 0},
                        "shownBytes": {"type": "integer", "minimum": 0},
                        "maxBytes": {"type": "integer", "minimum": 1},
                        "base": _NULLABLE_STR,
                        "head": _NULLABLE_STR,
                        "additions": {"type": "integer", "minimum": 0},
                        "deletions": {"type": "integer", "minimum": 0},
                        "files": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "additionalProperties": False,
                                "required": ["path", "status", "additions", "deletions", "oldPath"],
                                "properties": {
                                    "path": {"type": "string", "minLength": 1},
                                    "status": {"enum": list(FILE_STATUSES)},
                                    "additions": {"type": ["integer", "null"], "minimum": 0},
                                    "deletions": {"type": ["integer", "null"], "minimum": 0},
                                    "oldPath": _NULLABLE_STR,
                                },
                            },
                        },
                    },
                },
            ]
        },
        "artifacts": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [
                        "artifactDir",
                        "resultMd",
                        "resultMdExists",
                        "inbox",
                        "sessionFile",
                        "worktree",
                    ],
                    "properties": {
                        "artifactDir": {"type": "string", "minLength": 1},
                        "resultMd": {"type": "string", "pattern": "/result\\.md$"},
                        "resultMdExists": {"type": "boolean"},
                        "inbox": {"type": "string", "pattern": "/inbox\\.ndjson$"},
                        "sessionFile": _NULLABLE_STR,
                        "worktree": _NULLABLE_STR,
                    },
                },
            ]
        },
        "task": {"oneOf": [{"type": "null"}, _TASK_SCHEMA]},
        "error": {"oneOf": [{"type": "null"}, _ERROR_SCHEMA]},
        "warnings": {"type": "array", "items": {"type": "string"}},
        "elapsedMs": {"type": ["integer", "null"], "minimum": 0},
        "preview": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["action", "target"],
                    "properties": {
                        "action": {"type": "string", "minLength": 1},
                        "target": {"type": "object"},
                    },
                },
            ]
        },
    },
    "allOf": [
        # An observation is idle with nothing to do, and has no task of ours.
        {
            "if": {"properties": {"observation": {"const": True}}},
            "then": {
                "properties": {
                    "status": {"const": OBSERVATION_STATUS},
                    "nextAction": {"const": "none"},
                    "taskId": {"type": "null"},
                    "task": {"type": "null"},
                }
            },
        },
        {
            "if": {
                "properties": {
                    "status": {"const": OBSERVATION_STATUS},
                    "preview": {"type": "null"},
                }
            },
            "then": {"properties": {"observation": {"const": True}}},
        },
        # A preview ran nothing: idle, no task, and the user approves (ask_user).
        {
            "if": {"properties": {"preview": {"type": "object"}}, "required": ["preview"]},
            "then": {
                "properties": {
                    "status": {"const": OBSERVATION_STATUS},
                    "observation": {"const": False},
                    "nextAction": {"const": "ask_user"},
                    "taskId": {"type": "null"},
                    "task": {"type": "null"},
                    "error": {"type": "null"},
                }
            },
        },
        # A blocked agent is never answered by the orchestrator: the user is asked.
        {
            "if": {"properties": {"status": {"const": "blocked"}}},
            "then": {"properties": {"nextAction": {"const": "ask_user"}}},
        },
        # A failure always says why.
        {
            "if": {"properties": {"status": {"const": "failed"}}},
            "then": {"properties": {"error": {"type": "object"}}},
        },
        # A task of ours always names its artifacts (result.md included) and its record.
        {
            "if": {"properties": {"taskId": {"type": "string"}}},
            "then": {"properties": {"artifacts": {"type": "object"}, "task": {"type": "object"}}},
        },
    ],
}

#: One row of ``herdr_list_agents``: every Herdr agent; ``owned`` marks our tasks.
FLEET_ROW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": [
        "paneId",
        "name",
        "kind",
        "agentStatus",
        "owned",
        "taskId",
        "taskStatus",
        "workspaceId",
        "tabId",
        "cwd",
        "machine",
    ],
    "properties": {
        "paneId": {"type": "string"},
        "name": _NULLABLE_STR,
        "kind": _NULLABLE_STR,
        "agentStatus": {"enum": list(AGENT_STATUSES)},
        "owned": {"type": "boolean"},
        "taskId": _NULLABLE_STR,
        "taskStatus": _NULLABLE_STR,
        "workspaceId": _NULLABLE_STR,
        "tabId": _NULLABLE_STR,
        "cwd": _NULLABLE_STR,
        "machine": {"type": "string"},
    },
    "if": {"properties": {"owned": {"const": False}}},
    "then": {"properties": {"taskId": {"type": "null"}, "taskStatus": {"type": "null"}}},
}
LIST_RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "FleetList",
    "type": "object",
    "additionalProperties": False,
    "required": ["agents"],
    "properties": {
        "agents": {"type": "array", "items": FLEET_ROW_SCHEMA},
        # Present when some task records could not be read (they were skipped, by path).
        "warnings": {"type": "array", "items": {"type": "string"}},
    },
}
#: ``herdr_doctor``'s value: ``{ok, checks[], next[], aliases[], runtime}``.
DOCTOR_RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "DoctorReport",
    "type": "object",
    "additionalProperties": False,
    "required": ["ok", "checks", "next", "aliases", "runtime"],
    "properties": {
        "ok": {"type": "boolean"},
        "checks": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "status", "detail", "fix"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[a-z][a-z0-9_.-]*$"},
                    "status": {"enum": ["ok", "warn", "fail"]},
                    "detail": {"type": "string", "minLength": 1},
                    "fix": _NULLABLE_STR,
                },
            },
        },
        "next": {"type": "array", "items": {"type": "string"}},
        "aliases": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["kind", "alias", "model", "default"],
                "properties": {
                    "kind": {"type": "string"},
                    "alias": {"type": "string"},
                    "model": {"type": "string"},
                    "default": {"type": "boolean"},
                },
            },
        },
        "runtime": {"type": "object"},
    },
}
