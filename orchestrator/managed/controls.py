"""The live controls (``agent_steer``, ``agent_interrupt``, ``agent_reply``) and ``agent_close``.

Why together: each revalidates under the lifecycle lock, immediately before it posts or
closes: the exact label among the owned active generations, fresh evidence, and the tool
among the projected ``available_tools``
(:meth:`orchestrator.managed.footing.ServiceFooting.checked`). A close covers the agent's
owned descendants child-first, after a preflight over all of them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.footing import ServiceFooting
from orchestrator.managed.launch import remove_mailbox
from orchestrator.managed.mailbox import Kind
from orchestrator.managed.projection import project
from orchestrator.managed.store import Generation
from orchestrator.managed.supervisor import close_pane

__all__ = ["close", "interrupt", "reply", "steer"]


def _control(
    footing: ServiceFooting,
    tool: str,
    kind: Kind,
    agent: str,
    message: str,
    files: Sequence[str] | None,
    *,
    action: str,
) -> dict[str, Any]:
    operation = action
    footing.supervisor.reconcile()
    with footing.store.locked():
        observation, _ = footing.checked(agent, tool, operation)
        generation = observation.generation
        body = footing.with_files(message, files, operation, Path(generation.cwd))
        mailbox = footing.supervisor.mailbox(generation)
        ask_id = None
        if kind is Kind.REPLY:
            assert observation.pending_ask is not None
            ask_id = observation.pending_ask.message_id
            body = f"Owner reply:\n{body}\n\nContinue the original assignment with this answer."
        elif kind is Kind.INTERRUPT:
            body = (
                f"Owner interrupt:\n{body}\n\nThe previous in-flight operation was "
                "deliberately aborted; the original assignment continues."
            )
        posted = mailbox.post(kind, body, assignment_id=generation.request_id, ask_id=ask_id)
    result: dict[str, Any] = {
        "ok": True,
        "action": action,
        "agent": generation.label,
        "presentation_agent_definition": generation.definition,
        "request_id": posted.message_id,
        "assignment_request_id": generation.request_id,
        "session_id": generation.pi_session_id,
    }
    first = {
        "steer": f"Steering queued for agent {generation.label}.\nPi delivers it after the "
        "current assistant turn and its tool calls reach a steering boundary; it does not "
        "preempt the current operation.",
        "interrupt": f"Interrupt accepted for agent {generation.label}.\nPi aborts the "
        "current operation and the same assignment continues with your message.",
        "reply": f"Reply agent {generation.label} ({generation.definition}).",
    }[action]
    lines = [
        first,
        f"Session: {generation.pi_session_id}",
        f"Request: {posted.message_id}",
        f"Assignment request: {generation.request_id}",
    ]
    if ask_id is not None:
        result["ask_id"] = ask_id
        lines.append(f"Ask: {ask_id}")
    result["text"] = "\n".join(lines)
    return result


def steer(
    footing: ServiceFooting, agent: str, message: str, files: Sequence[str] | None = None
) -> dict[str, Any]:
    return _control(footing, "agent_steer", Kind.STEER, agent, message, files, action="steer")


def interrupt(
    footing: ServiceFooting, agent: str, message: str, files: Sequence[str] | None = None
) -> dict[str, Any]:
    return _control(
        footing, "agent_interrupt", Kind.INTERRUPT, agent, message, files, action="interrupt"
    )


def reply(
    footing: ServiceFooting, agent: str, message: str, files: Sequence[str] | None = None
) -> dict[str, Any]:
    return _control(footing, "agent_reply", Kind.REPLY, agent, message, files, action="reply")


# -- agent_close --------------------------------------------------------------------


def _cascade(footing: ServiceFooting, root: Generation) -> list[Generation]:
    """``root``'s owned active descendants, child-first, then ``root``."""
    active = footing.active()
    order: list[Generation] = []
    seen: set[str] = set()

    def visit(parent: Generation) -> None:
        if parent.run_id in seen:
            raise ManagedAgentError(
                "target_ambiguous",
                "Cyclic agent ancestry; close refused",
                operation="close",
            )
        seen.add(parent.run_id)
        if parent.pi_session_id:
            for child in active:
                if child.owner_session_id == parent.pi_session_id:
                    visit(child)
        order.append(parent)

    visit(root)
    return order


def _finished(footing: ServiceFooting, label: str) -> Generation | None:
    """This owner's newest generation under ``label`` when none of them is active (it
    delivered, was closed or failed): what ``agent_close`` of it reports."""
    generations, _ = footing.store.scan()
    mine = [g for g in generations if g.label == label]
    if not mine or any(g.active for g in mine):
        return None
    own = [g for g in mine if g.owner_session_id == footing.controller_id]
    return max(own, key=lambda g: g.updated_at) if own else None


def _already_finished(generation: Generation, operation: str) -> ManagedAgentError:
    """``agent_close`` of an agent that no longer runs: refused with the truth (what
    became of it), not as a label never seen."""
    label = generation.label
    if generation.status == "delivered":
        what = "it delivered its result and was cleaned up (pane closed, mailbox removed)"
    elif generation.status == "closed":
        what = f"it was already closed ({generation.closed_reason or 'closed'})"
    else:
        what = "its launch failed and was rolled back"
    next_action = "Nothing to close."
    if generation.pi_session_file:
        next_action += (
            f" To go on with its work, agent_continue its session {generation.pi_session_file}."
        )
    return ManagedAgentError(
        "target_not_found",
        f"Agent {label} is not running: {what}",
        operation=operation,
        ids={"label": label},
        next_action=next_action,
        details={"status": generation.status},
    )


def close(footing: ServiceFooting, agent: str) -> dict[str, Any]:
    operation = "close"
    footing.supervisor.reconcile()
    with footing.store.locked():
        finished = _finished(footing, agent)
        if finished is not None:
            raise _already_finished(finished, operation)
        footing.checked(agent, "agent_close", operation)
        root = footing.resolve(agent, operation)
        members = _cascade(footing, root)
        # preflight over the whole cascade before closing anything
        for member in members:
            observation = footing.supervisor.observe(member)
            projection = project(member, observation.evidence, direct=True)
            if "agent_close" not in projection.available_tools:
                raise ManagedAgentError(
                    "target_ambiguous" if projection.state == "unknown" else "agent_busy",
                    f"Close preflight failed for {member.label}: {projection.state}"
                    + (f" ({projection.diagnostic})" if projection.diagnostic else ""),
                    operation=operation,
                    ids={"label": member.label},
                    next_action="Resolve that agent first (agent_list), then close again.",
                )
        closed: list[str] = []
        warnings: dict[str, str] = {}
        for member in members:
            problems = close_pane(footing.client, member.pane_id)
            if problems:
                raise ManagedAgentError(
                    "internal_failure",
                    problems[0],
                    operation=operation,
                    ids={"label": member.label},
                    details={"closed": closed},
                )
            try:
                remove_mailbox(Path(member.mailbox))
            except OSError as exc:
                warnings[member.label] = f"mailbox could not be removed: {exc}"
            footing.store.update(
                member,
                status="closed",
                closed_reason="closed by owner",
                cleanup_error=warnings.get(member.label),
            )
            closed.append(member.label)
    lines = [f"Close agent {root.label} ({root.definition})."]
    if len(closed) > 1:
        lines.append(f"Closed child-first: {', '.join(closed)}")
    result: dict[str, Any] = {
        "ok": True,
        "action": "close",
        "agent": root.label,
        "presentation_agent_definition": root.definition,
        "closed": closed,
        "text": "\n".join(lines),
    }
    if warnings:
        result["cleanup_errors"] = warnings
        result["text"] += "\nCleanup warnings: " + json.dumps(warnings)
    return result
