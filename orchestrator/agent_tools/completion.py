"""When a task counts as done: the evidence rule behind ``completed`` (result-contract.md).

Why this module exists: Herdr's ``idle``/``done`` says only that the agent in a pane is not
working *now*. It does not say that the agent ever got our task prompt (a spawn killed
between ``agent start`` and ``agent prompt`` leaves an idle agent that never saw it), that the
turn it finished was ours (an agent restarted by Herdr's session restore is idle too), or
that the turn is over (under load a pi was seen ``working → done → working → done``). So a
task is ``completed`` only with evidence that *our* prompt was delivered and answered:

* **Delivery** — :class:`Delivery`, in the record: written just before ``agent prompt``
  (``sendingAt``, the agent's terminal and Herdr's ``state_change_seq``) and again once
  Herdr accepted the prompt (``sentAt`` and the status Herdr saw after it). Until then the
  record stays ``starting`` and belongs to the spawning process: while that process lives
  the task reads ``running``; once it is dead the task reads ``failed``
  ``SPAWN_INTERRUPTED`` — unless the prompt is seen to have landed after all.
* **Answer, pi** — the session file holds a user message with our task file's path (the
  kickoff line) and, after the newest user message since then, a final assistant message
  (``stopReason`` other than ``toolUse``): :func:`~.transcript.answer_to`.
* **Answer, other kinds** (claude, codex, opencode, …: no transcript we can read) — Herdr saw
  the agent settle after our prompt: the status it reported right after the prompt was
  already settled, or its ``state_change_seq`` moved on since then; or the child wrote
  ``result.md``. Weaker than pi's: a screen-detected agent that pauses on an idle-looking
  screen can read as finished. The result's evidence says which rule held.
* **Same agent** — the pane's terminal id is still the one we prompted. A restored session
  gives every pane a new terminal: without an answer the turn is lost (``AGENT_RESTARTED``).

:func:`judge` applies the rule to one look at the agent; a verdict that is not ``conclusive``
may change by waiting (harvest waits for it within its timeout). :func:`holds_slot` is the
same rule for the concurrency cap: a task holds its slot only while its agent may still work.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.agent_tools import contract, transcript
from orchestrator.agent_tools.envelope import TASK_FILE
from orchestrator.agent_tools.records import TaskNotFound, TaskRecord, now_iso
from orchestrator.agent_tools.remote_files import LocalFiles, RemoteFiles, RemoteUnavailable

if TYPE_CHECKING:
    from orchestrator.agent_tools.records import TaskStore
    from orchestrator.client.sync import HerdrClient
    from orchestrator.client.types import AgentInfo

#: Herdr statuses after a turn (``blocked`` waits for a human and is reported as such).
SETTLED = ("idle", "done")
#: A prompt whose sender died may still land this long after it was sent (Herdr types it,
#: presses Enter 300 ms later and confirms within 5 s): until then it reads ``running``.
SUBMIT_GRACE_MS = 10_000
#: pi settled but its session has no answer to our prompt: the turn may restart (a transient
#: ``done``). After this long without a change to the session file, the turn is over without
#: an answer (``NO_ANSWER``).
ANSWER_GRACE_MS = 15_000
#: The record's ``extra`` key holding how many user messages a pi task's session had when
#: the latest message was typed (:func:`latest_turn`).
TURN_USERS = "turnUsers"
#: How often the concurrency cap re-checks a detached task's agent with Herdr.
LIVENESS_CHECK_S = 0.5


# -- delivery --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Delivery:
    """How the task prompt reached the agent (the record's ``delivery``).

    ``sending_at`` is written just before ``agent prompt`` with ``seq_before`` (Herdr's
    ``state_change_seq``); ``sent_at`` once Herdr accepted the prompt, with the status and
    seq it reported then (``status_after``/``seq_after``). ``held``: the agent asked a
    question while starting, so the prompt was kept back. ``terminal_id`` is the record's own
    (:attr:`TaskRecord.terminal_id`, written with ``sending_at``): the terminal the prompt went
    to is the one the task owns, one fact kept in one place.
    """

    sending_at: str | None = None
    sent_at: str | None = None
    terminal_id: str | None = None
    seq_before: int | None = None
    seq_after: int | None = None
    status_after: str | None = None
    held: bool = False

    @classmethod
    def of(cls, record: TaskRecord) -> Delivery:
        """The record's delivery (all unset when the prompt was never sent)."""
        data = record.delivery or {}

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) and value else None

        def number(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        return cls(
            sending_at=text("sendingAt"),
            sent_at=text("sentAt"),
            terminal_id=record.terminal_id or None,
            seq_before=number("seqBefore"),
            seq_after=number("seqAfter"),
            status_after=text("statusAfter"),
            held=data.get("held") is True,
        )

    def to_json(self) -> dict[str, Any]:
        """The record's ``delivery`` value (the terminal is the record's ``terminal_id``)."""
        return {
            "sendingAt": self.sending_at,
            "sentAt": self.sent_at,
            "seqBefore": self.seq_before,
            "seqAfter": self.seq_after,
            "statusAfter": self.status_after,
            "held": self.held,
        }


def sending(info: AgentInfo) -> dict[str, Any]:
    """The record changes written just before the prompt goes to ``info``'s agent: its
    ``delivery`` and the ``terminal_id`` the task owns."""
    return {
        "delivery": Delivery(sending_at=now_iso(), seq_before=info.state_change_seq).to_json(),
        "terminal_id": info.terminal_id or None,
    }


def sent(record: TaskRecord, after: AgentInfo | None) -> dict[str, Any]:
    """The ``delivery`` once Herdr accepted the prompt (``after``: what it reported then)."""
    before = Delivery.of(record)
    return Delivery(
        sending_at=before.sending_at,
        sent_at=now_iso(),
        seq_before=before.seq_before,
        seq_after=after.state_change_seq if after is not None else None,
        status_after=after.agent_status if after is not None else None,
    ).to_json()


def held() -> dict[str, Any]:
    """The ``delivery`` of a task whose prompt was kept back (a question at start)."""
    return Delivery(held=True).to_json()


def session_path_of(info: AgentInfo | None) -> str | None:
    """The session file Herdr reports for the agent (``agent_session`` of kind ``path``)."""
    ref = info.raw.get("agent_session") if info is not None else None
    if isinstance(ref, Mapping) and ref.get("kind") == "path" and isinstance(ref.get("value"), str):
        return str(ref["value"])
    return None


def phase(record: TaskRecord) -> str:
    """Where the prompt is: ``pending`` (the spawn has not delivered it), ``failed`` (the
    spawn failed before delivering it), ``held`` (kept back by a question at start) or
    ``delivered`` (also a record written before delivery was tracked, or one a harvest found
    the prompt of after its spawn died)."""
    delivery = Delivery.of(record)
    if delivery.sent_at:
        return "delivered"
    if delivery.held:
        return "held"
    if record.status == "failed" and record.error:
        return "failed"
    if record.status == "starting" or record.pane_id is None:
        return "pending"
    return "delivered"


def task_file(record: TaskRecord, artifact_root: Path) -> str:
    """The task file path the kickoff prompt names: how our prompt is found in a session."""
    return str(record.artifact_path(artifact_root) / TASK_FILE)


def latest_turn(
    record: TaskRecord,
    session: str,
    artifact_root: Path,
    *,
    files: RemoteFiles | None = None,
) -> transcript.PromptAnswer | None:
    """What the session says of the task's latest prompt: the task prompt, or the message
    sent after it (:data:`TURN_USERS` marks where that message's turn begins). Until the
    message is in the session, its turn is not "prompted", whatever older answer is last."""
    users = record.extra.get(TURN_USERS)
    if isinstance(users, int) and not isinstance(users, bool):
        return transcript.answer_after(session, users, files=files)
    return transcript.answer_to(session, task_file(record, artifact_root), files=files)


def turn_answer(
    record: TaskRecord,
    session: str | None,
    artifact_root: Path,
    *,
    files: RemoteFiles | None = None,
) -> transcript.LastAssistant | None:
    """The final assistant message ending the task's latest turn — the one after the newest
    user message since our task prompt (:func:`.transcript.answer_to`) — or ``None``: no
    session, our prompt not in it, or that turn not over. An older answer (a turn before our
    prompt) is never the task's, whatever the session's last message is."""
    if not session:
        return None
    try:
        found = latest_turn(record, session, artifact_root, files=files)
    except OSError:  # not a regular file (never followed, never blocked on)
        return None
    return found.answer if found is not None else None


# -- the verdict -----------------------------------------------------------------------------


@dataclass
class Verdict:
    """What the evidence supports now; ``conclusive``: waiting cannot change it."""

    status: contract.ResultStatus
    conclusive: bool
    error: contract.ResultError | None = None
    final: str | None = None
    evidence: list[contract.Evidence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the final message is to be read from the pane (a kind without a readable session)
    pane_tail: bool = False


def _age_ms(stamp: str | None, now: float) -> float:
    """Milliseconds since an ISO stamp of :func:`now_iso` (infinite if unknown)."""
    if not stamp:
        return float("inf")
    try:
        then = datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return float("inf")
    return max(0.0, (now - then) * 1000)


def _error(code: str, message: str) -> contract.ResultError:
    return contract.ResultError(code, message)


def _restarted(record: TaskRecord, before: str) -> contract.ResultError:
    """``AGENT_RESTARTED``: the pane got a new terminal since the task prompt, ``before``
    the agent reported; the turn is lost."""
    return _error(
        "AGENT_RESTARTED",
        f"the agent in pane {record.pane_id} was restarted (a new terminal since the task "
        f"prompt, e.g. Herdr restored its session) {before}; the turn is lost: send the task "
        "again with herdr_message_agent or spawn it again",
    )


def before_delivery(
    record: TaskRecord,
    info: AgentInfo | None,
    session: str | None,
    artifact_root: Path,
    *,
    now: float | None = None,
    files: RemoteFiles | None = None,
) -> Verdict | None:
    """The verdict on a task whose prompt was not delivered (:func:`phase` ``pending`` or
    ``failed``); ``None`` when the prompt turns out to have landed (judge it as delivered).

    ``info``: the agent in the task's pane now, if any.
    """
    now = time.time() if now is None else now
    evidence = [contract.Evidence("record", f"record status {record.status}, prompt not sent")]
    if record.error and record.status == "failed":
        error = contract.ResultError.from_dict(
            record.error,
            code="AGENT_START_FAILED",
            message="the task failed before its prompt was sent",
        )
        return Verdict("failed", True, error, evidence=evidence)
    if record.owner_alive:
        step = "queued or creating its pane" if record.pane_id is None else "starting its agent"
        delivery = Delivery.of(record)
        if delivery.sending_at:
            step = "sending the task prompt"
        return Verdict(
            "running",
            False,
            evidence=evidence,
            notes=[f"the spawn (pid {record.owner_pid}) is still preparing the task: {step}"],
        )
    delivery = Delivery.of(record)
    if delivery.sending_at and record.pane_id is not None:
        if _landed(record, delivery, info, session, artifact_root, files):
            return None
        if _age_ms(delivery.sending_at, now) < SUBMIT_GRACE_MS:
            return Verdict(
                "running",
                False,
                evidence=evidence,
                notes=[
                    (
                        f"the spawn (pid {record.owner_pid}) died while sending the task "
                        "prompt; it may still land"
                    )
                ],
            )
    where = (
        f"; its {record.kind} agent in pane {record.pane_id} never got the task "
        "(close it with herdr_close_agent)"
        if record.pane_id is not None
        else ""
    )
    return Verdict(
        "failed",
        True,
        _error(
            "SPAWN_INTERRUPTED",
            f"prompt not delivered: the process that spawned this task (pid {record.owner_pid}) "
            f"ended before the task prompt was sent{where}; spawn it again",
        ),
        evidence=evidence,
    )


def _landed(
    record: TaskRecord,
    delivery: Delivery,
    info: AgentInfo | None,
    session: str | None,
    artifact_root: Path,
    files: RemoteFiles | None = None,
) -> bool:
    """Whether a prompt whose sender died reached the agent after all."""
    if record.kind == "pi" and session:
        found = transcript.answer_to(session, task_file(record, artifact_root), files=files)
        return found is not None and found.prompted
    if info is None or delivery.seq_before is None or not info.state_change_seq:
        return False
    same = not delivery.terminal_id or info.terminal_id == delivery.terminal_id
    return same and info.state_change_seq > delivery.seq_before


def prompt_landed(
    record: TaskRecord,
    info: AgentInfo | None,
    session: str | None,
    artifact_root: Path,
    *,
    files: RemoteFiles | None = None,
) -> bool:
    """Whether the task prompt reached the agent, by the evidence alone (pi: the kickoff line
    in its session; else Herdr's state counter moved on in the same terminal): for a prompt
    whose sender lost its connection, which does not prove it was not applied."""
    return _landed(record, Delivery.of(record), info, session, artifact_root, files)


def judge(
    record: TaskRecord,
    info: AgentInfo,
    session: str | None,
    artifact_root: Path,
    *,
    now: float | None = None,
    files: RemoteFiles | None = None,
) -> Verdict:
    """The verdict on a delivered (or held) task whose agent Herdr reports as ``info``
    (not ``blocked``: a blocked agent is reported as such by the caller). ``files``: where
    the task's files are (this host by default, or its machine over SSH)."""
    fs = files or LocalFiles()
    now = time.time() if now is None else now
    delivery = Delivery.of(record)
    status = info.agent_status
    settled = status in SETTLED
    restarted = bool(
        delivery.terminal_id and info.terminal_id and info.terminal_id != delivery.terminal_id
    )
    if delivery.held:
        if not settled:
            return Verdict("running", False, notes=["the agent is still starting"])
        task = task_file(record, artifact_root)
        return Verdict(
            "failed",
            True,
            _error(
                "PROMPT_NOT_SENT",
                "the agent asked a question while starting and the task prompt was never sent; "
                f"the task is in {task} (send it with herdr_message_agent, or close the agent)",
            ),
        )
    try:
        if record.kind == "pi" and session:
            return _judge_pi(record, info, session, artifact_root, delivery, restarted, now, fs)
        return _judge_screen(record, info, artifact_root, delivery, restarted, fs)
    except RemoteUnavailable as exc:
        # the evidence is on a machine we cannot reach now: nothing is concluded from that
        return Verdict("running", False, notes=[f"the task's files could not be read: {exc}"])


def _judge_pi(
    record: TaskRecord,
    info: AgentInfo,
    session: str,
    artifact_root: Path,
    delivery: Delivery,
    restarted: bool,
    now: float,
    files: RemoteFiles,
) -> Verdict:
    found = latest_turn(record, session, artifact_root, files=files)
    answer = found.answer if found is not None else None
    settled = info.agent_status in SETTLED
    if answer is not None:
        evidence = [
            contract.Evidence(
                "session",
                f"answer to the task prompt: last assistant message, stopReason "
                f"{answer.stop_reason}",
                path=session,
                at=answer.timestamp,
            )
        ]
        if not settled:
            return Verdict("running", False, final=answer.text, evidence=evidence)
        if answer.failed:
            error = _error("AGENT_ERROR", answer.error or "the agent's turn ended in an error")
            return Verdict("failed", True, error, answer.text, evidence)
        if answer.stop_reason == "aborted":
            error = _error("INTERRUPTED", answer.error or "the turn was aborted")
            return Verdict("failed", True, error, answer.text, evidence)
        return Verdict("completed", True, None, answer.text, evidence)
    prompted = found is not None and found.prompted
    where = "the task prompt is in the session" if prompted else "the task prompt is not in it"
    evidence = [contract.Evidence("session", f"no answer yet ({where})", path=session)]
    if restarted:
        return Verdict(
            "failed",
            True,
            _restarted(record, "before it answered"),
            evidence=evidence,
        )
    if not settled:
        return Verdict("running", False, evidence=evidence)
    quiet = min(
        _age_ms(delivery.sent_at or delivery.sending_at, now), _file_age_ms(session, now, files)
    )
    if quiet < ANSWER_GRACE_MS:
        return Verdict(
            "running",
            False,
            evidence=evidence,
            notes=[
                (
                    f"Herdr reports the agent {info.agent_status}, but its session has no "
                    "answer to the task prompt yet"
                )
            ],
        )
    return Verdict(
        "failed",
        True,
        _error(
            "NO_ANSWER",
            f"the agent is {info.agent_status} but never answered the task prompt: no final "
            f"assistant message after it in {session} ({where})",
        ),
        evidence=evidence,
    )


def _file_age_ms(path: str, now: float, files: RemoteFiles) -> float:
    """How long ago ``path`` was written; over SSH unknown (``inf``: the send time alone
    then decides how long a settled agent without an answer is given)."""
    if not isinstance(files, LocalFiles):
        return float("inf")
    try:
        return max(0.0, (now - Path(path).stat().st_mtime) * 1000)
    except OSError:
        return float("inf")


def _judge_screen(
    record: TaskRecord,
    info: AgentInfo,
    artifact_root: Path,
    delivery: Delivery,
    restarted: bool,
    files: RemoteFiles,
) -> Verdict:
    """Kinds without a session we read: Herdr's transition after the prompt, or result.md."""
    result_md = record.artifact_path(artifact_root) / "result.md"
    wrote = files.is_regular_file(str(result_md))  # a link is not the child's report
    settled = info.agent_status in SETTLED
    if restarted and not wrote:
        return Verdict(
            "failed",
            True,
            _restarted(record, "and wrote no result.md"),
        )
    if not settled:
        return Verdict("running", False, pane_tail=True)
    notes: list[str] = []
    seq = info.state_change_seq
    if delivery.status_after in SETTLED:
        rule = f"Herdr saw the agent {delivery.status_after} right after the task prompt"
    elif delivery.seq_after is not None and seq and seq > delivery.seq_after:
        rule = (
            f"Herdr saw the agent settle after the task prompt (state change {seq} > "
            f"{delivery.seq_after})"
        )
    elif (
        delivery.seq_after is None
        and delivery.seq_before is not None
        and seq > (delivery.seq_before)
    ):
        rule = (
            f"Herdr saw the agent change state since the task prompt "
            f"({seq} > {delivery.seq_before})"
        )
    elif wrote:
        rule = "the agent wrote result.md"
    elif not seq or (delivery.seq_before is None and delivery.seq_after is None):
        rule = f"Herdr reports the agent {info.agent_status} (no state sequence to compare)"
        notes.append(
            "weak evidence: Herdr's status only (no state change sequence since the prompt)"
        )
    else:
        return Verdict(
            "running",
            False,
            pane_tail=True,
            notes=[f"Herdr reports the agent {info.agent_status} but saw no turn since the prompt"],
        )
    evidence = [contract.Evidence("herdr", rule)]
    return Verdict("completed", True, evidence=evidence, notes=notes, pane_tail=True)


# -- the record and the concurrency cap ------------------------------------------------------


def write_status(
    store: TaskStore,
    read: TaskRecord,
    status: str,
    error: contract.ResultError | None,
    session: str | None = None,
) -> TaskRecord:
    """Write what a harvest found into the record — unless the record changed since it was
    read (``read.updated_at``): a stale look never writes over a newer state, e.g. a
    duplicate ``client_task_id`` over the spawn still in flight. Returns the record now."""

    def change(current: TaskRecord) -> Mapping[str, Any]:
        if current.updated_at != read.updated_at:
            return {}
        if current.status == "starting" and status == "running":
            return {}  # a spawn in flight owns its record: only a conclusive finding replaces it
        changes: dict[str, Any] = {}
        if session and session != current.session_path:
            changes["session_path"] = session
        keep = current.status == "closed" or (
            current.status == "interrupted" and status != "running"
        )
        if not keep and status != current.status:
            changes["status"] = status
            if error is not None:
                changes["error"] = error.to_dict()
            elif status in ("completed", "running", "blocked"):
                changes["error"] = None
        return changes

    try:
        return store.modify(read.task_id, change)
    except TaskNotFound:
        return read


def holds_slot(
    store: TaskStore,
    client: Callable[[], HerdrClient],
    artifact_root: Path,
    liveness: dict[str, tuple[float, bool]],
    task_id: str,
    files: Callable[[str], RemoteFiles] | None = None,
) -> bool:
    """Whether ``task_id`` still holds a concurrency slot: its record is active and its
    agent may still work (Herdr, built by ``client`` when needed, is asked at most every
    :data:`LIVENESS_CHECK_S` per task; ``liveness`` remembers the last look).

    A task whose pane or agent is gone, or whose turn ended by the evidence rule, frees its
    slot at once (and its record says so), harvested or not; when Herdr cannot be asked, the
    task keeps its slot. ``files``: the file access for a task's machine (this host by
    default); a machine that cannot be reached keeps the slot too.
    """
    from orchestrator.client.errors import ClientError, HerdrError

    try:
        record = store.get(task_id)
    except TaskNotFound:
        return False
    if not record.active:
        return False
    if record.status == "starting" or record.pane_id is None:
        return True  # its spawn is alive and holds the slot's lock itself
    cache = liveness
    seen = cache.get(task_id)
    clock = time.monotonic()
    if seen is not None and clock - seen[0] < LIVENESS_CHECK_S:
        return seen[1]
    status: str | None = None
    error: contract.ResultError | None = None
    session = record.session_path
    try:
        herdr = client()
        try:
            info: AgentInfo | None = herdr.agent_get(record.pane_id)
        except HerdrError as exc:
            if exc.code not in ("agent_not_found", "agent_pane_not_found", "agent_not_running"):
                raise
            info = None
        if info is not None and record.name and info.name not in (None, record.name):
            info = None  # another agent took the pane over
        if info is None:
            try:
                herdr.pane_get(record.pane_id)
                status = "failed"
                error = _error("AGENT_EXITED", f"no {record.kind} agent in pane {record.pane_id}")
            except HerdrError as exc:
                if exc.code != "pane_not_found":
                    raise
                status = "gone"
                error = _error("PANE_GONE", f"pane {record.pane_id} no longer exists")
        elif info.agent_status in SETTLED:
            session = session_path_of(info) or session
            fs = files(record.machine) if files is not None else None
            verdict = judge(record, info, session, artifact_root, files=fs)
            if verdict.conclusive:
                status, error = verdict.status, verdict.error
    except (ClientError, RemoteUnavailable):
        status = None  # Herdr or the task's machine cannot be asked: keep the slot
    holds: bool = status is None
    cache[task_id] = (clock, holds)
    if not holds:
        assert status is not None
        with contextlib.suppress(OSError):
            write_status(store, record, status, error, session)
    return holds


__all__ = [
    "ANSWER_GRACE_MS",
    "SETTLED",
    "SUBMIT_GRACE_MS",
    "TURN_USERS",
    "Delivery",
    "Verdict",
    "before_delivery",
    "held",
    "holds_slot",
    "judge",
    "latest_turn",
    "phase",
    "sending",
    "sent",
    "session_path_of",
    "task_file",
    "turn_answer",
    "write_status",
]
