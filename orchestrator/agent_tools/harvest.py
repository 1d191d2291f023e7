"""Harvesting a task: what its agent did, as an AgentResult; and ``herdr_get_agent_result``.

Harvest reads, it never types: it asks Herdr for the agent's status, and decides by the
evidence rule of :mod:`.completion` (``completed`` only when our task prompt was delivered
and answered), waiting — server side where Herdr can, bounded by ``timeout_ms`` — while the
verdict may still change. Then it collects:

* **pi** — the answer to the task prompt in the session file Herdr reports in the agent's
  ``agent_session`` (``stopReason: error`` → ``failed``, ``aborted`` → ``failed``
  ``INTERRUPTED``);
* **other kinds** — the pane tail (``lines`` lines of the recent buffer);
* ``<artifactDir>/result.md`` when the child wrote it;
* the diff: an isolated task's worktree against its base commit, a plain task's cwd against
  the snapshot taken at spawn (so the user's earlier edits are not blamed on the agent).

The record follows what was found (``running`` → ``completed`` …), except that ``closed`` and
``interrupted`` are kept until something new happens, a ``starting`` record is left to its
spawn unless the finding is conclusive, and nothing is written over a record that changed
since it was read (see result-contract.md). A task that settled frees its concurrency slot.

``herdr_get_agent_result`` resolves its ``target`` in the task registry first (task id, agent
name, pane id); a target we did not spawn gets an *observation* (``status: idle``,
``nextAction: none``) with its last message as context. It never re-submits anything.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.agent_tools import (
    completion,
    contract,
    questions,
    screen_text,
    transcript,
    worktree,
)
from orchestrator.agent_tools.context import AgentToolsContext, agent_context
from orchestrator.agent_tools.fleet import same_agent
from orchestrator.agent_tools.records import (
    ACTIVE_STATUSES,
    TaskNotFound,
    TaskRecord,
    UnreadableRecord,
    ensure_private_dir,
)
from orchestrator.agent_tools.remote_files import LocalFiles, RemoteFiles, SshFiles, task_files
from orchestrator.client.errors import ClientError, HerdrError, TransportError
from orchestrator.client.file_trust import private_files as safe_fs
from orchestrator.client.poll import Deadline
from orchestrator.client.protocol import SETTLED_STATUSES
from orchestrator.client.types import AgentInfo
from orchestrator.core.config import (
    LOCAL_MACHINE,
    Config,
    ConfigError,
    files_reachable,
    machine_hint,
)
from orchestrator.core.result import redact_text, secret_parts
from orchestrator.core.tool import ToolContext
from orchestrator.logs import bind_task, task_logger

logger = task_logger(__name__)

TOOL = "herdr_get_agent_result"
DEFAULT_TIMEOUT_MS = 600_000
DEFAULT_LINES = 80
MAX_LINES = 1000
#: Statuses Herdr calls settled: the turn is over (or waits for a human).
SETTLED = SETTLED_STATUSES
#: Polling while a spawn in another process has not delivered its prompt yet, and the
#: server-side wait for a new turn while the agent is settled without its answer.
_POLL_S = 0.1
_POLL_MS = 250
#: A generous bound for the patch read from git; the contract cuts it to ``maxDiffBytes``.
_DIFF_READ_BYTES = 64 * 1024 * 1024
_NOT_FOUND = ("agent_not_found", "pane_not_found", "agent_pane_not_found", "agent_not_running")

GET_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["target"],
    "properties": {
        "target": {
            "type": "string",
            "minLength": 1,
            "description": "Task id, agent name, or pane id.",
        },
        "wait": {
            "type": "boolean",
            "description": "Block until the agent is idle/done/blocked (default true).",
        },
        "timeout_ms": {
            "type": "integer",
            "default": DEFAULT_TIMEOUT_MS,
            "minimum": 0,
            "maximum": 3_600_000,
            "description": "Wait budget in milliseconds (default 600000).",
        },
        "lines": {
            "type": "integer",
            "default": DEFAULT_LINES,
            "minimum": 1,
            "maximum": MAX_LINES,
            "description": "Pane tail lines for the fallback (default 80).",
        },
        "machine": {
            "type": "string",
            "description": (
                "Machine (a label enabled in machines) of an external target; an owned "
                "task remembers its own."
            ),
        },
    },
}


# -- the diff ---------------------------------------------------------------------------------

_FILE_STATUS = {"A": "added", "M": "modified", "D": "deleted", "T": "modified"}
_DIFF_HEADER = re.compile(r"^diff --git a/(.*) b/(.*)$")


def _numstat(patch: str) -> dict[str, tuple[int | None, int | None]]:
    """Added/deleted line counts per path, read off the unified patch (None: binary)."""
    counts: dict[str, list[int]] = {}
    binary: set[str] = set()
    current: str | None = None
    in_hunk = False
    for line in patch.splitlines():
        header = _DIFF_HEADER.match(line)
        if header:
            current = header.group(2)
            counts[current] = [0, 0]
            in_hunk = False
            continue
        if current is None:
            continue
        if line.startswith("@@"):
            in_hunk = True
        elif line.startswith("Binary files "):
            binary.add(current)
        elif in_hunk and line.startswith("+"):
            counts[current][0] += 1
        elif in_hunk and line.startswith("-"):
            counts[current][1] += 1
    out: dict[str, tuple[int | None, int | None]] = {}
    for path, (adds, dels) in counts.items():
        out[path] = (None, None) if path in binary else (adds, dels)
    return out


#: the local copy of a remote task's patch, in ``<artifactDir>/<taskId>/`` on this host
PATCH_FILE = "diff.patch"


def _keep_patch(
    config: Config, record: TaskRecord, diff: contract.Diff, notes: list[str]
) -> contract.Evidence:
    """Write the patch of a task on a machine over SSH to this host (its artifact directory
    is on the machine): the whole patch, as computed there, whatever the result shows."""
    path = config.artifact_dir / record.task_id / PATCH_FILE
    try:
        ensure_private_dir(path.parent)
        safe_fs.write_atomic(path, diff.patch.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        notes.append(f"the patch could not be written to {path}: {exc.strerror or exc}")
        return contract.Evidence("git", f"patch computed on {record.machine}")
    return contract.Evidence(
        "git", f"patch computed on {record.machine}, written here", path=str(path)
    )


def task_diff(
    record: TaskRecord, files: RemoteFiles | None = None
) -> tuple[contract.Diff | None, str | None]:
    """The task's diff (or None when there is nothing to diff against) and a warning; git
    runs where the task runs (``files``: this host by default), the patch comes back here.
    A machine that cannot be reached gives no diff and a warning that says so."""
    try:
        if record.isolated and record.worktree_path and record.base_commit:
            found = worktree.diff(
                record.worktree_path, record.base_commit, max_bytes=_DIFF_READ_BYTES, files=files
            )
            base = record.base_commit
        else:
            data = record.extra.get("baseline")
            if not isinstance(data, Mapping):
                return None, None
            baseline = worktree.Baseline(
                repo=str(data["repo"]),
                cwd=str(data["cwd"]),
                commit=str(data["commit"]),
                tree=data.get("tree") if isinstance(data.get("tree"), str) else None,
            )
            found = worktree.diff(baseline.cwd, baseline, max_bytes=_DIFF_READ_BYTES, files=files)
            base = baseline.commit
    except (worktree.WorktreeError, OSError, KeyError) as exc:
        return None, f"no diff: {exc}"
    stats = _numstat(found.patch)
    changes = []
    for letter, path in found.files:
        adds, dels = stats.get(path, (0, 0))
        status = "binary" if adds is None else _FILE_STATUS.get(letter[:1], "modified")
        changes.append(contract.FileChange(path, status, adds, dels))
    return contract.Diff(patch=found.patch, base=base, files=changes, head=None), None


# -- evidence helpers ------------------------------------------------------------------------


def artifacts_of(record: TaskRecord, artifact_root: Path) -> contract.Artifacts:
    """The artifact paths of a task (:meth:`.contract.Artifacts.of`)."""
    return contract.Artifacts.of(record, artifact_root)


def pane_tail(
    actx: AgentToolsContext, pane_id: str, lines: int, *, message: bool = False
) -> str | None:
    """The pane's recent text (``lines`` lines read) without screen chrome: with ``message``
    the agent's last message (:func:`.screen_text.last_message`), else the last non-blank
    lines (:func:`.screen_text.last_lines`)."""
    try:
        text = actx.client.pane_read(pane_id, "recent", lines).text
    except ClientError:
        return None
    if message:
        return screen_text.last_message(text)
    return screen_text.last_lines(text, lines) or None


def _code(exc: BaseException) -> str | None:
    return exc.code if isinstance(exc, HerdrError) else None


def error_of(
    code: str, message: str, *, field: str | None = None, herdr: str | None = None
) -> contract.ResultError:
    """A result error (our code, Herdr's code when Herdr refused)."""
    return contract.ResultError(code, message or code, field, herdr)


# -- harvesting ------------------------------------------------------------------------------


def _pane_exists(actx: AgentToolsContext, pane_id: str) -> bool | None:
    """Whether the pane is still there (None: could not tell)."""
    try:
        actx.client.pane_get(pane_id)
    except HerdrError as exc:
        if exc.code in ("pane_not_found",):
            return False
        return None
    except TransportError:
        return None
    return True


def _agent(actx: AgentToolsContext, record: TaskRecord) -> AgentInfo | None:
    """The task's agent now (by pane id: a name is cleared when the agent exits)."""
    assert record.pane_id is not None
    try:
        info = actx.client.agent_get(record.pane_id)
    except HerdrError as exc:
        if exc.code in _NOT_FOUND:
            return None
        raise
    if not same_agent(record, info, terminal=False):
        return None  # another agent took the pane over (fleet.same_agent); a restored one is
        # still the task's, and completion.judge reports its lost turn
    return info


def _look(actx: AgentToolsContext, record: TaskRecord) -> AgentInfo | None:
    """The task's agent now, or None (no pane yet, or no agent in it)."""
    return _agent(actx, record) if record.pane_id is not None else None


def _await(
    actx: AgentToolsContext,
    record: TaskRecord,
    info: AgentInfo | None,
    deadline: Deadline,
) -> AgentInfo | None:
    """Wait (bounded by ``deadline``) for something that may change the verdict: the spawn's
    next step while the prompt is not delivered, the turn's end while the agent works, a new
    turn or the session's answer while it is settled without one. The agent as seen then."""
    remaining = int(deadline.left() * 1000)
    if completion.phase(record) == "pending" or record.pane_id is None or info is None:
        time.sleep(min(_POLL_S, remaining / 1000))
        return _look(actx, record)
    if info.agent_status not in SETTLED:
        until: tuple[str, ...] = SETTLED
    else:
        # settled without the answer: a transient status, or the session is being written
        until, remaining = ("working", "blocked", "unknown"), min(remaining, _POLL_MS)
    try:
        return actx.client.agent_wait(record.pane_id, until=until, timeout_ms=remaining)
    except HerdrError as exc:
        if exc.code == "timeout":
            return _agent(actx, record)
        if exc.code in _NOT_FOUND:
            return None
        raise


def _reread(actx: AgentToolsContext, record: TaskRecord) -> TaskRecord:
    with contextlib.suppress(TaskNotFound):
        return actx.store.get(record.task_id)
    return record


def harvest(
    actx: AgentToolsContext,
    record: TaskRecord,
    *,
    tool: str,
    wait: bool = True,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    lines: int = DEFAULT_LINES,
    started: float | None = None,
    warnings: list[str] | None = None,
    info: AgentInfo | None = None,
    timed_out: bool = False,
) -> dict[str, Any]:
    """The AgentResult of ``record`` now (waiting first when ``wait``); updates the record.

    ``completed`` needs evidence that the task prompt was delivered and answered
    (:mod:`.completion`); with ``wait`` a verdict that may still change is waited on, up to
    ``timeout_ms``. ``info``: the agent as the caller just saw it; ``timed_out``: the
    caller's own wait already ran out (no further waiting).
    """
    bind_task(record.task_id)
    actx.select_machine(record.machine)  # a task lives on the machine it was spawned on
    began = time.monotonic() if started is None else started
    notes = list(warnings or [])
    evidence: list[contract.Evidence] = []
    status: contract.ResultStatus
    error: contract.ResultError | None = None
    final: str | None = None
    question: str | None = None
    record = _reread(actx, record)
    session = record.session_path
    root = actx.config.artifact_dir
    files = task_files(actx.config, record.machine)  # where its files are (maybe over SSH)
    deadline = Deadline(timeout_ms / 1000 if wait and not timed_out else 0)
    verdict: completion.Verdict | None = None

    try:
        if info is None:
            info = _look(actx, record)
        while True:
            session = completion.session_path_of(info) or session
            verdict = None
            if completion.phase(record) in ("pending", "failed"):
                verdict = completion.before_delivery(record, info, session, root, files=files)
            if verdict is None and info is not None and info.agent_status != "blocked":
                verdict = completion.judge(record, info, session, root, files=files)
            if verdict is not None and (verdict.conclusive or deadline.expired()):
                break
            if verdict is None or deadline.expired():
                break  # blocked, or no agent: reported below
            info = _await(actx, record, info, deadline)
            record = _reread(actx, record)
    except (HerdrError, TransportError) as exc:
        return _herdr_failure(actx, record, tool, exc, began, notes)

    if verdict is not None:
        status, error, final = verdict.status, verdict.error, verdict.final
        evidence.extend(verdict.evidence)
        notes.extend(verdict.notes)
        if info is not None:
            evidence.insert(0, contract.Evidence("herdr", f"agent status {info.agent_status}"))
        if status == "running" and timed_out and info is not None:
            notes.append(f"still {info.agent_status} after waiting {timeout_ms} ms")
        elif status == "running" and wait and not verdict.conclusive:
            notes.append(f"no result after waiting {timeout_ms} ms")
        if verdict.pane_tail and status in ("completed", "running") and record.pane_id:
            final = pane_tail(actx, record.pane_id, lines, message=True)
            if final is not None:
                evidence.append(
                    contract.Evidence("pane", f"last message in {lines} lines of the pane")
                )
        if status == "completed":
            # A turn that ended reporting BLOCKED (its final message or the inbox) asks a
            # question; Herdr shows such an agent done, not blocked.
            asked = questions.protocol_question(
                record,
                final,
                actx.config.artifact_dir,
                final_source="pane" if verdict.pane_tail else "session",
                files=files,
            )
            if asked is not None:
                status, question, error = "blocked", asked.text, None
                evidence.append(contract.Evidence(asked.source, asked.detail, path=asked.path))
    elif info is not None:
        # blocked: the agent waits for a human (the orchestrator never answers it)
        evidence.append(contract.Evidence("herdr", f"agent status {info.agent_status}"))
        status = "blocked"
        assert record.pane_id is not None
        question = questions.screen_question(actx.client, record.pane_id)
        evidence.append(contract.Evidence("pane", "the agent's question on screen"))
    else:
        assert record.pane_id is not None
        present = _pane_exists(actx, record.pane_id)
        if present is False:
            status = "gone"
            error = error_of("PANE_GONE", f"pane {record.pane_id} no longer exists")
            evidence.append(contract.Evidence("herdr", f"pane {record.pane_id} is closed"))
        else:
            status = "failed"
            error = error_of(
                "AGENT_EXITED",
                f"the {record.kind} agent is no longer running in pane {record.pane_id}",
            )
            evidence.append(contract.Evidence("herdr", "no agent in the task's pane"))
            final = pane_tail(actx, record.pane_id, lines)
            if final is not None:
                evidence.append(contract.Evidence("pane", f"last {lines} lines of the pane"))

    artifacts = artifacts_of(record, actx.config.artifact_dir)
    result_text: str | None = None
    try:  # the child's file: no link followed, no FIFO opened, at most RESULT_MD_MAX_BYTES
        report = files.read_bounded(str(artifacts.result_md), RESULT_MD_MAX_BYTES)
    except FileNotFoundError:
        pass
    except OSError as exc:
        notes.append(f"result.md not read: {exc.strerror or exc}")
    else:
        result_text = report.data.decode("utf-8", errors="replace")
        size = (
            f" (the first {RESULT_MD_MAX_BYTES} of {report.size} bytes)" if report.truncated else ""
        )
        evidence.append(
            contract.Evidence(
                "result.md", f"{len(result_text)} characters{size}", path=artifacts.result_md
            )
        )
    delivered = completion.phase(record) == "delivered"
    diff, diff_note = (None, None)
    if record.pane_id is not None and delivered:
        diff, diff_note = task_diff(record, files)
    if diff_note:
        notes.append(diff_note)
    if diff is not None:
        evidence.append(
            contract.Evidence("git", f"{len(diff.files)} file(s) changed against {diff.base}")
        )
        if isinstance(files, SshFiles):
            evidence.append(_keep_patch(actx.config, record, diff, notes))

    logger.info(
        "verdict %s%s (%d evidence items)",
        status,
        f" ({error.code})" if error else "",
        len(evidence),
    )
    record = _settle_record(actx, record, status, session, error)
    result = contract.AgentResult.for_record(
        tool,
        record,
        status,
        artifact_root=actx.config.artifact_dir,
        # over SSH: result.md exists when it was just read there (no second SSH look)
        artifacts=None
        if isinstance(files, LocalFiles)
        else contract.Artifacts(
            artifact_dir=str(record.artifact_path(actx.config.artifact_dir)),
            session_file=record.session_path,
            worktree=record.worktree_path,
            result_md_exists=result_text is not None,
        ),
        final_message=final,
        result_text=result_text,
        question=question,
        diff=diff,
        evidence=evidence,
        error=error,
        warnings=notes,
        elapsed_ms=contract.elapsed_ms(began),
    )
    return to_dict(actx, result, secrets=record.agent_args)


#: The most of a child's ``result.md`` read into a result (the rest stays in the file).
RESULT_MD_MAX_BYTES = 1 << 20


def redact_args(value: Any, agent_args: Sequence[str]) -> Any:
    """``value`` (a string, or a result's lists and objects of them) with the task's native
    agent args redacted by the low-level tools' rule
    (:func:`orchestrator.core.result.redact_text`): a pane tail shows the command line the
    agent was started with (``pi --api-key sk-…``), and it must not leave in a result, whether
    as ``finalMessage``, ``question``, an error message quoting the pane or a warning."""
    if not secret_parts(agent_args):
        return value
    return _redact_tree(value, agent_args)


#: The texts of a result that may quote the agent's screen or output (ids, paths, the
#: model and the diff are left as they are: structure, not screen text).
_REDACTED_KEYS = (
    "header",
    "finalMessage",
    "resultText",
    "question",
    "error",
    "evidence",
    "warnings",
)


def _redact_tree(value: Any, secrets: Sequence[str]) -> Any:
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, list):
        return [_redact_tree(item, secrets) for item in value]
    if isinstance(value, dict):
        return {key: _redact_tree(item, secrets) for key, item in value.items()}
    return value


def to_dict(
    actx: AgentToolsContext, result: contract.AgentResult, *, secrets: Sequence[str] = ()
) -> dict[str, Any]:
    """The result with the configured truncation limits; ``secrets`` (the task's native
    agent args) are redacted from every text in it (:func:`redact_args`)."""
    value = result.to_dict(
        max_result_chars=actx.config.max_result_chars, max_diff_bytes=actx.config.max_diff_bytes
    )
    for key in _REDACTED_KEYS:
        if value.get(key) is not None:
            value[key] = redact_args(value[key], secrets)
    task = value.get("task")
    if isinstance(task, dict) and task.get("error") is not None:
        value["task"] = {**task, "error": redact_args(task["error"], secrets)}
    if value.get("machine") == LOCAL_MACHINE:
        value["machine"] = actx.machine  # an observation: the machine the call looked at
    return value


def _settle_record(
    actx: AgentToolsContext,
    record: TaskRecord,
    status: str,
    session: str | None,
    error: contract.ResultError | None,
) -> TaskRecord:
    """Write what the harvest found into the record (never over a newer state: see
    :func:`.completion.write_status`); free the slot of a settled task."""
    record = completion.write_status(actx.store, record, status, error, session)
    if record.status not in ACTIVE_STATUSES:
        with contextlib.suppress(OSError):
            actx.slots.release_task(record.task_id)
    return record


def _herdr_failure(
    actx: AgentToolsContext,
    record: TaskRecord,
    tool: str,
    exc: BaseException,
    began: float,
    notes: list[str],
) -> dict[str, Any]:
    """Herdr could not be asked: report it without changing the record."""
    message = getattr(exc, "message", None) or str(exc)
    logger.warning("Herdr could not be asked about the task (%s)", _code(exc))
    result = contract.AgentResult.for_record(
        tool,
        record,
        "failed",
        artifact_root=actx.config.artifact_dir,
        next_action="retry",
        evidence=[contract.Evidence("record", f"record status {record.status}")],
        error=error_of("HERDR_ERROR", str(message), herdr=_code(exc)),
        warnings=notes,
        elapsed_ms=contract.elapsed_ms(began),
    )
    return to_dict(actx, result)


# -- observations ----------------------------------------------------------------------------


def observe(actx: AgentToolsContext, target: str, *, tool: str, lines: int) -> dict[str, Any]:
    """An observation of an agent we did not spawn, or a TASK_NOT_FOUND failure."""
    began = time.monotonic()
    try:
        info = actx.client.agent_get(target)
    except HerdrError as exc:
        message = (
            f"{target!r} is neither a task of this orchestrator nor a Herdr agent "
            f"({exc.code}: {exc.message})"
        )
        code = "TASK_NOT_FOUND"
        hint = machine_hint(actx.machine, exc.message)
        if hint is not None:
            code, message = "MACHINE_UNAVAILABLE", f"{exc.message}; {hint}"
        return to_dict(
            actx,
            contract.AgentResult.for_agent(
                tool,
                None,
                "failed",
                next_action="retry",
                error=error_of(code, message, field="target", herdr=exc.code),
                elapsed_ms=contract.elapsed_ms(began),
            ),
        )
    evidence = [contract.Evidence("herdr", f"agent status {info.agent_status} (not ours)")]
    final: str | None = None
    session = completion.session_path_of(info)
    # pi's session where the agent runs: this host, a shared mount, or over SSH (a machine
    # without file access: the pane's tail only)
    if info.agent == "pi" and session and files_reachable(actx.config, actx.machine):
        files = task_files(actx.config, actx.machine)
        # a machine that cannot be reached reads as no message (the pane's tail is used)
        last = transcript.last_assistant_message(session, files=files)
        if last is not None:
            final = last.text
            evidence.append(contract.Evidence("session", "last assistant message", path=session))
    if final is None:
        final = pane_tail(actx, info.pane_id, lines, message=True)
        if final is not None:
            evidence.append(contract.Evidence("pane", f"last {lines} lines of the pane"))
    result = contract.AgentResult.for_agent(
        tool,
        info,
        "idle",
        observation=True,
        final_message=final,
        evidence=evidence,
        warnings=[
            f"not a task of this orchestrator: observed only (Herdr status {info.agent_status})"
        ],
        elapsed_ms=contract.elapsed_ms(began),
    )
    return to_dict(actx, result)


# -- the tool --------------------------------------------------------------------------------


def refusal(tool: str, code: str, message: str, field: str | None = None) -> dict[str, Any]:
    """A refused request (no task touched)."""
    return contract.refusal(tool, contract.ResultError(code, message, field))


def handle_get_result(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """``herdr_get_agent_result``: harvest a task (waiting by default), or observe an agent."""
    from orchestrator.core.config import GateError, check_machine

    actx = agent_context(ctx)
    began = time.monotonic()
    target = str(args["target"])
    given = args.get("machine")
    try:
        machine = check_machine(actx.config, given)
    except ConfigError as exc:
        return refusal(TOOL, exc.code, str(exc), exc.key)
    except GateError as exc:
        return refusal(TOOL, exc.code, str(exc), exc.field or None)
    wait = bool(args.get("wait", True))
    timeout_ms = int(args.get("timeout_ms", DEFAULT_TIMEOUT_MS))
    lines = int(args.get("lines", DEFAULT_LINES))
    try:
        record = actx.store.find(target, machine if given else None)
    except UnreadableRecord as exc:
        return refusal(TOOL, exc.code, str(exc), "target")
    except TaskNotFound:
        logger.debug("not one of our tasks: an observation")
        actx.select_machine(machine)
        return observe(actx, target, tool=TOOL, lines=lines)
    return harvest(
        actx, record, tool=TOOL, wait=wait, timeout_ms=timeout_ms, lines=lines, started=began
    )


__all__ = [
    "GET_RESULT_SCHEMA",
    "TOOL",
    "artifacts_of",
    "handle_get_result",
    "harvest",
    "observe",
    "redact_args",
    "task_diff",
]
