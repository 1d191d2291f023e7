"""The controller's background work in a long-running server: reconcile and health attention.

Why: seed 002 *pushes* results and attention to an idle owner; nobody calls a tool for that
to happen. In ``herdr-orchestrator mcp`` (one process per host session) this module runs

* a **reconcile loop**: :meth:`Supervisor.reconcile` about once a second (never waiting on
  the lifecycle lock a tool call holds), which persists results, delivers them into the
  owner's pane while it is idle, acknowledges and cleans up;
* the **health monitor** (:class:`orchestrator.managed.health.HealthMonitor`): the 30 s
  fallback scan plus a scan after every Herdr lifecycle event, fed with
  :func:`health_observations` and one bounded inspect capture for a first stale episode.

With no owner pane (pull), the loop does not deliver (``agent_list`` does) and the monitor's
attention is kept and shown by ``agent_list``. One-shot ``herdr-orchestrator call`` runs no
background: each call reconciles first.
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
from orchestrator.managed.health import Capture, HealthMonitor
from orchestrator.managed.inspect import bound_recent_output, foreground_commands
from orchestrator.managed.mailbox import Box
from orchestrator.managed.owner import PullOwner
from orchestrator.managed.projection import project
from orchestrator.managed.service import ManagedService

__all__ = ["RECONCILE_INTERVAL_S", "ControllerBackground", "health_observations"]

logger = task_logger(__name__)

#: How often the background reconcile runs (clock seconds).
RECONCILE_INTERVAL_S = 1.0


def _on_clock(clock: Clock, wall: float) -> float:
    """A wall-clock timestamp as the same instant on ``clock`` (monotonic)."""
    return clock.now() - max(0.0, time.time() - wall)


def health_observations(service: ManagedService, clock: Clock) -> list[AgentObservation]:
    """Fresh :class:`AgentObservation`s of the controller's active agents (no mutation)."""
    out: list[AgentObservation] = []
    for generation in service.supervisor.owned():
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
                has_result=evidence.result_pending,
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


class ControllerBackground:
    """The reconcile loop and the health monitor of one controller (module docstring)."""

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
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        service.attention_source = self.kept_attention

    def kept_attention(self) -> list[dict[str, Any]]:
        """Attention the owner has not taken (shown by ``agent_list`` on the pull path)."""
        return [
            {
                "reason": kept.attention.reason,
                "agent": kept.attention.label,
                "text": kept.text,
            }
            for kept in self.monitor.undelivered()
        ]

    def capture(self, run_id: str) -> Capture | None:
        """One bounded inspect capture of ``run_id`` (for the first stale attention)."""
        generation = next((g for g in self.service.supervisor.owned() if g.run_id == run_id), None)
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

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.reconcile_once()
            self.clock.wait_until(self.clock.now() + self.interval_s, self._stop)

    def start(self, events: Iterable[Mapping[str, Any]] | None = None) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="managed-reconcile", daemon=True)
        self._thread.start()
        self.monitor.start(events)

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.monitor.stop(timeout)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
