"""Herdr's managed ``agent.start`` launch phases as a pure state machine (reference §5.6).

A launch moves through Herdr's phases (``reconcile_managed_agent_at``), re-evaluated on
every agent state change of its pane, at the settle delay and deadline, and on
``agent.get``:

* **pending** → **active** (``interactive_ready``) once the settle delay has passed and
  the expected agent is detected and idle;
* **pending** → **blocked** (still ``launch_pending``) when the expected agent shows a
  blocked state; **blocked** → **active** when it is idle again;
* the name is cleared (the launch fails) when another agent kind is detected, the
  expected agent was seen and disappeared, or the deadline passes while pending.

Nothing here touches a pane, a clock or the event loop: the live book that drives these
launches is :class:`herdr_sim.services.agents.LaunchBook`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from herdr_sim.model.agents import known_agent

__all__ = ["ManagedLaunch", "Outcome", "Phase", "reconcile"]

Phase = Literal["pending", "blocked", "active"]
Outcome = Literal["same", "changed", "clear"]


@dataclass
class ManagedLaunch:
    """One ``agent.start`` launch: its name and kind, phase and (while pending) its times.

    Times are the event loop's clock (``loop.time()``, monotonic seconds).
    """

    name: str
    kind: str
    deadline: float
    ready_after: float | None
    phase: Phase = "pending"
    #: the expected agent was detected at some point while pending
    observed: bool = False

    @property
    def launch_pending(self) -> bool:
        """AgentInfo ``launch_pending``: pending or blocked during startup."""
        return self.phase != "active"

    @property
    def interactive_ready(self) -> bool:
        """AgentInfo ``interactive_ready``: the launch became active."""
        return self.phase == "active"

    def next_wake(self) -> float | None:
        """When the phase may change with nothing else happening (settle, then deadline)."""
        if self.phase != "pending":
            return None
        if self.ready_after is None:
            return self.deadline
        return min(self.ready_after, self.deadline)


def reconcile(launch: ManagedLaunch, label: str | None, state: str, now: float) -> Outcome:
    """Herdr's ``reconcile_managed_agent_at`` for the pane's effective label and state.

    Mutates ``launch``; ``clear`` means the launch failed and the agent name must go.
    """
    known = known_agent(label) if label is not None else None
    expected = known == launch.kind
    pending = launch.phase == "pending"
    observed = pending and (launch.observed or expected)
    if (known is not None and not expected) or (pending and observed and known is None):
        return "clear"
    if launch.phase == "blocked":
        if expected and state == "idle":
            launch.phase = "active"
            return "changed"
        return "same"
    if launch.phase == "active":
        return "same"
    if expected and state == "blocked":
        launch.phase = "blocked"
        return "changed"
    if now >= launch.deadline:
        return "clear"
    if launch.ready_after is None or now >= launch.ready_after:
        if expected and state == "idle":
            launch.phase = "active"
            return "changed"
        if launch.ready_after is not None:
            launch.ready_after = None
            launch.observed = observed
            return "changed"
    if observed != launch.observed:
        launch.observed = observed
        return "changed"
    return "same"
