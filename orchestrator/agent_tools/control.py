"""``herdr_interrupt_agent``, ``herdr_close_agent`` and ``herdr_message_agent``.

Rules these tools share:

* **Only our tasks are controlled.** A target resolves through the task records (task id,
  agent name, pane id) and the record must still own the pane's agent (same pane, name, kind
  and terminal, see :func:`.fleet.owns`). Interrupt and close refuse anything else
  (``NOT_OWNED`` when Herdr knows the agent, ``TASK_NOT_FOUND`` otherwise). A task whose pane
  now runs another agent (its own exited, someone started one there by hand) is refused
  ``NOT_OWNED`` by all three tools, and that agent is left running. Message also reaches a
  foreign agent named as such (the seed's "external agent"), and then answers with an
  observation.
* **Every result is an AgentResult** whose ``status`` describes the agent after the call,
  while the record keeps the task's own state (``interrupted``, ``closed``). Message writes
  the record through :func:`.completion.write_status`, so a spawn still in flight keeps its
  ``starting`` record and a record changed meanwhile is not written over.

Interrupt sends Escape with ``agent.send_keys`` and waits briefly for the agent to settle: a
pi turn that ended ``aborted`` is ``failed`` with ``INTERRUPTED``; a turn that still finished
is ``completed`` — by the completion rule, with an answer after the task's latest prompt
(:func:`.completion.turn_answer`), never an older message of the session. The record
becomes ``interrupted`` (the pane, the session file and the record all stay).

Close refuses a ``working`` agent unless ``force``; with ``remove_worktree`` an isolated
task's worktree is removed first (a dirty one needs ``force``); then the pane is closed and
the record becomes ``closed``. The pi session file is never touched.

Message wraps the text (:func:`.envelope.prepare_message`; a long or multi-line message is
written to ``<artifactDir>/messages/<seq>-<kind>.md`` first) and sends it with
``agent.prompt``. A **blocked** target gets the text typed bare as the answer to its question
(``pane.send_input`` text + Enter), because Herdr refuses ``agent.prompt`` while an agent is
blocked (``agent_blocked``). ``wait`` waits for the turn to settle.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.agent_tools import completion
from orchestrator.agent_tools.context import AgentToolsContext, agent_context
from orchestrator.agent_tools.contract import (
    AgentResult,
    Artifacts,
    Evidence,
    NextAction,
    ResultError,
    ResultStatus,
    elapsed_ms,
    refusal,
)
from orchestrator.agent_tools.envelope import answer_text, prepare_message
from orchestrator.agent_tools.fleet import (
    artifact_dir_of,
    config_refusal,
    gate_refusal,
    herdr_refusal,
    owns,
    same_agent,
)
from orchestrator.agent_tools.harvest import to_dict
from orchestrator.agent_tools.preview import PREVIEW_SCHEMA, preview_gate
from orchestrator.agent_tools.questions import mark_turn_start, protocol_question, screen_question
from orchestrator.agent_tools.records import TaskNotFound, TaskRecord, now_iso
from orchestrator.agent_tools.remote_files import (
    LocalFiles,
    RemoteFiles,
    RemoteUnavailable,
    task_files,
)
from orchestrator.agent_tools.remote_task import reserve_message_seq
from orchestrator.agent_tools.transcript import LastAssistant, last_assistant_message, user_count
from orchestrator.agent_tools.worktree import (
    Worktree,
    WorktreeError,
    main_repository,
    remove_worktree,
)
from orchestrator.client.errors import ClientError, HerdrError, NotFound, Timeout
from orchestrator.client.file_trust import private_files as safe_fs
from orchestrator.client.protocol import SETTLED_STATUSES
from orchestrator.client.types import AgentInfo
from orchestrator.core.config import Config, GateError, check_machine
from orchestrator.core.gates import Refused as GatesRefused
from orchestrator.core.gates import pane_cwd_allowed
from orchestrator.core.tool import ToolContext
from orchestrator.logs import bind_task

INTERRUPT = "herdr_interrupt_agent"
CLOSE = "herdr_close_agent"
MESSAGE = "herdr_message_agent"
#: How long interrupt waits for the agent to settle after Escape.
SETTLE_MS = 5_000
DEFAULT_MESSAGE_TIMEOUT_MS = 600_000
MAX_TIMEOUT_MS = 3_600_000
MESSAGE_KINDS = ("NOTE", "REVIEW_FINDINGS", "ACCEPT", "REJECT", "ANSWER")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")

_TARGET = {"type": "string", "minLength": 1, "description": "Task id, agent name or pane id."}
INTERRUPT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["target"],
    "properties": {"target": _TARGET},
}
INTERRUPT_DESCRIPTION = (
    "Cancel an owned agent's current turn (Escape). The pane, session file and record stay; "
    "the record becomes interrupted. Use herdr_message_agent to stop and redirect."
)
CLOSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["target"],
    "properties": {
        "target": _TARGET,
        "force": {
            "type": "boolean",
            "default": False,
            "description": "Close a working agent; remove a dirty worktree.",
        },
        "remove_worktree": {
            "type": "boolean",
            "default": False,
            "description": "Remove an isolated task's worktree first.",
        },
    },
}
CLOSE_DESCRIPTION = (
    "Close an owned agent's pane. Refuses panes this orchestrator did not spawn, and working "
    "agents unless force. The pi session file survives. remove_worktree removes an isolated "
    "task's worktree first (a dirty one needs force)."
)
MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["target", "message"],
    "properties": {
        "target": _TARGET,
        "message": {
            "type": "string",
            "minLength": 1,
            "description": (
                "What to tell the agent, in plain text: the follow-up, the findings (one per "
                "line with severity and path:line), the reason for REJECT, or the user's "
                "answer verbatim for ANSWER."
            ),
        },
        "machine": {
            "type": "string",
            "description": (
                "Machine (a label enabled in machines) of an external target; an owned "
                "task remembers its own."
            ),
        },
        "kind": {
            "enum": list(MESSAGE_KINDS),
            "description": (
                "The message's header. NOTE (or omitted): a follow-up instruction. "
                "REVIEW_FINDINGS: review findings to fix (with round). ACCEPT: the work is "
                "accepted, stop. REJECT: stop, change nothing more. ANSWER: the user's answer "
                "to a blocked agent's question (never your own)."
            ),
        },
        "round": {
            "type": "integer",
            "minimum": 1,
            "default": 1,
            "description": "Review round number, used with kind REVIEW_FINDINGS (1, 2, ...).",
        },
        "wait": {
            "type": "boolean",
            "default": False,
            "description": (
                "true: return when the agent's turn settles, with its result. false "
                "(default): return once the message is delivered (status running)."
            ),
        },
        "timeout_ms": {
            "type": "integer",
            "minimum": 0,
            "default": DEFAULT_MESSAGE_TIMEOUT_MS,
            "description": "How long wait:true waits, in milliseconds (default 600000).",
        },
        "preview": PREVIEW_SCHEMA,
    },
}
MESSAGE_DESCRIPTION = (
    'Send a follow-up, review findings or an answer, wrapped in <agent-message from="dsh:'
    'orchestrator" to="...">. kind: NOTE, REVIEW_FINDINGS (standard prologue with round), '
    "ACCEPT, REJECT, ANSWER. A blocked agent gets the text as the answer to its question. "
    "wait: wait for the turn to settle."
)


# -- Herdr calls the typed client does not have ---------------------------------------------


def send_keys(ctx: AgentToolsContext, target: str, *keys: str) -> None:
    """``agent.send_keys``."""
    ctx.client.agent_send_keys(target, *keys)


def close_pane(ctx: AgentToolsContext, pane_id: str) -> None:
    """``pane.close``."""
    ctx.client.pane_close(pane_id)


# -- results --------------------------------------------------------------------------------


def task_result(
    ctx: AgentToolsContext,
    tool: str,
    record: TaskRecord,
    status: ResultStatus,
    *,
    next_action: NextAction | None = None,
    evidence: list[Evidence] | None = None,
    error: ResultError | None = None,
    final_message: str | None = None,
    question: str | None = None,
    warnings: list[str] | None = None,
    started: float | None = None,
) -> dict[str, Any]:
    """An AgentResult about one of our tasks (artifacts and the record summary included)."""
    elapsed = elapsed_ms(started) if started is not None else None
    files = task_files(ctx.config, record.machine)  # result.md where the task runs
    result = AgentResult.for_record(
        tool,
        record,
        status,
        artifacts=Artifacts.of(record, ctx.config.artifact_dir, files),
        next_action=next_action,
        final_message=final_message,
        question=question,
        evidence=list(evidence or []),
        error=error,
        warnings=list(warnings or []),
        elapsed_ms=elapsed,
    )
    return to_dict(ctx, result, secrets=record.agent_args)  # limits, and native args redacted


def _herdr_evidence(detail: str) -> Evidence:
    return Evidence("herdr", detail, at=now_iso())


class Refused(Exception):
    """A control request refused before anything was sent; ``result`` is the answer."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__(result.get("header", ""))
        self.result = result


def _live_agent(ctx: AgentToolsContext, record: TaskRecord) -> AgentInfo | None:
    """The agent in the record's pane if the record still owns it; None when it is gone."""
    if record.pane_id is None:
        return None
    try:
        agent = ctx.client.agent_get(record.pane_id)
    except NotFound:
        return None
    return agent if owns(record, agent) else None


def _foreign_occupant(
    ctx: AgentToolsContext, tool: str, record: TaskRecord
) -> dict[str, Any] | None:
    """``NOT_OWNED`` when the task's pane now runs an agent the task did not start (its own
    agent exited and someone started another there), else None: that agent is left alone."""
    if record.pane_id is None:
        return None
    try:
        occupant = ctx.client.agent_get(record.pane_id)
    except ClientError:
        return None
    if same_agent(record, occupant):
        return None
    return refusal(
        tool,
        ResultError(
            "NOT_OWNED",
            f"pane {record.pane_id} now runs {occupant.agent or 'an'} agent "
            f"{occupant.name!r}, not this task's {record.kind} agent {record.name!r}; "
            "this orchestrator did not start it and leaves it alone",
            field="target",
        ),
        next_action="none",
    )


def resolve_owned(ctx: AgentToolsContext, tool: str, target: str) -> TaskRecord:
    """Our task for ``target``, or :class:`Refused` (``TASK_NOT_FOUND`` / ``NOT_OWNED``)."""
    try:
        record = ctx.store.find(target)
        bind_task(record.task_id)
        ctx.select_machine(record.machine)  # the task lives where it was spawned
        return record
    except TaskNotFound as exc:
        foreign: AgentInfo | None = None
        try:
            foreign = ctx.client.agent_get(target)
        except ClientError:
            foreign = None
        if foreign is not None:
            raise Refused(
                refusal(
                    tool,
                    ResultError(
                        "NOT_OWNED",
                        f"{target!r} is an agent this orchestrator did not spawn "
                        f"(pane {foreign.pane_id}); it is read-only",
                        field="target",
                    ),
                    next_action="none",
                )
            ) from None
        raise Refused(
            refusal(tool, ResultError("TASK_NOT_FOUND", str(exc), field="target"))
        ) from None


def _users_before(record: TaskRecord, files: RemoteFiles, blocked: bool) -> int | None:
    """The user messages in a pi task's session before a message is typed, by which its
    answer is told from an older one; ``None`` when that cannot be told here: an answer to
    a question (pi takes it inside the blocked turn, not as a new user message), another
    kind, no session yet, or a session that cannot be read now."""
    if blocked or record.kind != "pi" or not record.session_path:
        return None
    try:
        return user_count(record.session_path, files=files)
    except (OSError, RemoteUnavailable):
        return None


def _gone(
    ctx: AgentToolsContext, tool: str, record: TaskRecord, started: float, detail: str
) -> dict[str, Any]:
    if record.status not in ("closed", "gone"):
        record = ctx.store.update(record.task_id, status="gone")
    return task_result(
        ctx,
        tool,
        record,
        "gone",
        evidence=[_herdr_evidence(detail)],
        error=ResultError("PANE_GONE", detail),
        started=started,
    )


# -- interrupt ------------------------------------------------------------------------------


def _settled_status(
    record: TaskRecord, agent: AgentInfo | None, artifact_root: Path, config: Config
) -> tuple[ResultStatus, ResultError | None, str | None, Evidence | None]:
    """What the agent is doing after Escape, read from Herdr and, for the turn's end, the
    completion rule (:func:`.completion.turn_answer`): only an answer after our prompt counts,
    never an older message of the session."""
    if agent is None:
        return "running", None, None, None
    if agent.agent_status == "blocked":
        return "blocked", None, None, None
    if agent.agent_status == "working":
        return "running", None, None, None
    files = task_files(config, record.machine)
    try:
        answer = completion.turn_answer(record, record.session_path, artifact_root, files=files)
    except RemoteUnavailable:
        return "running", None, None, None  # its session cannot be read now: not known
    if answer is None:
        return "failed", ResultError("INTERRUPTED", "the turn was interrupted (Escape)"), None, None
    evidence = Evidence(
        "session",
        f"answer to the task's latest prompt: last assistant message, stopReason "
        f"{answer.stop_reason}",
        path=record.session_path,
        at=answer.timestamp,
    )
    if answer.stop_reason == "aborted":
        message = f"the turn was aborted: {answer.error or 'stopReason aborted'}"
        return "failed", ResultError("INTERRUPTED", message), answer.text or None, evidence
    if answer.failed:
        error = ResultError("AGENT_ERROR", answer.error or "the turn ended in an error")
        return "failed", error, answer.text, evidence
    return "completed", None, answer.text, evidence


def _session_path(record: TaskRecord, agent: AgentInfo | None) -> str | None:
    return record.session_path or completion.session_path_of(agent)


def interrupt_agent(params: Mapping[str, Any], tool_ctx: ToolContext) -> dict[str, Any]:
    """Escape to an owned agent; the record becomes ``interrupted``."""
    started = time.monotonic()
    ctx = agent_context(tool_ctx)
    refused_config = config_refusal(INTERRUPT, ctx)
    if refused_config is not None:
        return refused_config
    try:
        record = resolve_owned(ctx, INTERRUPT, str(params["target"]))
        agent = _live_agent(ctx, record)
    except Refused as refused:
        return refused.result
    except ClientError as exc:
        return herdr_refusal(INTERRUPT, exc, field="target")
    if record.status == "closed":
        return task_result(
            ctx,
            INTERRUPT,
            record,
            "gone",
            error=ResultError("PANE_GONE", "the task was closed; there is nothing to interrupt"),
            started=started,
        )
    if agent is None:
        foreign = _foreign_occupant(ctx, INTERRUPT, record)
        if foreign is not None:
            return foreign
        return _gone(
            ctx, INTERRUPT, record, started, f"no agent {record.name} in pane {record.pane_id}"
        )
    before = agent.agent_status
    try:
        send_keys(ctx, agent.pane_id, "Escape")
    except NotFound:
        return _gone(ctx, INTERRUPT, record, started, f"pane {agent.pane_id} disappeared")
    except ClientError as exc:
        code = exc.code if isinstance(exc, HerdrError) else None
        return task_result(
            ctx,
            INTERRUPT,
            record,
            "failed",
            error=ResultError("HERDR_ERROR", str(exc), herdr_code=code),
            started=started,
        )
    session_path = _session_path(record, agent)
    record = ctx.store.update(record.task_id, status="interrupted", session_path=session_path)
    evidence = [_herdr_evidence(f"Escape sent to pane {agent.pane_id} (agent was {before})")]
    settled: AgentInfo | None
    try:
        settled = ctx.client.agent_wait(agent.pane_id, until=SETTLED_STATUSES, timeout_ms=SETTLE_MS)
    except Timeout:
        settled = None
        evidence.append(_herdr_evidence(f"still working {SETTLE_MS} ms after Escape"))
    except ClientError:
        settled = None
    status, error, final, session_evidence = _settled_status(
        record, settled, ctx.config.artifact_dir, ctx.config
    )
    if settled is not None:
        evidence.append(_herdr_evidence(f"agent status {settled.agent_status} after Escape"))
    if session_evidence is not None:
        evidence.append(session_evidence)
    return task_result(
        ctx,
        INTERRUPT,
        record,
        status,
        evidence=evidence,
        error=error,
        final_message=final,
        started=started,
    )


# -- close ----------------------------------------------------------------------------------


def close_agent(params: Mapping[str, Any], tool_ctx: ToolContext) -> dict[str, Any]:
    """Close an owned agent's pane (refusing a working one unless ``force``)."""
    started = time.monotonic()
    ctx = agent_context(tool_ctx)
    refused_config = config_refusal(CLOSE, ctx)
    if refused_config is not None:
        return refused_config
    force = bool(params.get("force", False))
    try:
        record = resolve_owned(ctx, CLOSE, str(params["target"]))
        agent = _live_agent(ctx, record) if record.status != "closed" else None
    except Refused as refused:
        return refused.result
    except ClientError as exc:
        return herdr_refusal(CLOSE, exc, field="target")
    if agent is None and record.status != "closed":
        foreign = _foreign_occupant(ctx, CLOSE, record)
        if foreign is not None:
            return foreign
    if agent is not None and agent.agent_status == "working" and not force:
        return task_result(
            ctx,
            CLOSE,
            record,
            "running",
            next_action="wait",
            evidence=[_herdr_evidence(f"agent {agent.name} is working")],
            error=ResultError(
                "AGENT_WORKING",
                f"agent {agent.name} is working; interrupt it, wait for it, or pass force",
                field="force",
            ),
            started=started,
        )
    evidence: list[Evidence] = []
    warnings: list[str] = []
    if params.get("remove_worktree") and record.worktree_path:
        worktree = Worktree(
            repo=main_repository(record.worktree_path, record.cwd),
            path=record.worktree_path,
            branch=record.branch or f"dsh/{record.task_id}",
            base_commit=record.base_commit or "",
        )
        try:
            removal = remove_worktree(worktree, force=force)
        except WorktreeError as exc:
            return task_result(
                ctx,
                CLOSE,
                record,
                "failed",
                next_action="retry",
                error=ResultError(exc.code, exc.message, field="force"),
                started=started,
            )
        evidence.append(Evidence("git", removal.reason, path=record.worktree_path))
    elif params.get("remove_worktree"):
        warnings.append("remove_worktree: this task has no worktree (it was not isolated)")
    if record.status == "closed":
        evidence.append(Evidence("record", "the task was already closed"))
    elif agent is not None and record.pane_id is not None:
        session_path = _session_path(record, agent)
        try:
            close_pane(ctx, record.pane_id)
            evidence.append(_herdr_evidence(f"pane {record.pane_id} closed"))
        except NotFound:
            evidence.append(_herdr_evidence(f"pane {record.pane_id} was already gone"))
        except ClientError as exc:
            code = exc.code if isinstance(exc, HerdrError) else None
            return task_result(
                ctx,
                CLOSE,
                record,
                "failed",
                error=ResultError("HERDR_ERROR", str(exc), herdr_code=code),
                started=started,
            )
        record = ctx.store.update(record.task_id, status="closed", session_path=session_path)
    else:
        evidence.append(
            Evidence("record", "the task never got a pane (its spawn did not start one)")
            if record.pane_id is None
            else _herdr_evidence(f"pane {record.pane_id} was already gone")
        )
        record = ctx.store.update(record.task_id, status="closed")
    if record.session_path:
        evidence.append(Evidence("session", "session file kept", path=record.session_path))
    return task_result(
        ctx,
        CLOSE,
        record,
        "gone",
        next_action="none",
        evidence=evidence,
        warnings=warnings,
        started=started,
    )


# -- message --------------------------------------------------------------------------------


def _external_dir(ctx: AgentToolsContext, agent: AgentInfo) -> Path:
    label = _SAFE.sub("-", agent.name or agent.pane_id)
    return ctx.config.artifact_dir / "external" / label


def _next_seq(directory: Path) -> int:
    """The next message number of a task, reserved for this call: an exclusively created
    marker per number, so two messages sent at once (even from two processes) never share
    a number and one file never overwrites the other. ``messages/`` is opened without
    following a link (the child controls its artifact directory) and the marker is created
    relative to it."""
    with safe_fs.open_dir(directory / "messages", create=True) as messages:
        names = os.listdir(messages)  # noqa: PTH208 - a directory descriptor has no Path form
        seq = sum(1 for name in names if name.endswith(".seq")) + 1
        while True:
            try:
                safe_fs.publish_new(messages, f".{seq:03d}.seq", b"", sync=False)  # reserved
            except FileExistsError:
                seq += 1
                continue
            return seq


def _observation(
    agent: AgentInfo,
    started: float,
    evidence: list[Evidence],
    warnings: list[str],
    machine: str,
) -> dict[str, Any]:
    return AgentResult.for_agent(
        MESSAGE,
        agent,
        "idle",
        machine=machine,
        observation=True,
        evidence=evidence,
        warnings=warnings,
        elapsed_ms=elapsed_ms(started),
    ).to_dict()


def _restore(ctx: AgentToolsContext, record: TaskRecord, before: TaskRecord) -> TaskRecord:
    """The record as it was before a message that was not delivered (its status and error),
    through the record-write check."""
    error: ResultError | None = None
    if before.error:
        error = ResultError.from_dict(before.error, code="FAILED", message="")
    return completion.write_status(ctx.store, record, before.status, error)


@dataclass
class _Message:
    """One ``herdr_message_agent`` call as its steps go: what was asked, the task and agent
    it reached, and the evidence and warnings gathered on the way."""

    ctx: AgentToolsContext
    started: float
    target: str
    text: str
    kind: Any
    round_: int
    wait: bool
    timeout_ms: int
    machine: str
    given: Any
    record: TaskRecord | None = None
    #: the task's record before this message (restored when nothing was delivered)
    before: TaskRecord | None = None
    agent: AgentInfo | None = None
    blocked: bool = False
    users_before: int | None = None
    settled: AgentInfo | None = None
    evidence: list[Evidence] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def live(self) -> AgentInfo:
        """The agent the message goes to (resolved by :func:`_reach_agent`)."""
        assert self.agent is not None
        return self.agent


def message_agent(params: Mapping[str, Any], tool_ctx: ToolContext) -> dict[str, Any]:
    """Deliver a message (or the answer to a blocked agent's question); optionally wait."""
    started = time.monotonic()
    ctx = agent_context(tool_ctx)
    msg = _message_request(ctx, params, started)
    if isinstance(msg, dict):
        return msg
    reached = _reach_agent(msg)
    if reached is not None:
        return reached
    _open_turn(msg)
    failed = _deliver(msg)
    if failed is not None:
        return failed
    return _message_outcome(msg)


def _message_request(
    ctx: AgentToolsContext, params: Mapping[str, Any], started: float
) -> _Message | dict[str, Any]:
    """The call's parameters, past the configuration, machine and preview gates (a refusal
    or a preview is answered instead)."""
    refused_config = config_refusal(MESSAGE, ctx)
    if refused_config is not None:
        return refused_config
    try:  # the kill switch and the preview gate ran before, in the runner
        given = params.get("machine")
        machine = check_machine(ctx.config, given)
    except GateError as exc:
        return gate_refusal(MESSAGE, exc)
    target = str(params["target"])
    text = str(params["message"])
    kind = params.get("kind")
    would = {
        "target": target,
        "kind": kind,
        "message": f"<redacted: {len(text)} chars>",
        "wait": bool(params.get("wait", False)),
    }
    gated = preview_gate(MESSAGE, ctx, params, "prompt an agent", would, started=started)
    if gated is not None:
        return gated
    return _Message(
        ctx=ctx,
        started=started,
        target=target,
        text=text,
        kind=kind,
        round_=int(params.get("round", 1)),
        wait=bool(params.get("wait", False)),
        timeout_ms=max(
            0, min(int(params.get("timeout_ms", DEFAULT_MESSAGE_TIMEOUT_MS)), MAX_TIMEOUT_MS)
        ),
        machine=machine,
        given=given,
    )


def _reach_agent(msg: _Message) -> dict[str, Any] | None:
    """The task (if ``target`` names one) and its live agent, or the agent ``target`` names;
    a refusal when there is none, or its directory is not allowed."""
    ctx, target = msg.ctx, msg.target
    record: TaskRecord | None
    try:
        record = ctx.store.find(target, msg.machine if msg.given else None)
        bind_task(record.task_id)
    except TaskNotFound:
        record = None
    ctx.select_machine(record.machine if record is not None else msg.machine)
    try:
        if record is not None:
            agent = _live_agent(ctx, record)
            if agent is None:
                foreign = _foreign_occupant(ctx, MESSAGE, record)
                if foreign is not None:
                    return foreign
                return _gone(
                    ctx,
                    MESSAGE,
                    record,
                    msg.started,
                    f"no agent {record.name} in pane {record.pane_id}",
                )
        else:
            agent = ctx.client.agent_get(target)
        pane_cwd_allowed(ctx.config, ctx.client, agent.pane_id)
    except NotFound:
        return refusal(
            MESSAGE,
            ResultError("TASK_NOT_FOUND", f"no task or agent {target!r}", field="target"),
        )
    except ClientError as exc:
        return herdr_refusal(MESSAGE, exc, field="target", machine=ctx.machine)
    except GatesRefused as exc:
        gate = exc.refusal
        return refusal(MESSAGE, ResultError(gate.agent_code, gate.message, field="target"))
    msg.record, msg.before, msg.agent = record, record, agent
    msg.blocked = agent.agent_status == "blocked"
    return None


def _open_turn(msg: _Message) -> None:
    """A task's record goes ``running`` and remembers where this message's turn starts
    (the question it answers, the user messages before it in the session)."""
    ctx, record = msg.ctx, msg.record
    if record is None:
        return
    # Through the record-write check: a spawn still in flight keeps its "starting" record
    # and a record changed since it was read is not written over.
    record = completion.write_status(
        ctx.store, record, "running", None, _session_path(record, msg.live)
    )
    # A BLOCKED the child reported before this message is answered by it.
    files = task_files(ctx.config, record.machine)
    record = mark_turn_start(ctx.store, record, ctx.config.artifact_dir, files=files)
    msg.users_before = _users_before(record, files, msg.blocked)
    if msg.users_before is not None:
        count = msg.users_before
        record = ctx.store.modify(
            record.task_id,
            lambda current: {"extra": {**current.extra, completion.TURN_USERS: count}},
        )
    msg.record = record


def _deliver(msg: _Message) -> dict[str, Any] | None:
    """Type the answer or send the message (and wait, when asked); a failure that ends the
    call is answered here, a timeout only noted."""
    ctx, record, before, agent = msg.ctx, msg.record, msg.before, msg.live
    deadline = time.monotonic() + msg.timeout_ms / 1000
    try:
        if msg.blocked:
            _type_answer(msg)
        else:
            unsent = _send_message(msg)
            if unsent is not None:
                return unsent
        if msg.blocked:
            _await_answer_taken(msg, deadline)
    except Timeout as exc:
        if exc.code == "agent_prompt_stalled":
            # Herdr saw no state change within its 5 s: not "not settled within timeout_ms"
            msg.evidence.append(_herdr_evidence(f"no state change after the message ({exc.code})"))
            msg.warnings.append(
                "the agent showed no sign of taking the message within 5 s (an agent still "
                "starting up keeps it in its editor): it may never start this turn; look at "
                "its pane before sending it again"
            )
        else:
            msg.evidence.append(_herdr_evidence(f"not settled within {msg.timeout_ms} ms"))
    except NotFound:
        if record is not None:
            return _gone(ctx, MESSAGE, record, msg.started, f"pane {agent.pane_id} disappeared")
        return refusal(MESSAGE, ResultError("TASK_NOT_FOUND", f"agent {msg.target!r} is gone"))
    except ClientError as exc:
        code = exc.code if isinstance(exc, HerdrError) else None
        error = ResultError("HERDR_ERROR", str(exc), herdr_code=code)
        if record is None or before is None:
            return refusal(MESSAGE, error, next_action="inspect")
        if not msg.evidence:  # nothing was delivered: the task is as it was
            record = _restore(ctx, record, before)
        return task_result(ctx, MESSAGE, record, "failed", error=error, started=msg.started)
    return None


def _type_answer(msg: _Message) -> None:
    """A blocked agent's question is answered: the text is typed into its pane."""
    if msg.kind not in (None, "ANSWER"):
        msg.warnings.append(f"the agent was blocked: the {msg.kind} text was typed as its answer")
    msg.ctx.client.pane_run(msg.live.pane_id, answer_text(msg.text))
    msg.evidence.append(_herdr_evidence("the agent was blocked: the text was typed as its answer"))


def _send_message(msg: _Message) -> dict[str, Any] | None:
    """The message written to the task's message file and prompted (waiting for the turn
    to settle when asked); a file that cannot be written is answered, nothing typed."""
    ctx, record, before, agent = msg.ctx, msg.record, msg.before, msg.live
    to = agent.name or agent.pane_id
    directory = artifact_dir_of(ctx, record) if record else _external_dir(ctx, agent)
    # a task's message file goes where the task runs (over SSH: on its machine)
    remote = task_files(ctx.config, record.machine) if record else LocalFiles()
    over_ssh = not isinstance(remote, LocalFiles)
    try:
        prepared = prepare_message(
            msg.text,
            to=to,
            artifact_dir=directory,
            seq=(reserve_message_seq(remote, str(directory)) if over_ssh else _next_seq(directory)),
            kind=msg.kind,
            round_=msg.round_,
        )
        written = prepared.write(remote if over_ssh else None)
    except OSError as exc:
        # messages/ replaced by a link (or a full disk): nothing is typed
        error = ResultError(
            "ARTIFACT_UNSAFE" if isinstance(exc, safe_fs.UnsafeFile) else "WRITE_FAILED",
            f"the message file could not be written: {exc.strerror or exc}",
        )
        if record is None or before is None:
            return refusal(MESSAGE, error, next_action="inspect")
        record = _restore(ctx, record, before)
        return task_result(ctx, MESSAGE, record, "failed", error=error, started=msg.started)
    if written is not None:
        msg.evidence.append(Evidence("record", "message written to a file", path=str(written)))
    if msg.wait:
        # One request: Herdr waits for the turn to start, then to settle (a separate
        # agent.wait could see the status from before the prompt and return at once).
        msg.settled = ctx.client.agent_prompt(
            agent.pane_id,
            prepared.prompt,
            wait=True,
            until=SETTLED_STATUSES,
            timeout_ms=msg.timeout_ms,
        )
    else:
        ctx.client.agent_prompt(agent.pane_id, prepared.prompt)
    msg.evidence.append(_herdr_evidence(f"message sent to {to} with agent.prompt"))
    return None


def _await_answer_taken(msg: _Message, deadline: float) -> None:
    """The answer takes the agent out of its question before the call returns, waiting or
    not: a harvest right after would otherwise read the stale "blocked" and send the caller
    back to the user with a question already answered. With ``wait``, then the turn."""
    client, pane_id = msg.ctx.client, msg.live.pane_id
    budget = min(msg.timeout_ms, SETTLE_MS)
    client.agent_wait(pane_id, until=("working", "idle", "done"), timeout_ms=budget)
    if msg.wait:
        left = max(0, int((deadline - time.monotonic()) * 1000))
        msg.settled = client.agent_wait(pane_id, until=SETTLED_STATUSES, timeout_ms=left)


def _message_outcome(msg: _Message) -> dict[str, Any]:
    """What the delivered message led to: an observation of an agent without a task, a
    task still running, or its turn's judged end."""
    ctx, record, settled = msg.ctx, msg.record, msg.settled
    evidence, warnings, started = msg.evidence, msg.warnings, msg.started
    if record is None:
        if settled is not None:
            evidence.append(_herdr_evidence(f"agent status {settled.agent_status}"))
        return _observation(msg.live, started, evidence, warnings, ctx.machine)
    if settled is None:
        return task_result(
            ctx, MESSAGE, record, "running", evidence=evidence, warnings=warnings, started=started
        )
    evidence.append(_herdr_evidence(f"agent status {settled.agent_status} after the turn"))
    if settled.agent_status == "blocked":
        record = completion.write_status(ctx.store, record, "blocked", None)
        evidence.append(Evidence("pane", "the agent's question on screen"))
        return task_result(
            ctx, MESSAGE, record, "blocked", evidence=evidence, warnings=warnings,
            question=screen_question(ctx.client, settled.pane_id), started=started,
        )  # fmt: skip
    files = task_files(ctx.config, record.machine)
    last: LastAssistant | None
    try:
        if msg.users_before is not None and record.session_path:
            turn = completion.latest_turn(
                record, record.session_path, ctx.config.artifact_dir, files=files
            )
            if turn is None or turn.answer is None:
                # Herdr's settled status can predate the message (or the agent settled
                # without taking it): the older answer still last in the session is not
                # this message's, so the turn is not known to be over
                prompted = turn is not None and turn.prompted
                shown = "no answer to it yet" if prompted else "the message not yet in it"
                evidence.append(Evidence("session", shown, path=record.session_path))
                return task_result(
                    ctx, MESSAGE, record, "running", evidence=evidence, warnings=warnings,
                    started=started,
                )  # fmt: skip
            last = turn.answer
        else:
            last = last_assistant_message(record.session_path, files=files)
    except RemoteUnavailable:
        last = None  # the session cannot be read now
        warnings.append(f"the agent's session on {record.machine} could not be read")
    return _judged_turn(msg, record, last, files)


def _judged_turn(
    msg: _Message, record: TaskRecord, last: LastAssistant | None, files: RemoteFiles
) -> dict[str, Any]:
    """The settled turn's end from its answer: failed, a question (blocked), or completed."""
    ctx, evidence, warnings, started = msg.ctx, msg.evidence, msg.warnings, msg.started
    if last is not None:
        evidence.append(
            Evidence(
                "session",
                f"last assistant message, stopReason {last.stop_reason}",
                path=record.session_path,
                at=last.timestamp,
            )
        )
        if last.failed:
            record = completion.write_status(
                ctx.store,
                record,
                "failed",
                ResultError("AGENT_ERROR", last.error or "stopReason error"),
            )
            return task_result(
                ctx,
                MESSAGE,
                record,
                "failed",
                evidence=evidence,
                final_message=last.text,
                error=ResultError("AGENT_ERROR", last.error or "the turn ended in error"),
                warnings=warnings,
                started=started,
            )
    asked = protocol_question(
        record, last.text if last else None, ctx.config.artifact_dir, files=files
    )
    if asked is not None:
        evidence.append(Evidence(asked.source, asked.detail, path=asked.path))
        record = completion.write_status(ctx.store, record, "blocked", None)
        return task_result(
            ctx, MESSAGE, record, "blocked", evidence=evidence, warnings=warnings,
            final_message=last.text if last else None, question=asked.text, started=started,
        )  # fmt: skip
    record = completion.write_status(ctx.store, record, "completed", None)
    return task_result(
        ctx,
        MESSAGE,
        record,
        "completed",
        evidence=evidence,
        final_message=last.text if last else None,
        warnings=warnings,
        started=started,
    )


__all__ = [
    "CLOSE_DESCRIPTION",
    "CLOSE_SCHEMA",
    "INTERRUPT_DESCRIPTION",
    "INTERRUPT_SCHEMA",
    "MESSAGE_DESCRIPTION",
    "MESSAGE_SCHEMA",
    "close_agent",
    "interrupt_agent",
    "message_agent",
    "send_keys",
]
