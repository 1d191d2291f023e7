"""What every managed-agent operation stands on: the controller and its discipline.

Why one footing under the operations (:mod:`.listing`, :mod:`.starting`, :mod:`.controls`,
:mod:`.reads`): each needs the same state (the durable store and controller identity, the
Herdr client, the result store, the roster, the supervisor) and the same discipline, which
lives here once: the read-only reconcile of an R0 call, the exact resolution of a label
among the owned active generations, the revalidation of a live control against the agent's
projected ``available_tools``, and a message with its files rendered within the mailbox
payload limit. :class:`orchestrator.managed.service.ManagedService` is this footing with the
nine operations on it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.client.sync import HerdrClient
from orchestrator.managed.body_files import expand_body
from orchestrator.managed.definitions import (
    BUILTIN_DIR,
    AgentDefinition,
    LayerSources,
    Roster,
    default_user_dir,
    load_roster,
    where_definitions_go,
)
from orchestrator.managed.delegation import DelegatingController
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.files import prepare_files
from orchestrator.managed.owner import OwnerChannel
from orchestrator.managed.projection import Projection, project
from orchestrator.managed.results import ResultStore
from orchestrator.managed.settings import ManagedSettings
from orchestrator.managed.store import Generation, ManagedStore
from orchestrator.managed.supervisor import (
    Observation,
    ReconcileReport,
    Supervisor,
)

__all__ = ["ServiceFooting"]

#: the run ids this process is launching, whichever service instance launches them: the
#: supervisor takes a ``starting`` generation recorded by this process but launched by none
#: of its threads for an interrupted launch, so the set is the process's, not an instance's
#: (per instance, concurrent calls each with its own service closed each other's launches
#: and handed out their labels twice)
_LAUNCHING: set[str] = set()
_LAUNCHING_LOCK = threading.Lock()


class ServiceFooting:
    """One lead controller's identity, state and shared checks (module docstring)."""

    def __init__(
        self,
        *,
        state_dir: Path,
        client_of: Callable[[], HerdrClient],
        env: Mapping[str, str],
        cwd: Path,
        owner: OwnerChannel | None = None,
        settings: ManagedSettings | None = None,
        roster_of: Callable[[], Roster] | None = None,
        ready_timeout_s: float | None = None,
        aliases_overrides: Mapping[str, Mapping[str, str]] | None = None,
        delegating: DelegatingController | None = None,
        read_only: bool = False,
    ) -> None:
        self.store = ManagedStore(state_dir)
        self.state_dir = Path(state_dir)
        #: set when this controller is a delegating child (its pi session id is the
        #: controller identity, its allowlist the roster): :mod:`.delegation`
        self.delegating = delegating
        self.controller_id = (
            delegating.controller_id
            if delegating is not None
            else self.store.controller().controller_id
        )
        self._client_of = client_of
        self.env = dict(env)
        self.cwd = Path(os.path.realpath(cwd))
        self.owner = owner
        self.settings = settings if settings is not None else ManagedSettings()
        self.roster_of = roster_of
        self.ready_timeout_s = ready_timeout_s
        self.aliases_overrides = aliases_overrides or {}
        #: the configuration's ``readOnly``: the R0 calls (list, inspect, transcript) only
        #: observe; results, asks and cleanups wait for a controller that may mutate Herdr
        self.read_only = read_only
        self.results = ResultStore(self.store.root / "results")
        #: kept health attention for the pull path (set by the background monitor)
        self.attention_source: Callable[[], list[dict[str, Any]]] | None = None
        self.launching = _LAUNCHING
        self.launching_lock = _LAUNCHING_LOCK
        self.supervisor = Supervisor(
            self.store,
            client_of,
            self.controller_id,
            self.results,
            owner=owner,
            launching=self.launching_now,
        )

    # -- shared -------------------------------------------------------------------------

    @property
    def caller_pane(self) -> str | None:
        pane = self.env.get("HERDR_PANE_ID", "").strip()
        return pane or None

    @property
    def pull(self) -> bool:
        """``agent_list`` delivers: the host has no pane, or its pane hosts no agent Herdr
        recognises (such an owner is never idle, so nothing could be pushed to it)."""
        if self.delegating is not None:
            return True  # a delegating child's own agent_list is its pull path too
        if self.owner is None or self.owner.kind == "pull":
            return True
        status = getattr(self.owner, "status", None)
        return callable(status) and status() is None

    def reconciled(self, *, pull: bool = False) -> ReconcileReport:
        """The reconcile an R0 call runs first; under ``readOnly`` only the observations
        (reconcile delivers results into the owner's pane and closes finished agents' panes,
        which are mutations of Herdr a read-only configuration never makes)."""
        if not self.read_only:
            return self.supervisor.reconcile(pull=pull)
        report = ReconcileReport()
        report.observations = [self.supervisor.observe(g) for g in self.supervisor.owned()]
        return report

    def launching_now(self) -> frozenset[str]:
        with self.launching_lock:
            return frozenset(self.launching)

    def roster(self) -> Roster:
        """The effective roster; a delegating child's is its allowlist's enabled
        definitions, as leaves."""
        if self.roster_of is not None:
            full = self.roster_of()
        else:
            full = load_roster(
                LayerSources(
                    builtin_dir=BUILTIN_DIR,
                    user_dir=default_user_dir(self.env),
                    project_root=self.cwd,
                    state_dir=self.state_dir,
                )
            )
        if self.delegating is None:
            return full
        allowed = full.for_delegating_agent(self.delegating.allowed_definitions)
        return Roster({d.name: d for d in allowed}, full.refusals)

    def where_definitions_go(self) -> str:
        """Where this controller's user adds a definition (its own user and project dirs)."""
        return where_definitions_go(default_user_dir(self.env), self.cwd)

    def active(self) -> list[Generation]:
        generations, _ = self.store.scan()
        return [g for g in generations if g.active]

    def resolve(self, label: str, operation: str) -> Generation:
        matches = [g for g in self.active() if g.label == label]
        if not matches:
            raise ManagedAgentError(
                "target_not_found",
                f"No exact agent identity matched: {label}",
                operation=operation,
                ids={"label": label},
                next_action="Use agent_list to see the live agents and their exact labels.",
            )
        if len(matches) > 1:
            raise ManagedAgentError(
                "target_ambiguous",
                f"Agent label matches {len(matches)} live generations: {label}",
                operation=operation,
                ids={"label": label},
            )
        generation = matches[0]
        if generation.owner_session_id != self.controller_id:
            raise ManagedAgentError(
                "target_not_found",
                "Agent belongs to another owner session",
                operation=operation,
                ids={"label": label},
            )
        return generation

    def checked(self, label: str, tool: str, operation: str) -> tuple[Observation, Projection]:
        """The agent's fresh evidence and projection; refused unless ``tool`` is available."""
        generation = self.resolve(label, operation)
        observation = self.supervisor.observe(generation)
        projection = project(generation, observation.evidence)
        if tool not in projection.available_tools:
            raise self.not_available(generation, observation, projection, tool, operation)
        return observation, projection

    @staticmethod
    def not_available(
        generation: Generation,
        observation: Observation,
        projection: Projection,
        tool: str,
        operation: str,
    ) -> ManagedAgentError:
        ids = {
            "label": generation.label,
            **({"paneId": generation.pane_id} if generation.pane_id else {}),
        }
        if projection.state == "unknown":
            return ManagedAgentError(
                "target_ambiguous",
                f"Managed agent presence cannot be proved safely: {projection.diagnostic}",
                operation=operation,
                ids=ids,
                next_action="Use agent_list; unknown agents expose no actions.",
            )
        reasons = {
            "agent_steer": f"Agent is not currently accepting steering: {projection.state}",
            "agent_interrupt": f"Agent has no interruptible active operation: {projection.state}",
            "agent_reply": "Agent is not waiting for an owner reply",
            "agent_close": "Agent has a durable result; close after result delivery",
            "agent_transcript": "Agent transcript is not currently available",
            "agent_inspect": f"Agent cannot be inspected in state {projection.state}",
        }
        if tool == "agent_transcript" and projection.state != "lost":
            next_action = (
                "The pi session file is written shortly after delegation; this is expected "
                "briefly. Do not poll: wait for the result or attention."
            )
        else:
            next_action = (
                f"Refresh with agent_list; call {tool} only when available_tools lists it."
            )
        return ManagedAgentError(
            "agent_busy",
            reasons.get(tool, f"{tool} is not available"),
            operation=operation,
            ids=ids,
            next_action=next_action,
        )

    def with_files(self, text: str, files: Sequence[str] | None, operation: str, cwd: Path) -> str:
        return self.message(text, files, operation, cwd)[0]

    def message(
        self, text: str, files: Sequence[str] | None, operation: str, cwd: Path
    ) -> tuple[str, frozenset[str]]:
        """The message with its ``files`` rendered, and the canonical paths of those files
        (a definition body's ``@`` line naming one of them is dropped)."""
        limit = self.settings.mailbox_payload_limit_bytes
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise ManagedAgentError(
                "invalid_request",
                f"Message is {size} bytes; the mailbox payload limit is {limit} bytes",
                operation=operation,
                next_action="Shorten the message, or put the detail in a file passed in files.",
            )
        if not files:
            return text, frozenset()
        prepared = prepare_files(
            files,
            cwd=cwd,
            results=self.results,
            owner_session_id=self.controller_id,
            inline_limit=self.settings.inline_attachment_limit_bytes,
            payload_limit=self.settings.mailbox_payload_limit_bytes,
            reserved_bytes=len(text.encode("utf-8", "surrogatepass")),
            operation=operation,
        )
        paths = frozenset(prepared.paths)
        return (f"{text}\n\n{prepared.text}" if prepared.text else text), paths

    def instructions(
        self, definition: AgentDefinition, files: frozenset[str], operation: str
    ) -> str:
        """The definition's body with its ``@path`` lines expanded (reference A.17 step 7)."""
        home = Path(self.env.get("HOME") or Path.home())
        return expand_body(definition, home=home, skip=files, operation=operation)

    def agent_dir(self) -> Path:
        """The children's ``$PI_CODING_AGENT_DIR``: the controller's, else pi's default."""
        return default_user_dir(self.env).parent

    def client(self) -> HerdrClient:
        """A Herdr client (the factory's: a fresh one when the socket changed)."""
        return self._client_of()
