"""Delegating agents: a managed child serving the ``agent_*`` tools as its own controller.

Why here, once: issue 15 makes delegating agents "children that run the same tools with
their restricted roster". A delegating child calls ``herdr-orchestrator call agent_*`` from
its pane, so the one Python implementation serves it too; what differs is *who* the
controller is, and that is read here from the child's environment (the variables the lead
set, :mod:`orchestrator.managed.env`) and its own ``state.json``:

* the state dir is the lead's: the one holding the child's mailbox
  (``<stateDir>/managed/mailboxes-v4/<hex>``), so both see the same generations and lock;
* the controller identity is the child's pi session id (the ``owner_session_id`` of the
  agents it delegates), proved by its ``state.json`` naming its run;
* the roster is its definition's allowlist (:meth:`Roster.for_delegating_agent`).

:func:`outstanding_children` is the rule the child side and the projection share: an agent
whose result has not yet reached its owner keeps the owner waiting (no result of its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from orchestrator.managed.child_state import read_state
from orchestrator.managed.env import MAILBOX_ENV, ChildIdentity
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.mailbox import NAMESPACE
from orchestrator.managed.store import MANAGED_DIR, Generation

__all__ = [
    "DelegatingController",
    "delegating_controller",
    "is_managed_child",
    "outstanding",
    "state_dir_of",
]

_OPERATION = "delegating controller"


@dataclass(frozen=True)
class DelegatingController:
    """A delegating child acting as a controller: whose agents, which roster, where."""

    state_dir: Path
    controller_id: str
    label: str
    run_id: str
    pane_id: str
    allowed_definitions: tuple[str, ...]


def is_managed_child(env: Mapping[str, str]) -> bool:
    """Whether ``env`` is a managed child's: ``PI_HERDSMAN_MAILBOX`` set, as the fake pi and
    the extension decide it too (it must then act as a delegating controller, never as a lead
    with an identity of its own; :class:`ChildIdentity` then checks the rest, including
    ``PI_SUBAGENT_CHILD=1``)."""
    return bool(env.get(MAILBOX_ENV))


def state_dir_of(mailbox_dir: Path) -> Path:
    """The lead's state dir that holds ``mailbox_dir`` (``<state>/managed/mailboxes-v4/x``)."""
    if mailbox_dir.parent.name != NAMESPACE or mailbox_dir.parent.parent.name != MANAGED_DIR:
        raise ManagedAgentError(
            "invalid_request",
            f"{MAILBOX_ENV} is not under <stateDir>/{MANAGED_DIR}/{NAMESPACE}",
            operation=_OPERATION,
        )
    return mailbox_dir.parent.parent.parent


def delegating_controller(env: Mapping[str, str]) -> DelegatingController:
    """The controller a managed child with environment ``env`` is; ``invalid_request`` for
    a leaf (it may not delegate), a broken environment, or a child whose ``state.json`` does
    not name its run (its session id is not proven)."""
    identity = ChildIdentity.from_env(env)
    if not identity.delegating:
        raise ManagedAgentError(
            "invalid_request",
            f"Agent {identity.label} ({identity.definition}) is a leaf agent: its definition "
            "lists no agents, so the agent_* tools are not available to it",
            operation=_OPERATION,
            next_action="Do the work yourself, or use ask_owner if you need your owner.",
        )
    state = read_state(identity.mailbox_dir)
    if state is None or state.run_id != identity.run_id or not state.pi_session_id:
        raise ManagedAgentError(
            "invalid_request",
            "The managed child's state.json does not name this generation: its pi session "
            "(the controller identity of its agents) is not proven",
            operation=_OPERATION,
        )
    return DelegatingController(
        state_dir=state_dir_of(identity.mailbox_dir),
        controller_id=state.pi_session_id,
        label=identity.label,
        run_id=identity.run_id,
        pane_id=identity.pane_id,
        allowed_definitions=identity.allowed_definitions,
    )


def outstanding(generation: Generation) -> bool:
    """``generation`` still owes its owner a result: active, and its result neither
    delivered nor being delivered (the ``delivering`` mark is written before the text is
    typed, so the owner's turn that the delivery starts already sees it as not owed)."""
    if not generation.active or generation.result_delivered:
        return False
    delivering = generation.extra.get("delivering")
    return delivering is None or delivering != generation.result_request_id
