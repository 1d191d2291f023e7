"""Agent lifecycle reports: ``pane.report_agent``, ``pane.report_agent_session``,
``pane.release_agent`` and ``pane.clear_agent_authority`` (reference §5.3/§5.4, §14, §17.4).

Handlers check the pane and the label like Herdr (``pane_not_found`` first, then
``invalid_agent``), validate the 0.9.2 ``resume_argv`` (``invalid_resume_argv``, nothing
applied), refuse a resume command from a source that does not hold the pane
(``resume_not_accepted``, nothing applied), then hand the report to the pure engine in
:mod:`herdr_sim.model.agents` through the runtime's agent service (``rt.agents.apply``),
which emits the events. Ignored reports (stale ``seq``, wrong source class) still answer
``ok``, as in Herdr.
"""

from __future__ import annotations

import copy
from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Enum, F, ListOf, Nullable, Obj, Str

from ..model import agents
from ..model.session import PaneRef
from .specs import OPT_STR, OPT_U64, REQ_STR

INVALID_RESUME_ARGV = "invalid_resume_argv"
RESUME_NOT_ACCEPTED = "resume_not_accepted"

_STATE = F(Enum(values=("idle", "working", "blocked", "unknown")), required=True)
_RESUME = F(Nullable(ListOf(Str())))
_SESSION = {"agent_session_id": OPT_STR, "agent_session_path": OPT_STR}
_REPORTER = {"pane_id": REQ_STR, "source": REQ_STR, "agent": REQ_STR, "seq": OPT_U64}


def _label(text: str) -> str:
    label = agents.normalize_label(text)
    if label is None:
        raise HerdrError(errors.INVALID_AGENT, "agent label must not be empty")
    return label


def _check_resume(argv: list[str] | None, source: str) -> None:
    """``invalid_resume_argv`` for a malformed command; ``herdr:`` sources use built-in plans."""
    if argv is None:
        return
    problem = agents.resume_argv_error(argv)
    if problem is not None:
        raise HerdrError(INVALID_RESUME_ARGV, problem)
    if source.startswith("herdr:"):
        raise _not_accepted(source)


def _not_accepted(source: str) -> HerdrError:
    return HerdrError(
        RESUME_NOT_ACCEPTED,
        f"source {source} does not hold this pane; report its state before its resume command",
    )


def _stale(rec: agents.AgentRecord, source: str, seq: int | None) -> bool:
    """The report would be dropped by the seq rule alone."""
    if seq is None:
        return source in rec.seqs
    last = rec.seqs.get(source)
    return last is not None and seq <= last


def _resolve(rt: Runtime, p: dict[str, Any]) -> tuple[PaneRef, str]:
    ref = rt.pane(p["pane_id"])
    label = _label(p["agent"])
    rt.agents.sync_managed(ref)
    return ref, label


@method(
    "pane.report_agent",
    Obj(
        fields={
            **_REPORTER,
            "state": _STATE,
            "message": OPT_STR,
            **_SESSION,
            "resume_argv": _RESUME,
        }
    ),
    result="ok",
)
async def report_agent(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """A lifecycle state report; may carry a session reference and a resume command.

    What the pane's program drew before it reported is read first, so whoever sees the new
    state also sees that screen (an agent draws its answer, then reports ``idle``)."""
    ref, label = _resolve(rt, p)
    process = rt.processes.get(ref.pane.key)
    if process is not None:
        process.pty.read_pending()
    source, seq, argv = p["source"], p["seq"], p["resume_argv"]
    _check_resume(argv, source)
    rec = ref.pane.agent_rec
    ref_ = agents.session_ref(source, label, p["agent_session_id"], p["agent_session_path"])

    def apply(target: agents.AgentRecord) -> bool:
        return agents.report_agent(
            target,
            source=source,
            agent=label,
            state=p["state"],
            message=p["message"],
            ref=ref_,
            seq=seq,
        )

    if argv is not None:
        if _stale(rec, source, seq):
            return {"type": "ok"}
        trial = copy.deepcopy(rec)
        apply(trial)
        if not agents.holds(trial, source):
            raise _not_accepted(source)

    def report(target: agents.AgentRecord) -> bool:
        apply(target)
        if argv is not None:
            target.resume_argv, target.resume_source = list(argv), source
        if agents.holds(target, source) and agents.classify(source, label) == "custom":
            job = rt.agent_job(ref)
            if job is not None:
                target.exit_job = job
        return False

    rt.agents.apply(ref, report)
    return {"type": "ok"}


@method(
    "pane.report_agent_session",
    Obj(
        fields={
            **_REPORTER,
            **_SESSION,
            "session_start_source": OPT_STR,
            "resume_argv": _RESUME,
        }
    ),
    result="ok",
)
async def report_agent_session(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """A session-only report: the session reference (official pairs) and resume command."""
    ref, label = _resolve(rt, p)
    source, seq, argv = p["source"], p["seq"], p["resume_argv"]
    _check_resume(argv, source)
    rec = ref.pane.agent_rec
    if argv is not None and not agents.holds(rec, source):
        raise _not_accepted(source)
    start = p["session_start_source"]
    start = start.strip().lower() if start is not None else None
    if start not in agents.START_SOURCES:
        start = None
    ref_ = agents.session_ref(source, label, p["agent_session_id"], p["agent_session_path"])
    stale = _stale(rec, source, seq)

    def report(target: agents.AgentRecord) -> bool:
        agents.report_session(target, source=source, ref=ref_, start=start, seq=seq)
        agents.replay_parked(target)  # a report parked for want of this anchor may apply now
        if argv is not None and not stale:
            target.resume_argv, target.resume_source = list(argv), source
        return False

    rt.agents.apply(ref, report)
    return {"type": "ok"}


@method("pane.release_agent", Obj(fields=_REPORTER), result="ok")
async def release_agent(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """The agent leaves the pane: its name, state and resume command go at once."""
    ref, label = _resolve(rt, p)

    def release(rec: agents.AgentRecord) -> bool:
        return bool(agents.release(rec, source=p["source"], agent=label, seq=p["seq"]))

    rt.agents.apply(ref, release)
    return {"type": "ok"}


@method(
    "pane.clear_agent_authority",
    Obj(fields={"pane_id": REQ_STR, "source": OPT_STR, "seq": OPT_U64}),
    result="ok",
)
async def clear_agent_authority(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Drop the hook authority; the state falls back to screen detection (socket only)."""
    ref = rt.pane(p["pane_id"])

    def clear(rec: agents.AgentRecord) -> bool:
        agents.clear_authority(rec, source=p["source"], seq=p["seq"])
        return False

    rt.agents.apply(ref, clear)
    return {"type": "ok"}
