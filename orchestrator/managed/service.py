"""The lead controller's nine operations over its owned agent generations.

Why one service object: every operation needs the same footing (the durable store and
controller identity, the Herdr client, the result store, the roster, the supervisor) and
the same discipline, which lives once in :class:`~orchestrator.managed.footing.ServiceFooting`
(the service is that footing with the operations on it):

* **Reconcile first.** Each operation runs :meth:`Supervisor.reconcile` so it acts on the
  current truth (a result that arrived meanwhile is delivered; a cleaned-up agent is gone).
* **Revalidate before mutating.** Each live control (steer, interrupt, reply, close) resolves
  the exact label among the *owned active* generations, gathers fresh evidence, projects
  ``available_tools`` (:func:`orchestrator.managed.projection.project`) and refuses unless its
  tool is listed, all under the lifecycle lock, immediately before it posts or closes.
* **Structured failures.** Every refusal is a :class:`ManagedAgentError` (the seed's
  categories); :mod:`orchestrator.managed.tools` turns it into the public error dict.

Successful results are plain dicts with ``ok: true``, the ``action`` and a model-facing
``text`` (the reference's wording, A.4).

Each operation lives in the module of its responsibility, and this class only forwards to
it: :mod:`.listing` (``agent_list``), :mod:`.starting` (``agent_delegate``,
``agent_continue``, resolved by :mod:`.sources`, with pi's arguments from :mod:`.pi_args`),
:mod:`.controls` (steer, interrupt, reply, close) and :mod:`.reads` (inspect, transcript).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestrator.managed import controls, listing, reads, starting
from orchestrator.managed.footing import ServiceFooting
from orchestrator.managed.pi_args import MANAGED_TOOL_NAMES, tool_policy_args

__all__ = ["MANAGED_TOOL_NAMES", "ManagedService", "tool_policy_args"]


class ManagedService(ServiceFooting):
    """One lead controller: its identity, agents and operations (module docstring)."""

    def list_agents(self) -> dict[str, Any]:
        return listing.list_agents(self)

    def delegate(
        self,
        definition: str,
        task: str,
        label: str | None = None,
        files: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        return starting.delegate(self, definition, task, label, files)

    def continue_(
        self, session: str, task: str, files: Sequence[str] | None = None
    ) -> dict[str, Any]:
        return starting.continue_(self, session, task, files)

    def continue_source(self, session: str) -> tuple[str, str]:
        """The working directory and label a continue of ``session`` would give its new
        generation (what the runner's gates check before anything starts);
        :class:`~orchestrator.managed.errors.ManagedAgentError` when the session is not one
        to continue."""
        return starting.continue_source(self, session)

    def steer(self, agent: str, message: str, files: Sequence[str] | None = None) -> dict[str, Any]:
        return controls.steer(self, agent, message, files)

    def interrupt(
        self, agent: str, message: str, files: Sequence[str] | None = None
    ) -> dict[str, Any]:
        return controls.interrupt(self, agent, message, files)

    def reply(self, agent: str, message: str, files: Sequence[str] | None = None) -> dict[str, Any]:
        return controls.reply(self, agent, message, files)

    def close(self, agent: str) -> dict[str, Any]:
        return controls.close(self, agent)

    def inspect(self, agent: str) -> dict[str, Any]:
        return reads.inspect(self, agent)

    def transcript(self, agent: str) -> dict[str, Any]:
        return reads.transcript(self, agent)
