"""Delegating agents: a managed child serving the ``agent_*`` tools as its own controller.

Why here, once: issue 15 makes delegating agents "children that run the same tools with
their restricted roster". A delegating child calls ``herdr-orchestrator call agent_*`` from
its pane, so the one Python implementation serves it too; what differs is *who* the
controller is, and that is read here from what its controller recorded at launch, never
from the child's environment (which the child can change): the generation is the one its
pane was launched as (:mod:`orchestrator.managed.lineage`), and its record says the rest:

* the state dir is the lead's: the one holding the child's mailbox
  (``<stateDir>/managed/mailboxes-v4/<hex>``), so both see the same generations and lock;
* the controller identity is the child's pi session id (the ``owner_session_id`` of the
  agents it delegates) as its launch recorded it, which its ``state.json`` must still name;
* the roster is the allowlist recorded at launch (:meth:`Roster.for_delegating_agent`);
  an empty one is a leaf, refused.

:func:`outstanding_children` is the rule the child side and the projection share: an agent
whose result has not yet reached its owner keeps the owner waiting (no result of its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from orchestrator.managed.child_state import read_state
from orchestrator.managed.env import MAILBOX_ENV, RUN_ID_ENV
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.lineage import Lineage, launched_in
from orchestrator.managed.mailbox import NAMESPACE
from orchestrator.managed.store import MANAGED_DIR, Generation, ManagedStore

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


def _refused(message: str, next_action: str | None = None) -> ManagedAgentError:
    return ManagedAgentError(
        "invalid_request", message, operation=_OPERATION, next_action=next_action
    )


def delegating_controller(
    env: Mapping[str, str], lineage: Lineage | None = None
) -> DelegatingController:
    """The controller a managed child is, from what its controller recorded at launch.

    Which generation the caller is comes from ``lineage`` (default: this process's
    ancestors, :func:`~orchestrator.managed.lineage.launched_in`), never from ``env``: the
    environment's ``PI_HERDSMAN_*`` claim must agree with it or the call is refused. The
    roster, leaf status, label and pane are then the generation record's (written by its
    controller before the child ran), and its controller identity is the pi session id the
    launch recorded, which the child's ``state.json`` must still name. ``invalid_request``
    for a leaf, an unprovable or contradicting claim, a record that is not active, or one
    recorded without its roster."""
    seen = lineage if lineage is not None else launched_in()
    if seen.run_id is None or seen.mailbox is None:
        why = "" if seen.readable else " (this system shows no process ancestry)"
        raise _refused(
            "This process claims to be a managed child but was not launched in a managed "
            f"agent's pane{why}: which generation it is cannot be proved",
            "Call the agent_* tools from the managed agent's own pi session.",
        )
    claimed_run, claimed_box = env.get(RUN_ID_ENV), env.get(MAILBOX_ENV)
    if (claimed_run and claimed_run != seen.run_id) or (
        claimed_box and claimed_box != seen.mailbox
    ):
        raise _refused(
            "The managed child's environment names another generation than the one its pane "
            "was launched as: its PI_HERDSMAN_* variables were changed"
        )
    mailbox_dir = Path(seen.mailbox)
    state_dir = state_dir_of(mailbox_dir)
    store = ManagedStore(state_dir)
    try:
        record = store.load(seen.run_id)
    except (OSError, ManagedAgentError):
        raise _refused(
            f"No readable generation record for this managed child (run {seen.run_id})"
        ) from None
    if record.mailbox != str(mailbox_dir) or not record.active:
        raise _refused(
            f"Agent {record.label}'s generation is not active (status {record.status}), or "
            "its record names another mailbox"
        )
    if record.allowed_definitions is None:
        raise _refused(
            f"Agent {record.label} was launched without a recorded roster, so it cannot be "
            "proved to be a delegating agent"
        )
    if not record.allowed_definitions:
        raise _refused(
            f"Agent {record.label} ({record.definition}) is a leaf agent: its definition "
            "lists no agents, so the agent_* tools are not available to it",
            "Do the work yourself, or use ask_owner if you need your owner.",
        )
    state = read_state(mailbox_dir)
    if (
        state is None
        or state.run_id != record.run_id
        or not record.pi_session_id
        or state.pi_session_id != record.pi_session_id
        or record.pane_id is None
    ):
        raise _refused(
            "The managed child's state.json does not name this generation: its pi session "
            "(the controller identity of its agents) is not proven"
        )
    if record.pi_session_id in (store.controller().controller_id, record.owner_session_id):
        raise _refused("The managed child's pi session is its owner's: refused")
    return DelegatingController(
        state_dir=state_dir,
        controller_id=record.pi_session_id,
        label=record.label,
        run_id=record.run_id,
        pane_id=record.pane_id,
        allowed_definitions=record.allowed_definitions,
    )


def outstanding(generation: Generation) -> bool:
    """``generation`` still owes its owner a result: active, and its result neither
    delivered nor being delivered (the ``delivering`` mark is written before the text is
    typed, so the owner's turn that the delivery starts already sees it as not owed)."""
    if not generation.active or generation.result_delivered:
        return False
    delivering = generation.extra.get("delivering")
    return delivering is None or delivering != generation.result_request_id
