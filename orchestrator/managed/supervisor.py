"""Reconcile: turn what children posted into durable artifacts and owner deliveries, once.

Why a reconcile and not callbacks: the controller process may die at any step (after the
child posted its result, after the artifact was persisted, while delivering, before the
pane was closed). :meth:`Supervisor.reconcile` reads the durable truth (generation records,
mailboxes, the result store, Herdr) and moves each generation one safe step further; it is
idempotent, runs under the lifecycle lock, before every tool call and from the MCP server's
background thread, and a restarted server running it finds everything where it was left.

Per active generation, in order:

* **Evidence** (:meth:`observe`): the child's ``state.json``, the mailbox's pending
  ``to-owner`` records and open ask, Herdr's pane and agent (presence ``live``/``lost``/
  ``unknown``). Any unreadable piece makes the generation ``unknown`` with a diagnostic.
* **A result** for the generation's assignment → ``ResultStore.persist`` (idempotent per
  request id) → recorded on the generation (``result_ref``) → delivered to the owner (the
  agent's text bounded for the model, :mod:`orchestrator.managed.model_text`; the full text
  stays the artifact, named by its ref) →
  ``ResultStore.mark_delivered`` and the generation's ``result_delivered`` → the mailbox
  record consumed (the acknowledgement) → cleanup: the pane closed, the mailbox removed, the
  generation ``delivered`` (its session kept for ``agent_continue``). Delivery into the
  owner's pane happens only while the owner is idle; with no owner pane (the host is not in
  Herdr) delivery is the *pull*: ``agent_list`` returns the result once (``pull=True``).
  A crash between "delivering" and "delivered" is never redelivered: the generation records
  ``delivering`` first, and a restart that finds it marks the result delivered with
  ``delivery_uncertain`` (the artifact stays reachable by its ``result:`` ref), so nothing
  is ever delivered twice.
* **An ask** not yet delivered → delivered once (pane owner while idle, else the pull),
  recorded in ``delivered_asks``, consumed; it stays the pending ask (``agent_reply``) until
  answered.

The pass covers the controller's direct agents *and* its owned cascade
(:meth:`Supervisor.descendants`: agents owned by a delegating agent's pi session): a
descendant's result or ask goes to its direct owner, typed into that owner's pane while it is
idle (never to this controller), so the lead's background keeps a delegating child's
deliveries moving; the child's own calls (and its ``agent_list`` pull) do the same for it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from orchestrator.client.errors import ClientError, NotFound
from orchestrator.client.sync import HerdrClient
from orchestrator.managed.child_state import ChildState, read_state
from orchestrator.managed.delegation import outstanding
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.launch import remove_mailbox
from orchestrator.managed.lineage import process_alive, process_identity
from orchestrator.managed.mailbox import Box, Kind, Mailbox, Message
from orchestrator.managed.owner import OwnerChannel, PaneOwner
from orchestrator.managed.projection import Evidence, Presence
from orchestrator.managed.results import ResultArtifact, ResultStore, render_delivery
from orchestrator.managed.store import Generation, LockBusy, ManagedStore
from orchestrator.managed.transcript import session_tokens

__all__ = [
    "LAUNCHER",
    "SESSION_RETIRED",
    "Delivery",
    "Observation",
    "ReconcileReport",
    "Supervisor",
    "ask_text",
    "close_pane",
    "public_record",
]

#: where long texts typed into an owner's pane are spooled (under the managed root)
SPOOL_DIR = "owner-messages"
#: An agent working this long without qualifying activity is shown ``stale`` (seed 002).
STALE_AFTER_S = 600.0
#: the generation's ``extra`` key: its pi session was retired under context pressure
SESSION_RETIRED = "session_retired"
#: the generation's ``extra`` key: the process that launches it (``process_identity``)
LAUNCHER = "launcher"
#: presence diagnostics (:meth:`Supervisor._presence`) under which an interrupted launch is
#: left for a later pass: nothing is proved about its pane
_UNPROVED = ("Herdr could not be asked", "agent name now on pane")


@dataclass(frozen=True)
class Delivery:
    """One message delivered to the owner by this reconcile (a result or an ask)."""

    kind: Literal["result", "ask"]
    agent: str
    text: str
    ref: str | None = None
    ask_id: str | None = None
    request_id: str | None = None
    #: a result's agent text was cut to the model bound (the full text is ``ref``)
    truncated: bool = False
    #: a result's time from the delegation to the persisted result (milliseconds)
    elapsed_ms: int | None = None
    #: a result's token usage, as the agent's pi session recorded it (None: not recorded)
    tokens: dict[str, int] | None = None


@dataclass(frozen=True)
class Observation:
    """A generation with the evidence gathered for it."""

    generation: Generation
    evidence: Evidence
    child: ChildState | None = None
    pending_ask: Message | None = None


@dataclass
class ReconcileReport:
    """What one pass did: the deliveries to *this* controller, its direct agents'
    observations, and its non-direct descendants' (shown without tools)."""

    delivered: list[Delivery] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    descendants: list[Observation] = field(default_factory=list)
    skipped: bool = False


Sink = Callable[[str], bool]


def ask_text(label: str, question: str) -> str:
    """The owner-facing text of a delivered ``ask_owner`` question (reference A.4)."""
    return (
        f"Agent {label} needs your input:\n{question}\n"
        f'Answer with agent_reply using agent="{label}".'
    )


class Supervisor:
    """Observes and reconciles the generations one controller owns."""

    def __init__(
        self,
        store: ManagedStore,
        client_of: Callable[[], HerdrClient],
        owner_session_id: str,
        results: ResultStore,
        owner: OwnerChannel | None = None,
        launching: Callable[[], frozenset[str]] = frozenset,
    ) -> None:
        self.store = store
        self._client_of = client_of
        self.owner_session_id = owner_session_id
        self.results = results
        self.owner = owner
        self._launching = launching

    def client(self) -> HerdrClient:
        """The controller's Herdr client (built on first use)."""
        return self._client_of()

    # -- evidence ---------------------------------------------------------------------

    def mailbox(self, generation: Generation) -> Mailbox:
        return Mailbox(self.store.root, generation.workspace_id, generation.label)

    def _presence(self, generation: Generation) -> tuple[Presence, str | None, str | None]:
        """``(presence, herdr status, diagnostic)`` from Herdr; a failed inventory never
        proves ``lost``."""
        if generation.pane_id is None:
            return "lost", None, "the launch never created a pane"
        try:
            client = self._client_of()
            try:
                client.pane_get(generation.pane_id)
            except NotFound:
                try:
                    elsewhere = client.agent_get(generation.agent_name)
                except NotFound:
                    return "lost", None, "the agent's pane is gone"
                return "unknown", None, f"agent name now on pane {elsewhere.pane_id}"
            try:
                agent = client.agent_get(generation.pane_id)
            except NotFound:
                return "unknown", None, "the pane exists but no agent runs in it"
        except ClientError as exc:
            return "unknown", None, f"Herdr could not be asked: {exc}"
        if agent.name != generation.agent_name:
            return "unknown", None, f"the pane runs another agent ({agent.name})"
        return "live", agent.agent_status, None

    def _launch_interrupted(self, generation: Generation) -> bool:
        """A ``starting`` generation whose launcher is gone: not launching in this process,
        and its recorded launcher (another process) no longer runs."""
        if generation.run_id in self._launching():
            return False
        launcher = generation.extra.get(LAUNCHER)
        if not isinstance(launcher, dict):
            return True  # recorded before launchers were: no process can be waiting on it
        if launcher == process_identity():
            return True  # ours, yet not launching: this process's launch ended without a record
        return not process_alive(launcher)

    def observe(self, generation: Generation) -> Observation:
        """Fresh evidence for one generation (never raises for bad evidence)."""
        if generation.status == "starting":
            if not self._launch_interrupted(generation):
                return Observation(generation, Evidence("unknown", diagnostic="launch in progress"))
            presence, status, diag = self._presence(generation)
            return Observation(
                generation,
                Evidence(
                    "lost" if presence == "lost" else "unknown",
                    herdr_status=status,
                    diagnostic="launch was interrupted" + (f"; {diag}" if diag else ""),
                ),
            )
        mailbox = self.mailbox(generation)
        try:
            child = read_state(mailbox.path)
            pending = mailbox.pending(Box.TO_OWNER)
            ask = mailbox.pending_ask()
        except ManagedAgentError as exc:
            return Observation(
                generation, Evidence("unknown", diagnostic=f"mailbox unreadable: {exc.message}")
            )
        result_pending = any(
            m.kind is Kind.RESULT and m.assignment_id == generation.request_id for m in pending
        ) or (generation.result_ref is not None and not generation.result_delivered)
        waiting = (
            child is not None
            and child.operation == "idle"
            and child.active_request_id is not None
            and self._owes(generation.pi_session_id)
        )
        presence, status, diag = self._presence(generation)
        if presence == "live":
            if child is None:
                presence, diag = "unknown", "the child's state.json is missing"
            else:
                mismatch = _identity_mismatch(generation, child)
                if mismatch is not None:
                    presence, diag = "unknown", f"the child's state names another {mismatch}"
        evidence = Evidence(
            presence,
            operation=child.operation if child is not None else None,
            herdr_status=status,
            pending_ask_id=ask.message_id if ask is not None else None,
            pending_ask_assignment=ask.assignment_id if ask is not None else None,
            result_pending=result_pending,
            diagnostic=diag,
            session_file=(child.pi_session_file if child is not None else None)
            or generation.pi_session_file,
            waiting_on_agents=waiting,
        )
        return Observation(generation, evidence, child, ask)

    def _owes(self, owner_session_id: str | None) -> bool:
        """Some agent of ``owner_session_id`` (a delegating agent's pi session) still owes
        it a result (:func:`orchestrator.managed.delegation.outstanding`)."""
        if not owner_session_id:
            return False
        generations, _ = self.store.scan()
        return any(g.owner_session_id == owner_session_id and outstanding(g) for g in generations)

    def owned(self) -> list[Generation]:
        generations, _ = self.store.scan()
        return [g for g in generations if g.owner_session_id == self.owner_session_id and g.active]

    def descendants(self) -> list[tuple[Generation, Generation]]:
        """The active non-direct descendants ``(agent, its direct owner)`` whose ownership
        chain resolves to this controller (an agent's owner is its parent's pi session id),
        breadth-first; a cycle is never followed twice."""
        generations, _ = self.store.scan()
        by_owner: dict[str, list[Generation]] = {}
        for generation in generations:
            if generation.active:
                by_owner.setdefault(generation.owner_session_id, []).append(generation)
        seen: set[str] = set()
        out: list[tuple[Generation, Generation]] = []
        frontier = list(by_owner.get(self.owner_session_id, []))
        seen.update(g.run_id for g in frontier)
        while frontier:
            following: list[Generation] = []
            for parent in frontier:
                session = parent.pi_session_id
                if not session or session == self.owner_session_id:
                    continue
                for child in by_owner.get(session, []):
                    if child.run_id not in seen:
                        seen.add(child.run_id)
                        out.append((child, parent))
                        following.append(child)
            frontier = following
        return out

    # -- reconcile --------------------------------------------------------------------

    def reconcile(self, *, pull: bool = False, wait: bool = True) -> ReconcileReport:
        """One idempotent pass (module docstring). ``pull``: the caller is ``agent_list``
        of an owner without a pane, which receives the deliveries itself. Without ``wait``
        a held lock skips the pass (``skipped``)."""
        report = ReconcileReport()
        try:
            with self.store.locked(timeout=None if wait else 0):
                sink = self._sink(pull)
                for generation in self.owned():
                    observed = self._reconcile_one(generation, report.delivered, sink)
                    if observed is not None:
                        report.observations.append(observed)
                for generation, parent in self.descendants():
                    # delivered to its direct owner's pane (never to this controller)
                    observed = self._reconcile_one(generation, [], self._owner_pane_sink(parent))
                    if observed is not None:
                        report.descendants.append(observed)
        except LockBusy:
            report.skipped = True
        return report

    def _owner_pane_sink(self, owner: Generation) -> Sink | None:
        """Delivery to a delegating agent ``owner``: into its own pane, only while it is
        idle, and only while the pane provably still runs it — and only once its own turn
        end has run (its state no longer ``working``). Herdr's idle can come first; a
        delivery typed then, marked ``delivering`` before its text, made the turn end that
        was still to run see nothing owed and post the owner's result too early."""
        if owner.pane_id is None:
            return None
        evidence = self.observe(owner).evidence
        if evidence.presence != "live" or evidence.operation == "working":
            return None
        channel = PaneOwner(self._client_of(), owner.pane_id, self.store.root / SPOOL_DIR)

        def push(text: str) -> bool:
            try:
                return channel.deliver(text)
            except ClientError:
                return False

        return push

    def _sink(self, pull: bool) -> Sink | None:
        """How to deliver now: the pull (the caller is ``agent_list`` and receives it), the
        owner's pane (only while it is idle), or not now."""
        if pull:
            return lambda _text: True
        if self.owner is not None and self.owner.kind == "pane":
            owner = self.owner

            def push(text: str) -> bool:
                try:
                    return owner.is_idle() and owner.deliver(text)
                except ClientError:
                    return False

            return push
        return None

    def _reconcile_one(
        self, generation: Generation, delivered: list[Delivery], sink: Sink | None
    ) -> Observation | None:
        """Move ``generation`` on; its fresh observation, or None once this pass finished it
        (delivered and cleaned up: it is no agent any more, and its closed pane must never
        read as ``lost``)."""
        mailbox = self.mailbox(generation)
        if generation.status == "starting" and self._launch_interrupted(generation):
            generation = self._resolve_interrupted(generation, mailbox)
        if generation.status == "live":
            try:
                pending = mailbox.pending(Box.TO_OWNER)
            except ManagedAgentError:
                pending = []  # shown unknown by observe; left in place
            for message in pending:
                if message.assignment_id != generation.request_id:
                    continue
                if message.kind is Kind.RESULT:
                    generation = self._persist(generation, message)
                elif message.kind is Kind.ASK:
                    generation = self._deliver_ask(generation, mailbox, message, delivered, sink)
            if generation.result_ref is not None and not generation.result_delivered:
                generation = self._deliver_result(generation, delivered, sink)
            if generation.result_delivered:
                generation = self._finish(generation, mailbox)
        if not generation.active:
            return None
        return self.observe(generation)

    def _resolve_interrupted(self, generation: Generation, mailbox: Mailbox) -> Generation:
        """A launch whose launcher was killed, resolved with evidence: **adopted** when its
        task was posted and its pane provably runs the child (our alias on the pane, the
        child's ``state.json`` naming the run), else **closed**: the pane closed when it
        provably runs our alias, left alone when it does not (nothing proves it ours), the
        mailbox removed, the record ``failed`` with what was found. Nothing is done while
        Herdr cannot be asked or the mailbox cannot be read (it stays ``unknown``)."""
        try:
            history = mailbox.history() if mailbox.path.exists() else []
            child = read_state(mailbox.path) if mailbox.path.exists() else None
        except ManagedAgentError:
            return generation
        presence, _status, diagnostic = self._presence(generation)
        if presence == "unknown" and diagnostic is not None and diagnostic.startswith(_UNPROVED):
            return generation  # Herdr could not be asked, or our agent moved: not proved
        task = next((m for m in history if m.kind is Kind.TASK), None)
        if (
            task is not None
            and presence == "live"
            and child is not None
            and child.run_id == generation.run_id
        ):
            return self.store.update(
                generation,
                status="live",
                request_id=task.message_id,
                pi_session_id=child.pi_session_id,
                pi_session_file=child.pi_session_file,
                diagnostic="adopted after an interrupted launch: its task was posted and its "
                "pane runs it",
            )
        found = [f"launch interrupted ({diagnostic or 'its pane runs our agent'})"]
        found.append("its task was posted" if task is not None else "its task was never posted")
        problems: list[str] = []
        if presence == "live":
            problems += close_pane(self._client_of, generation.pane_id)
            found.append(f"pane {generation.pane_id} closed")
        elif generation.pane_id is not None and presence == "unknown":
            found.append(f"pane {generation.pane_id} left open: nothing proves it ours")
        try:
            remove_mailbox(mailbox.path)
        except OSError as exc:
            problems.append(f"mailbox {mailbox.path} could not be removed: {exc}")
        if problems and presence == "live":
            return self.store.update(generation, cleanup_error="; ".join(problems))
        return self.store.update(
            generation,
            status="failed",
            closed_reason="; ".join(found),
            diagnostic="; ".join(found),
            cleanup_error="; ".join(problems) or None,
        )

    def _persist(self, generation: Generation, message: Message) -> Generation:
        if generation.result_ref is not None:
            return generation
        try:
            artifact = self.results.persist(
                owner_session_id=generation.owner_session_id,
                label=generation.label,
                definition=generation.definition,
                cwd=generation.cwd,
                pi_session_id=generation.pi_session_id,
                pi_session_file=generation.pi_session_file,
                request_id=message.assignment_id,
                run_id=generation.run_id,
                status="completed" if message.status == "completed" else "failed",
                text=message.text,
            )
        except (OSError, ManagedAgentError) as exc:
            error = {
                "code": "write_failure",
                "message": str(exc),
                "requestId": message.assignment_id,
                "runId": generation.run_id,
                "nextAction": "Fix the persistence failure, then close the agent.",
            }
            return self.store.update(generation, result_error=error)
        # the child marks its session retired before it posts the result: read it now,
        # while the mailbox (removed at cleanup) still holds the child's state
        extra = dict(generation.extra)
        with contextlib.suppress(ManagedAgentError):
            child = read_state(self.mailbox(generation).path)
            if child is not None and child.session_retired:
                extra[SESSION_RETIRED] = True
        return self.store.update(
            generation,
            extra=extra,
            result_ref=artifact.ref,
            result_request_id=artifact.request_id,
            result_status=artifact.status,
            result_error=None,
        )

    def _artifact(self, generation: Generation) -> ResultArtifact:
        assert generation.result_ref is not None
        return self.results.resolve(
            generation.result_ref, owner_session_id=generation.owner_session_id
        )

    def _deliver_result(
        self, generation: Generation, delivered: list[Delivery], sink: Sink | None
    ) -> Generation:
        if generation.extra.get("delivering") == generation.result_request_id:
            # a previous process crashed mid-delivery: never deliver twice
            self.results.mark_delivered(str(generation.result_request_id))
            extra = {**generation.extra, "delivery_uncertain": True}
            return self.store.update(generation, result_delivered=True, extra=extra)
        if sink is None:
            return generation
        artifact = self._artifact(generation)
        rendered = render_delivery(artifact, retired=bool(generation.extra.get(SESSION_RETIRED)))
        text = rendered.text
        marked = self.store.update(
            generation, extra={**generation.extra, "delivering": artifact.request_id}
        )
        if not sink(text):
            return self.store.update(
                marked, extra={k: v for k, v in marked.extra.items() if k != "delivering"}
            )
        self.results.mark_delivered(artifact.request_id)
        delivered.append(
            Delivery(
                "result",
                generation.label,
                text,
                ref=artifact.ref,
                request_id=artifact.request_id,
                truncated=rendered.truncated,
                elapsed_ms=max(0, int((artifact.created_at - generation.created_at) * 1000)),
                tokens=session_tokens(artifact.pi_session_file or generation.pi_session_file),
            )
        )
        return self.store.update(marked, result_delivered=True)

    def _deliver_ask(
        self,
        generation: Generation,
        mailbox: Mailbox,
        message: Message,
        delivered: list[Delivery],
        sink: Sink | None,
    ) -> Generation:
        if message.message_id in generation.delivered_asks:
            with contextlib.suppress(ManagedAgentError):
                mailbox.consume(message)
            return generation
        if sink is None:
            return generation
        text = ask_text(generation.label, message.text)
        if not sink(text):
            return generation
        generation = self.store.update(
            generation, delivered_asks=(*generation.delivered_asks, message.message_id)
        )
        delivered.append(
            Delivery(
                "ask",
                generation.label,
                text,
                ask_id=message.message_id,
                request_id=message.assignment_id,
            )
        )
        with contextlib.suppress(ManagedAgentError):
            mailbox.consume(message)
        return generation

    def _finish(self, generation: Generation, mailbox: Mailbox) -> Generation:
        """After delivery: acknowledge the result, close the pane, remove the mailbox."""
        problems: list[str] = []
        try:
            for message in mailbox.pending(Box.TO_OWNER):
                if message.kind is Kind.RESULT:
                    mailbox.consume(message)
        except ManagedAgentError as exc:
            problems.append(f"mailbox: {exc.message}")
        problems += close_pane(self._client_of, generation.pane_id)
        if not problems:
            try:
                remove_mailbox(mailbox.path)
            except OSError as exc:
                problems.append(f"mailbox {mailbox.path} could not be removed: {exc}")
        if problems:
            return self.store.update(generation, cleanup_error="; ".join(problems))
        return self.store.update(generation, status="delivered", cleanup_error=None)


def _identity_mismatch(generation: Generation, child: ChildState) -> str | None:
    """Which identity field of the child's ``state.json`` disagrees with the record."""
    expected = {
        "run": (child.run_id, generation.run_id),
        "owner": (child.owner_session_id, generation.owner_session_id),
        "label": (child.label, generation.label),
        "workspace": (child.workspace_id, generation.workspace_id),
        "pane": (child.pane_id, generation.pane_id),
    }
    for name, (seen, want) in expected.items():
        if seen != want:
            return name
    return None


def close_pane(client_of: Callable[[], HerdrClient], pane_id: str | None) -> list[str]:
    """Close ``pane_id`` (gone already is fine); the problems, if any."""
    if pane_id is None:
        return []
    try:
        client_of().pane_close(pane_id)
    except NotFound:
        return []
    except ClientError as exc:
        return [f"pane {pane_id} could not be closed: {exc}"]
    return []


def public_record(
    observation: Observation,
    projection_state: str,
    tools: tuple[str, ...],
    diagnostic: str | None,
    *,
    now: float | None = None,
) -> dict[str, Any]:
    """One ``agent_list`` record (seed 002's fields; absent evidence omitted)."""
    g = observation.generation
    child = observation.child
    wall = time.time() if now is None else now
    record: dict[str, Any] = {
        "agent": g.label,
        "kind": "pi",
        "managed": True,
        "state": projection_state,
        "available_tools": list(tools),
        "workspace_id": g.workspace_id,
        "pane_id": g.pane_id,
        "tab_id": g.tab_id,
        "tab_label": g.tab_label,
        "cwd": g.cwd,
        "pi_session_id": (child.pi_session_id if child else None) or g.pi_session_id,
        "pi_session_path": (child.pi_session_file if child else None) or g.pi_session_file,
        "owner_session_id": g.owner_session_id,
        "agent_definition": g.definition,
        "active_request_id": g.request_id if g.result_ref is None else None,
    }
    if child is not None and child.last_activity_at:
        # on every record with activity evidence, not only a stale one: a model reads
        # "inactive for 9 minutes" before the 10-minute threshold makes it stale
        record["last_activity_at"] = child.last_activity_at
        inactive = max(0.0, wall - child.last_activity_at)
        record["stale"] = projection_state == "working" and inactive >= STALE_AFTER_S
        record["inactive_ms"] = int(inactive * 1000)
    if g.parent_label:
        record["parent_label"] = g.parent_label
    if g.cleanup_error:
        record["cleanup_error"] = g.cleanup_error
    if g.result_error:
        record["result_error"] = g.result_error
    if diagnostic:
        record["diagnostic"] = diagnostic
    ask = observation.pending_ask
    if ask is not None:
        record["pending_ask"] = {"ask_id": ask.message_id, "question": ask.text}
    return {k: v for k, v in record.items() if v is not None}
