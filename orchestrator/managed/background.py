"""The controller's background work in a long-running server: reconcile and health attention.

Why: seed 002 *pushes* results and attention to an idle owner; nobody calls a tool for that
to happen. In ``herdr-orchestrator mcp`` (one process per host session) this module runs

* a **reconcile loop**: :meth:`Supervisor.reconcile` about once a second (never waiting on
  the lifecycle lock a tool call holds), which persists results, delivers them into the
  owner's pane while it is idle, acknowledges and cleans up;
* the **health monitors** (:class:`orchestrator.managed.health.HealthMonitor`), one per
  *direct owner* in the controller's cascade: the controller's own (its direct agents), and
  one per delegating agent of the cascade that has active agents of its own (a
  :class:`CascadeOwner` on that agent's pane, observing only *its* direct agents). Seed 002
  sends attention only to the exact direct owner, and a delegating child runs no background
  of its own (its calls are one-shot), so the lead's background scans for it. Each monitor
  has its own scheduler (episodes and cadence per owner) and scan thread (the 30 s fallback);
  every Herdr lifecycle event wakes all of them. The reconcile loop creates a monitor when a
  delegating agent gains agents and retires it (stops its thread) when it has none left or
  is no longer active (:meth:`ControllerBackground.sync_cascade`).

With no owner pane (pull), the loop does not deliver (``agent_list`` does) and the lead
monitor's attention is kept and shown by ``agent_list``. A delegating child's attention is
typed into its pane only while it is idle; what it did not take is kept in the lead's process
and offered again on a later scan (its own ``agent_list`` runs in another process and does not
show it). One-shot ``herdr-orchestrator call`` runs no background: each call reconciles first.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from orchestrator.client.errors import ClientError
from orchestrator.logs import task_logger
from orchestrator.managed.attention import AgentObservation, ResultError, UnacknowledgedRequest
from orchestrator.managed.clock import Clock, SystemClock
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.health import Capture, HealthMonitor, relay_events
from orchestrator.managed.inspect import bound_recent_output, foreground_commands
from orchestrator.managed.mailbox import Box
from orchestrator.managed.owner import OwnerKind, PaneOwner, PullOwner
from orchestrator.managed.projection import project
from orchestrator.managed.service import ManagedService
from orchestrator.managed.store import Generation
from orchestrator.managed.supervisor import SPOOL_DIR

__all__ = [
    "RECONCILE_INTERVAL_S",
    "CascadeOwner",
    "ControllerBackground",
    "health_observations",
]

logger = task_logger(__name__)

#: How often the background reconcile runs (clock seconds).
RECONCILE_INTERVAL_S = 1.0


def _on_clock(clock: Clock, wall: float) -> float:
    """A wall-clock timestamp as the same instant on ``clock`` (monotonic)."""
    return clock.now() - max(0.0, time.time() - wall)


def _direct_agents(service: ManagedService, owner_session_id: str | None) -> list[Generation]:
    """The active agents whose direct owner is ``owner_session_id`` (None: the controller)."""
    if owner_session_id is None:
        return service.supervisor.owned()
    generations, _ = service.store.scan()
    return [g for g in generations if g.owner_session_id == owner_session_id and g.active]


def health_observations(
    service: ManagedService, clock: Clock, owner_session_id: str | None = None
) -> list[AgentObservation]:
    """Fresh :class:`AgentObservation`s of the active agents directly owned by
    ``owner_session_id`` (default: the controller itself); no mutation.

    Gathered under the lifecycle lock: a close or a cleanup closes the pane before it
    records the agent finished, and a scan between the two would see a pane gone with no
    result, a false ``lost``."""
    with service.store.locked():
        return _observations(service, clock, owner_session_id)


def _observations(
    service: ManagedService, clock: Clock, owner_session_id: str | None
) -> list[AgentObservation]:
    out: list[AgentObservation] = []
    for generation in _direct_agents(service, owner_session_id):
        observation = service.supervisor.observe(generation)
        evidence = observation.evidence
        projection = project(generation, evidence)
        child = observation.child
        ask = observation.pending_ask
        error = None
        if generation.result_error is not None:
            raw = generation.result_error
            error = ResultError(
                request_id=str(raw.get("requestId") or generation.request_id or ""),
                failed_at=str(raw.get("failedAt") or ""),
                message=str(raw.get("message") or ""),
                next_action=raw.get("nextAction"),
            )
        unacknowledged = None
        with contextlib.suppress(ManagedAgentError):
            pending = service.supervisor.mailbox(generation).pending(Box.TO_CHILD)
            if pending:
                oldest = pending[0]
                unacknowledged = UnacknowledgedRequest(
                    oldest.message_id, oldest.kind.value, _on_clock(clock, oldest.created_at)
                )
        out.append(
            AgentObservation(
                run_id=generation.run_id,
                label=generation.label,
                state=projection.state,
                active_request_id=generation.request_id if not evidence.result_pending else None,
                lost=evidence.presence == "lost",
                has_result=evidence.result_pending or generation.result_delivered,
                unknown=projection.state == "unknown",
                runtime_blocked=evidence.herdr_status == "blocked" and ask is None,
                result_error=error,
                pending_ask_id=ask.message_id if ask is not None else None,
                ask_delivered=ask is not None and ask.message_id in generation.delivered_asks,
                unacknowledged=unacknowledged,
                last_activity_at=(
                    _on_clock(clock, child.last_activity_at) if child is not None else None
                ),
                inspect_authorized="agent_inspect" in projection.available_tools,
                available_tools=projection.available_tools,
                ask_question=ask.text if ask is not None else None,
            )
        )
    return out


def _active_run_ids(service: ManagedService) -> frozenset[str]:
    generations, _ = service.store.scan()
    return frozenset(g.run_id for g in generations if g.active)


class CascadeOwner:
    """A delegating agent of the cascade as the owner of its agents' attention.

    Text goes into its pane through :class:`PaneOwner` (only while Herdr reports it idle),
    and only while its generation is still active and the pane provably still runs it (the
    same proof the reconcile asks before typing a result into it): a pane that closed or
    now runs another agent gets nothing.
    """

    def __init__(self, service: ManagedService, owner: Generation) -> None:
        if owner.pane_id is None:
            raise ValueError("a cascade owner needs a pane")
        self.service = service
        self.run_id = owner.run_id
        self.pane = PaneOwner(
            service.supervisor.client(), owner.pane_id, service.store.root / SPOOL_DIR
        )

    @property
    def kind(self) -> OwnerKind:
        return "pane"

    def _still_there(self) -> bool:
        generations, _ = self.service.store.scan()
        owner = next((g for g in generations if g.run_id == self.run_id), None)
        if owner is None or not owner.active:
            return False
        return self.service.supervisor.observe(owner).evidence.presence == "live"

    def is_idle(self) -> bool:
        return self._still_there() and self.pane.is_idle()

    def deliver(self, text: str) -> bool:
        return self._still_there() and self.pane.deliver(text)


class ControllerBackground:
    """The reconcile loop and the health monitors of one controller (module docstring)."""

    def __init__(
        self,
        service: ManagedService,
        *,
        clock: Clock | None = None,
        interval_s: float = RECONCILE_INTERVAL_S,
    ) -> None:
        self.service = service
        self.clock = clock if clock is not None else SystemClock()
        self.interval_s = interval_s
        self.monitor = HealthMonitor(
            clock=self.clock,
            observe=lambda: health_observations(service, self.clock),
            owner=service.owner if service.owner is not None else PullOwner(),
            capture=self.capture,
        )
        self.cascade_monitors: dict[str, HealthMonitor] = {}
        """One monitor per delegating agent of the cascade with agents of its own, by that
        agent's run id (:meth:`sync_cascade`)."""
        self._cascade_lock = threading.Lock()
        self._started = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._events: Iterable[Mapping[str, Any]] | None = None
        self._event_thread: threading.Thread | None = None
        service.attention_source = self.kept_attention

    def kept_attention(self) -> list[dict[str, Any]]:
        """Attention the owner has not taken (shown by ``agent_list`` on the pull path).

        Only the controller's own: a delegating agent's attention is for it, not for us;
        and only about agents still active (one closed or delivered since the scan that
        kept it is resolved)."""
        active = _active_run_ids(self.service)
        return [
            {
                "reason": kept.attention.reason,
                "agent": kept.attention.label,
                "text": kept.text,
            }
            for kept in self.monitor.undelivered()
            if kept.attention.run_id in active
        ]

    # -- the cascade's owners --------------------------------------------------------------

    def _cascade_owners(self) -> dict[str, Generation]:
        """The delegating agents of the cascade that directly own active agents, by run id."""
        owners: dict[str, Generation] = {}
        for _agent, parent in self.service.supervisor.descendants():
            if parent.pi_session_id and parent.pane_id is not None and parent.active:
                owners.setdefault(parent.run_id, parent)
        return owners

    def sync_cascade(self) -> None:
        """Create a monitor for each new delegating owner of the cascade and retire (stop)
        the monitor of each owner that has no active agents left or is no longer active.
        A new monitor's scan thread starts when the background runs."""
        owners = self._cascade_owners()
        with self._cascade_lock:
            retired = [
                self.cascade_monitors.pop(run_id)
                for run_id in list(self.cascade_monitors)
                if run_id not in owners
            ]
            for run_id, owner in owners.items():
                if run_id in self.cascade_monitors:
                    continue
                monitor = self._cascade_monitor(owner)
                self.cascade_monitors[run_id] = monitor
                if self._started and not self._stop.is_set():
                    monitor.start()
        for monitor in retired:
            monitor.stop()

    def _cascade_monitor(self, owner: Generation) -> HealthMonitor:
        session = owner.pi_session_id
        return HealthMonitor(
            clock=self.clock,
            observe=lambda: health_observations(self.service, self.clock, session),
            owner=CascadeOwner(self.service, owner),
            capture=lambda run_id: self.capture(run_id, session),
        )

    def monitors(self) -> list[HealthMonitor]:
        """Every health monitor now: the controller's own first."""
        with self._cascade_lock:
            return [self.monitor, *self.cascade_monitors.values()]

    def notify(self) -> None:
        """A Herdr lifecycle event: every monitor's next scan is due now."""
        for monitor in self.monitors():
            monitor.notify()

    # -- capture and reconcile -------------------------------------------------------------

    def capture(self, run_id: str, owner_session_id: str | None = None) -> Capture | None:
        """One bounded inspect capture of ``run_id``, an agent directly owned by
        ``owner_session_id`` (default: the controller), for the first stale attention."""
        generation = next(
            (g for g in _direct_agents(self.service, owner_session_id) if g.run_id == run_id),
            None,
        )
        if generation is None or generation.pane_id is None:
            return None
        client = self.service.supervisor.client()
        try:
            read = client.agent_read(generation.pane_id, "recent-unwrapped")
        except ClientError as exc:
            return Capture(error=f"capture failed: {exc}")
        foreground: list[str] = []
        with contextlib.suppress(ClientError):
            info = client.pane_process_info(generation.pane_id)
            raw = info.get("foreground_processes") or info.get("processes") or []
            if isinstance(raw, list):
                foreground = foreground_commands([p for p in raw if isinstance(p, Mapping)])
        output, truncated = bound_recent_output(read.text)
        return Capture(
            recent_output=output,
            foreground=tuple(foreground),
            recent_output_truncated=truncated,
            captured_at=time.time(),
        )

    def reconcile_once(self) -> None:
        try:
            self.service.supervisor.reconcile(wait=False)
        except Exception as exc:  # the loop must survive a bad pass; the next one retries
            logger.warning("background reconcile failed (%s)", type(exc).__name__)

    def sync_cascade_once(self) -> None:
        try:
            self.sync_cascade()
        except Exception as exc:  # the loop must survive a bad pass; the next one retries
            logger.warning("background cascade monitors not synced (%s)", type(exc).__name__)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.reconcile_once()
            self.sync_cascade_once()
            self.clock.wait_until(self.clock.now() + self.interval_s, self._stop)

    def _event_loop(self, events: Iterable[Mapping[str, Any]]) -> None:
        relay_events(events, self._stop, self.notify, logger)

    def start(self, events: Iterable[Mapping[str, Any]] | None = None) -> None:
        """Run the reconcile loop and every monitor's scan thread; each item of ``events``
        (e.g. :class:`orchestrator.managed.health.LifecycleEvents`) wakes every monitor."""
        if self._thread is not None:
            return
        self._started = True
        self._thread = threading.Thread(target=self._loop, name="managed-reconcile", daemon=True)
        self._thread.start()
        for monitor in self.monitors():
            monitor.start()
        if events is not None:
            self._events = events
            self._event_thread = threading.Thread(
                target=self._event_loop, args=(events,), name="managed-health-events", daemon=True
            )
            self._event_thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        close = getattr(self._events, "close", None)
        if callable(close):
            close()
        for monitor in self.monitors():
            monitor.stop(timeout)
        for thread in (self._event_thread, self._thread):
            if thread is not None:
                thread.join(timeout)
        self._thread = None
        self._event_thread = None
