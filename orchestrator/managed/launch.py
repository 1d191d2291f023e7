"""Start one managed pi child in its own Herdr pane, prove it is ready, hand it its task.

Why this order (reference A.17, the seed winning): every step leaves durable evidence before
the next one acts, and any failure rolls back what was created, so a delegation either ends
with a live child holding exactly one assignment or with nothing left running:

1. **Placement** (``spawnPlacement``): ``subtree`` (default) gives each
   lead-direct agent its own tab labelled with the agent label, in the controller's
   workspace when the controller runs inside Herdr (``HERDR_PANE_ID``), else in the
   ``managed-agents`` workspace (found or created); ``tab`` puts them all in one shared tab
   ``agents · lead-<controller id>`` (split in turn); ``split`` splits the controller's pane.
   The pane gets the child's environment (:mod:`orchestrator.managed.env`) at creation, so
   the pi process inherits it. The pane is recorded before pi starts.
2. **pi starts** through Herdr's ``agent start --kind pi`` under the Herdr alias
   ``label[:15]_<sha256(workspace\\0label\\0run)[:16]>`` (A.7), with the definition's model
   and thinking resolved by :mod:`orchestrator.core.aliases`, its body as the child's
   instructions (``--append-system-prompt`` of a 0600 file in the mailbox, or
   ``--system-prompt`` for ``systemPromptMode: replace``) and ``--session`` for a
   continuation; :func:`orchestrator.agent_tools.start_watch.start_agent` reports a pi that
   exited during startup with the pane's last lines.
3. **Readiness**: the child's ``state.json`` in its mailbox with this generation's
   ``runId`` within 30 s, else ``pane_not_ready`` with a startup diagnostic (the pane's last
   lines).
4. **The task** is posted to the mailbox; its id is the assignment (``request_id``).

Any failure closes the pane this launch created and removes its mailbox; when that cleanup
itself fails the error is ``rollback_failure`` carrying the primary error and the cleanup's.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from orchestrator.agent_tools import start_watch
from orchestrator.client.errors import ClientError, HerdrError, NotFound
from orchestrator.client.file_trust import private_files as safe_fs
from orchestrator.client.poll import Deadline
from orchestrator.client.sync import HerdrClient
from orchestrator.managed.child_state import ChildState, read_state
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.mailbox import Kind, Mailbox
from orchestrator.managed.store import Generation, ManagedStore

__all__ = [
    "INSTRUCTIONS_FILE",
    "MANAGED_WORKSPACE_LABEL",
    "READY_TIMEOUT_S",
    "LaunchPlan",
    "Placement",
    "herdr_alias",
    "launch",
    "remove_mailbox",
    "shared_tab_label",
]

#: The definition body, as the file pi reads its instructions from (in the mailbox dir).
INSTRUCTIONS_FILE = "instructions.md"
#: The workspace a controller outside Herdr places its agents in.
MANAGED_WORKSPACE_LABEL = "managed-agents"
#: How long a started child has to write its first ``state.json`` (reference A.17 step 16).
READY_TIMEOUT_S = 30.0
#: Herdr's budget for ``agent start`` itself.
START_TIMEOUT_MS = 60_000
_READY_POLL_S = 0.05
Placement = Literal["tab", "subtree", "split"]


def herdr_alias(workspace_id: str, label: str, run_id: str) -> str:
    """The Herdr agent name of a generation (reference A.7)."""
    digest = hashlib.sha256(f"{workspace_id}\0{label}\0{run_id}".encode()).hexdigest()[:16]
    return f"{label[:15]}_{digest}"


@dataclass(frozen=True)
class LaunchPlan:
    """What a launch needs beyond the generation record."""

    task_text: str
    pi_args: Sequence[str]
    child_env: Callable[[str, str], Mapping[str, str]]  # (workspace_id, mailbox dir) → env
    placement: Placement = "subtree"
    caller_pane: str | None = None
    ready_timeout_s: float = READY_TIMEOUT_S
    #: the definition's body: the child's instructions (empty: none)
    instructions: str = ""
    #: ``systemPromptMode: replace``: the body replaces pi's system prompt (else appended)
    replace_system_prompt: bool = False

    def instruction_args(self, path: Path) -> list[str]:
        """pi's flag for the instructions file at ``path`` (pi reads a value naming an
        existing file as that file's text)."""
        flag = "--system-prompt" if self.replace_system_prompt else "--append-system-prompt"
        return [flag, str(path)] if self.instructions.strip() else []


def _herdr_error(exc: ClientError, operation: str) -> ManagedAgentError:
    details: dict[str, Any] = {}
    if isinstance(exc, HerdrError):
        details["herdrCode"] = exc.code
    return ManagedAgentError(
        "internal_failure", str(exc), operation=operation, details=details or None
    )


def workspace_for(client: HerdrClient, cwd: str, caller_pane: str | None) -> tuple[str, str | None]:
    """``(workspace_id, notice)``: the caller's workspace, else ``managed-agents``."""
    if caller_pane is not None:
        try:
            return client.pane_get(caller_pane).workspace_id, None
        except ClientError as exc:
            notice = f"caller pane {caller_pane} not usable ({exc}); used {MANAGED_WORKSPACE_LABEL}"
    else:
        notice = None
    try:
        for workspace in client.workspace_list():
            if workspace.label == MANAGED_WORKSPACE_LABEL:
                return workspace.workspace_id, notice
        made = client.workspace_create(cwd, label=MANAGED_WORKSPACE_LABEL, focus=False)
    except ClientError as exc:
        raise _herdr_error(exc, "placement") from None
    return made.workspace.workspace_id, notice


def remove_mailbox(path: Path) -> None:
    """Remove one mailbox directory (its records and state); missing is fine. ``rmtree``
    uses descriptors and never follows a link planted inside."""
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(path)


def shared_tab_label(controller_id: str) -> str:
    """The one agents tab of ``tab`` placement (reference A.15)."""
    return f"agents · lead-{controller_id[:8]}"


def _place(
    client: HerdrClient, generation: Generation, plan: LaunchPlan, env: Mapping[str, str]
) -> tuple[str, str, str | None]:
    """Create the pane: ``(pane_id, tab_id, tab_label)``."""
    cwd = generation.cwd
    try:
        if plan.placement == "split" and plan.caller_pane is not None:
            pane = client.pane_split(plan.caller_pane, "right", cwd=cwd, env=env, focus=False)
            return pane.pane_id, pane.tab_id, None
        if plan.placement == "tab":
            label = shared_tab_label(generation.owner_session_id)
            tabs = [t for t in client.tab_list(generation.workspace_id) if t.label == label]
            if tabs:
                panes = client.pane_list(generation.workspace_id)
                mine = [p for p in panes if p.tab_id == tabs[0].tab_id]
                if mine:
                    # alternate the direction so the shared tab stays a grid
                    direction: Literal["right", "down"] = "right" if len(mine) % 2 else "down"
                    pane = client.pane_split(
                        mine[-1].pane_id, direction, cwd=cwd, env=env, focus=False
                    )
                    return pane.pane_id, pane.tab_id, label
            created = client.tab_create(
                generation.workspace_id, cwd, label=label, env=env, focus=False
            )
            return created.root_pane.pane_id, created.tab.tab_id, label
        created = client.tab_create(
            generation.workspace_id, cwd, label=generation.label, env=env, focus=False
        )
    except ClientError as exc:
        raise _herdr_error(exc, "placement") from None
    return created.root_pane.pane_id, created.tab.tab_id, generation.label


def _wait_ready(
    mailbox_dir: Path, run_id: str, timeout_s: float, alive: Callable[[], bool]
) -> ChildState | None:
    deadline = Deadline(timeout_s)
    while True:
        state = read_state(mailbox_dir)
        if state is not None and state.run_id == run_id:
            return state
        if deadline.expired() or not alive():
            return None
        time.sleep(_READY_POLL_S)


def launch(
    store: ManagedStore, client: HerdrClient, generation: Generation, plan: LaunchPlan
) -> Generation:
    """Launch ``generation`` (recorded ``starting``); returns it ``live`` with its request id.

    Raises :class:`ManagedAgentError`; everything created is rolled back first (the record
    ends ``failed``).
    """
    operation = "launch"
    mailbox = Mailbox(store.root, generation.workspace_id, generation.label)
    created_pane: str | None = None
    try:
        if mailbox.path.exists():
            raise ManagedAgentError(
                "agent_label_exists",
                f"Agent mailbox still holds state: {generation.label}",
                operation=operation,
                ids={"label": generation.label},
                next_action="Close the agent using this label, or choose another label.",
            )
        mailbox.ensure()
        pi_args = list(plan.pi_args)
        if plan.instructions.strip():
            # kept in the mailbox: it lives exactly as long as the generation (removed by
            # rollback, close and cleanup), so a pi that reloads its resources finds it
            instructions = safe_fs.write_atomic(
                mailbox.path / INSTRUCTIONS_FILE, plan.instructions, create_parent=False
            )
            pi_args = [*plan.instruction_args(instructions), *pi_args]
        env = plan.child_env(generation.workspace_id, str(mailbox.path))
        with store.locked():  # two launches must not both create the shared tab
            pane_id, tab_id, tab_label = _place(client, generation, plan, env)
        created_pane = pane_id
        generation = store.update(generation, pane_id=pane_id, tab_id=tab_id, tab_label=tab_label)
        try:
            start_watch.start_agent(
                client,
                generation.agent_name,
                "pi",
                pane_id,
                args=tuple(pi_args),
                timeout_ms=START_TIMEOUT_MS,
            )
        except start_watch.ExitedDuringStart as exc:
            raise ManagedAgentError(
                "pane_not_ready",
                "Agent did not initialize its mailbox: pi exited during startup",
                operation="agent_start",
                details={"startupDiagnostic": str(exc)[-4096:]},
            ) from None
        except ClientError as exc:
            raise _herdr_error(exc, "herdr agent start") from None

        def alive() -> bool:
            """False once the pane, or pi in it, is proven gone (no need to wait on)."""
            try:
                return client.agent_get(pane_id).name == generation.agent_name
            except NotFound:
                return False
            except ClientError:
                return True  # cannot tell: keep waiting within the bound

        state = _wait_ready(mailbox.path, generation.run_id, plan.ready_timeout_s, alive)
        if state is None:
            raise ManagedAgentError(
                "pane_not_ready",
                "Agent did not initialize its mailbox",
                operation="readiness",
                ids={"label": generation.label, "paneId": pane_id},
                details={"startupDiagnostic": start_watch.pane_tail(client, pane_id, ())[-4096:]},
                next_action="Read the startup diagnostic; fix the cause before delegating again.",
            )
        generation = store.update(
            generation,
            pi_session_id=state.pi_session_id,
            pi_session_file=state.pi_session_file,
        )
        task = mailbox.post(Kind.TASK, plan.task_text)
        return store.update(generation, request_id=task.message_id, status="live")
    except BaseException as exc:
        primary = (
            exc
            if isinstance(exc, ManagedAgentError)
            else ManagedAgentError(
                "internal_failure", f"{type(exc).__name__}: {exc}", operation=operation
            )
        )
        cleanup = _rollback(client, created_pane, mailbox.path)
        with contextlib.suppress(Exception):
            store.update(
                generation,
                status="failed",
                diagnostic=primary.message,
                cleanup_error=cleanup,
            )
        if cleanup is not None:
            raise ManagedAgentError(
                "rollback_failure",
                f"Agent launch failed and rollback was incomplete. Primary: {primary.message} "
                f"Cleanup: {cleanup}",
                operation=operation,
                rollback_occurred=True,
                retry_attempted=True,
                ids={
                    "label": generation.label,
                    **({"paneId": created_pane} if created_pane else {}),
                },
                details={
                    "primary": {
                        "category": primary.category,
                        "message": primary.message,
                        "operation": primary.operation,
                    },
                    "cleanup": {
                        "category": "internal_failure",
                        "message": cleanup,
                        "operation": "rollback",
                    },
                },
                next_action="Resolve the cleanup failure (close the pane) before retrying.",
            ) from None
        if not isinstance(exc, Exception):
            raise
        primary.rollback_occurred = created_pane is not None or primary.rollback_occurred
        raise primary from None


def _rollback(client: HerdrClient, pane_id: str | None, mailbox_dir: Path) -> str | None:
    """Close the pane we created and remove the mailbox; the failure text, or None."""
    problems: list[str] = []
    if pane_id is not None:
        try:
            client.pane_close(pane_id)
        except NotFound:
            pass
        except ClientError as exc:
            problems.append(f"pane {pane_id} could not be closed: {exc}")
    try:
        remove_mailbox(mailbox_dir)
    except OSError as exc:
        problems.append(f"mailbox {mailbox_dir} could not be removed: {exc}")
    return "; ".join(problems) or None
