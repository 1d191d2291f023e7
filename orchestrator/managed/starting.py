"""``agent_delegate`` and ``agent_continue``: start a managed child generation.

Why the steps: a start records a ``starting`` generation under the store's lock (a free
label, the workspace, this process's launch mark, so the supervisor does not take it for an
interrupted launch) before anything runs in Herdr, then launches it outside the lock
(:func:`orchestrator.managed.launch.launch`: the pane, pi, the readiness proof), and always
drops the launch mark, whatever the launch did.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.client.sync import HerdrClient
from orchestrator.managed.definitions import AgentDefinition
from orchestrator.managed.env import child_env
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.extension_install import install_child_extension
from orchestrator.managed.footing import ServiceFooting
from orchestrator.managed.labels import choose_label, claim_label
from orchestrator.managed.launch import LaunchPlan, herdr_alias, launch, workspace_for
from orchestrator.managed.lineage import process_identity
from orchestrator.managed.mailbox import Mailbox
from orchestrator.managed.pi_args import AGENT_DIR_ENV, pi_args
from orchestrator.managed.sources import find_definition, session_source
from orchestrator.managed.store import Generation
from orchestrator.managed.supervisor import LAUNCHER

__all__ = ["continue_", "continue_source", "delegate"]


def delegate(
    footing: ServiceFooting,
    definition: str,
    task: str,
    label: str | None = None,
    files: Sequence[str] | None = None,
) -> dict[str, Any]:
    operation = "delegate"
    footing.supervisor.reconcile()
    resolved = find_definition(footing, definition, operation)
    text, paths = footing.message(task, files, operation, footing.cwd)
    return _start(
        footing,
        resolved,
        text,
        instructions=footing.instructions(resolved, paths, operation),
        requested_label=label,
        inherited=False,
        cwd=footing.cwd,
        session_file=None,
        continued_from=None,
        action="delegate",
    )


def continue_(
    footing: ServiceFooting, session: str, task: str, files: Sequence[str] | None = None
) -> dict[str, Any]:
    operation = "continue"
    footing.supervisor.reconcile()
    source = session_source(footing, session, operation)
    assert source.pi_session_file is not None
    cwd = Path(source.cwd)
    resolved = find_definition(footing, source.definition, operation)
    text, paths = footing.message(task, files, operation, cwd)
    return _start(
        footing,
        resolved,
        text,
        instructions=footing.instructions(resolved, paths, operation),
        requested_label=source.label,
        inherited=True,
        cwd=cwd,
        session_file=source.pi_session_file,
        continued_from=source.run_id,
        action="continue",
        session_id=source.pi_session_id,
    )


def continue_source(footing: ServiceFooting, session: str) -> tuple[str, str]:
    """The working directory and label a continue of ``session`` would give its new
    generation (what the runner's gates check before anything starts);
    :class:`ManagedAgentError` when the session is not one to continue."""
    source = session_source(footing, session, "continue")
    return source.cwd, source.label


def _taken_labels(footing: ServiceFooting, workspace_id: str) -> set[str]:
    taken = {g.label for g in footing.active()}
    for generation in footing.store.scan()[0]:
        if Mailbox(footing.store.root, workspace_id, generation.label).path.exists():
            taken.add(generation.label)
    return taken


def _start(
    footing: ServiceFooting,
    definition: AgentDefinition,
    text: str,
    *,
    instructions: str,
    requested_label: str | None,
    inherited: bool,
    cwd: Path,
    session_file: str | None,
    continued_from: str | None,
    action: str,
    session_id: str | None = None,
) -> dict[str, Any]:
    """Record a ``starting`` generation, launch it, and answer what started."""
    operation = action
    args = pi_args(definition, session_file, operation, footing.aliases_overrides)
    _install_extension(footing, operation)
    client = footing.client()
    generation = _record_starting(
        footing,
        client,
        definition,
        requested_label=requested_label,
        inherited=inherited,
        cwd=cwd,
        session_file=session_file,
        continued_from=continued_from,
        session_id=session_id,
        operation=operation,
    )
    run_id = generation.run_id
    try:
        plan = _launch_plan(footing, generation, definition, text, args, instructions)
        generation = launch(footing.store, client, generation, plan)
    finally:
        with footing.launching_lock:
            footing.launching.discard(run_id)
    return _started(footing, generation, action)


def _record_starting(
    footing: ServiceFooting,
    client: HerdrClient,
    definition: AgentDefinition,
    *,
    requested_label: str | None,
    inherited: bool,
    cwd: Path,
    session_file: str | None,
    continued_from: str | None,
    session_id: str | None,
    operation: str,
) -> Generation:
    """Under the store's lock: the workspace, a free label and the ``starting`` record,
    marked as this process's launch."""
    run_id = str(uuid.uuid4())
    with footing.store.locked():
        if session_file is not None:
            # again under the lock: of two concurrent continues of one session, the
            # second finds the first's generation (recorded with the session) and fails
            session_source(footing, session_file, operation)
        workspace_id, _notice = workspace_for(client, str(cwd), footing.caller_pane)
        taken = _taken_labels(footing, workspace_id)
        if inherited:
            assert requested_label is not None
            label = claim_label(requested_label, taken, operation=operation)
        else:
            label = choose_label(definition.name, taken, requested_label, operation=operation)
        now = time.time()
        generation = footing.store.save(
            Generation(
                run_id=run_id,
                label=label,
                definition=definition.name,
                owner_session_id=footing.controller_id,
                workspace_id=workspace_id,
                cwd=str(cwd),
                mailbox=str(Mailbox(footing.store.root, workspace_id, label).path),
                status="starting",
                created_at=now,
                updated_at=now,
                agent_name=herdr_alias(workspace_id, label, run_id),
                continued_from=continued_from,
                pi_session_id=session_id,
                pi_session_file=session_file,
                parent_label=footing.delegating.label if footing.delegating else None,
                model=definition.model,
                thinking=definition.thinking,
                allowed_definitions=tuple(definition.agents),
                extra={LAUNCHER: process_identity()},
            )
        )
        with footing.launching_lock:
            footing.launching.add(run_id)
    return generation


def _launch_plan(
    footing: ServiceFooting,
    generation: Generation,
    definition: AgentDefinition,
    text: str,
    args: list[str],
    instructions: str,
) -> LaunchPlan:
    """How the child is launched: its task, pi arguments, environment and placement."""
    run_id, label = generation.run_id, generation.label
    return LaunchPlan(
        task_text=text,
        pi_args=args,
        child_env=lambda ws, box: {
            **child_env(
                mailbox_dir=box,
                run_id=run_id,
                owner_session_id=footing.controller_id,
                label=label,
                workspace_id=ws,
                definition=definition.name,
                allowed_definitions=list(definition.agents),
                context_retirement=footing.settings.context_retirement,
            ),
            AGENT_DIR_ENV: str(footing.agent_dir()),
        },
        placement=footing.settings.spawn_placement,
        caller_pane=footing.caller_pane,
        instructions=instructions,
        replace_system_prompt=definition.front_matter.get("systemPromptMode") == "replace",
        **({"ready_timeout_s": footing.ready_timeout_s} if footing.ready_timeout_s else {}),
    )


def _started(footing: ServiceFooting, generation: Generation, action: str) -> dict[str, Any]:
    """The delegate's or continue's result: the started generation's identity."""
    header = f"{action.capitalize()} agent {generation.label} ({generation.definition})."
    return {
        "ok": True,
        "action": action,
        "agent": generation.label,
        "definition": generation.definition,
        "owner_session_id": footing.controller_id,
        "workspace_id": generation.workspace_id,
        "pane_id": generation.pane_id,
        "tab_id": generation.tab_id,
        "session_id": generation.pi_session_id,
        "session_path": generation.pi_session_file,
        "request_id": generation.request_id,
        "run_id": generation.run_id,
        "text": "\n".join(
            [
                header,
                f"Session: {generation.pi_session_id}",
                f"Request: {generation.request_id}",
                f"Assignment request: {generation.request_id}",
            ]
        ),
    }


def _install_extension(footing: ServiceFooting, operation: str) -> Path:
    """The managed-child extension where the child's pi loads it (a real pi runs it; the
    simulator's fake pi runs the Python twin its header names)."""
    try:
        return install_child_extension(footing.agent_dir() / "extensions")
    except ManagedAgentError as exc:
        exc.operation = operation
        raise
