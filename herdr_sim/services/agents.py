"""The agent service a runtime owns (``rt.agents``): every change to a pane's agent goes
through here.

The rules themselves are pure (:mod:`herdr_sim.model.agents` for reports, detection and
completion; :mod:`herdr_sim.services.launches` for ``agent.start``'s phases). This service is their
one live side:

* :meth:`AgentService.apply` — the one way to change an agent record: tell the record which
  kind a managed launch holds the pane for (*sync*), snapshot it (*before*), run the change
  (*mutate*), then apply the engine's rules and emit Herdr's events (*commit*, §6.2);
* :class:`LaunchBook` — the live ``agent.start`` launches, their timers, and what the
  session file records of them;
* :meth:`AgentService.set_detection` and :meth:`AgentService.shell_returned` — what process
  and screen detection (:mod:`herdr_sim.services.detection_loop`) feed in.

It reaches the runtime only through :class:`AgentHost`, so nothing here imports the
runtime or a handler module (the runtime imports this module, handlers call it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Literal, Protocol

from herdr_sim.config import SimulatorConfig
from herdr_sim.model import agents
from herdr_sim.model.agents import AgentBook, AgentRecord, AgentState, Update, effective
from herdr_sim.model.session import PaneRef
from herdr_sim.wire.request_context import current_request_id

from . import lifecycle
from .events import Envelope, Signal
from .launches import ManagedLaunch, reconcile
from .metadata import MetaHost, sync_pane

log = logging.getLogger(__name__)

__all__ = ["AgentHost", "AgentService", "LaunchBook", "Mutation", "ReleaseCause", "ReleaseTap"]

#: A change to an agent record; returns whether it released the pane's agent.
Mutation = Callable[[AgentRecord], bool]
#: Why a pane's agent was released: a request (``pane.release_agent``), the agent's process
#: ending (process detection), or the guide's safety net (the job that reported ended
#: without releasing). Herdr's ``pane.agent_detected`` event does not say which.
ReleaseCause = Literal["request", "process-exit", "safety-net"]
#: ``tap(pane_id, agent, cause, request_id)``: one call per release, on the loop, as it
#: happens; ``request_id`` is the releasing request's (cause ``request``), else ""
ReleaseTap = Callable[[str, "str | None", ReleaseCause, str], None]


class AgentHost(MetaHost, Protocol):
    """What the agent service needs from the runtime that owns it."""

    config: SimulatorConfig
    state_changed: Signal
    stopping: bool

    def agent_view(self, ref: PaneRef) -> dict[str, Any]:
        """AgentInfo without the managed-launch fields."""
        ...

    def schedule_save(self) -> None:
        """Save the session soon."""
        ...


class LaunchBook:
    """The managed launches of one runtime, by pane key, and what drives their phases."""

    def __init__(self, host: AgentHost, service: AgentService) -> None:
        self.host = host
        self.service = service
        self.launches: dict[int, ManagedLaunch] = {}
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._queued = False
        host.hub.add_listener(self._on_event)

    def adopt_restored(self, managed: dict[int, tuple[str, str]]) -> None:
        """Take over the managed agents a restore brought back (pane key → (name, kind)),
        as Herdr's ``restore_managed_agent`` does: named, active, no startup times."""
        for key, (name, kind) in managed.items():
            self.launches[key] = ManagedLaunch(
                name=name, kind=kind, deadline=0.0, ready_after=None, phase="active"
            )

    def saved(self, key: int) -> tuple[str, bool] | None:
        """What the session file records of a pane's launch: its kind and whether it is
        still pending (None: no live launch)."""
        launch = self.launches.get(key)
        pane = self.host.session.panes.get(key)
        if launch is None or pane is None or pane.agent_rec.name != launch.name:
            return None
        return launch.kind, launch.launch_pending

    def get(self, ref: PaneRef) -> ManagedLaunch | None:
        """The pane's launch; one whose name was cleared since (exit, release) is gone."""
        key = ref.pane.key
        launch = self.launches.get(key)
        if launch is not None and ref.pane.agent_rec.name != launch.name:
            self.drop(key)
            return None
        return launch

    def drop(self, key: int) -> None:
        """Forget a pane's launch (Herdr's ``clear_agent_name`` clears it with the name)."""
        self.launches.pop(key, None)
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def begin(self, ref: PaneRef, name: str, kind: str, timeout: float) -> ManagedLaunch:
        """Name the pane and start its launch in the pending phase."""
        now = asyncio.get_running_loop().time()
        launch = ManagedLaunch(
            name=name,
            kind=kind,
            deadline=now + timeout,
            ready_after=now + self.host.config.timers().agent_start_settle,
        )
        # Herdr sets the name without an event: the pane's effective agent is unchanged
        ref.pane.agent_rec.name = name
        self.launches[ref.pane.key] = launch
        self._arm(ref.pane.key, launch)
        return launch

    def reconcile(self, ref: PaneRef, *, announce: bool) -> None:
        """Re-evaluate a pane's launch now; ``announce`` emits ``pane.updated`` on a change
        (the timer and ``agent.get`` paths do in Herdr; a state update's own events suffice)."""
        launch = self.get(ref)
        if launch is None:
            return
        host = self.host
        label, state = effective(ref.pane.agent_rec)
        outcome = reconcile(launch, label, state, asyncio.get_running_loop().time())
        if outcome == "clear":

            def clear_name(rec: AgentRecord) -> bool:
                rec.name = None
                self.drop(ref.pane.key)
                return False

            self.service.apply(ref, clear_name)  # the name changed: pane.updated
        elif outcome == "changed":
            self._arm(ref.pane.key, launch)
            if announce:
                host.hub.publish(lifecycle.pane_updated(host.pane_view(ref)))
            host.state_changed.fire()
        else:
            return
        host.schedule_save()

    def reconcile_all(self, *, announce: bool) -> None:
        """Re-evaluate every launch (a pane gone from the model loses its launch)."""
        self._queued = False
        host = self.host
        if host.stopping:
            return
        for key in list(self.launches):
            if key not in host.session.panes:
                self.drop(key)
                continue
            self.reconcile(host.session.locate(key), announce=announce)

    def _on_event(self, envelope: Envelope) -> None:
        """A pane's agent label or status changed: re-evaluate launches after this turn."""
        if not self.launches or self._queued:
            return
        if envelope["event"] in ("pane_agent_detected", "pane_agent_status_changed"):
            self._queued = True
            asyncio.get_running_loop().call_soon(self._settle_events)

    def _settle_events(self) -> None:
        self.reconcile_all(announce=False)

    def _arm(self, key: int, launch: ManagedLaunch) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        wake = launch.next_wake()
        if wake is not None:
            loop = asyncio.get_running_loop()
            self._timers[key] = loop.call_at(wake, self._woke, key)

    def _woke(self, key: int) -> None:
        self._timers.pop(key, None)
        host = self.host
        if host.stopping or key not in host.session.panes:
            self.drop(key)
            return
        self.reconcile(host.session.locate(key), announce=True)


class AgentService:
    """The live agent engine of one runtime (see the module docstring)."""

    def __init__(self, host: AgentHost) -> None:
        self.host = host
        self.launches = LaunchBook(host, self)
        #: called on every release with its cause (the simulator-side record the plugin's
        #: request log reads; ``Simulator.release_taps``)
        self.release_taps: list[ReleaseTap] = []

    # -- reading -------------------------------------------------------------------------------

    def launch_of(self, ref: PaneRef) -> ManagedLaunch | None:
        """The pane's live managed launch, if any (restored managed agents included)."""
        return self.launches.get(ref)

    def view(self, ref: PaneRef) -> dict[str, Any]:
        """AgentInfo with the managed-launch fields (``launch_pending``, ``interactive_ready``
        in Herdr's place, just before ``state_change_seq``; omitted when false)."""
        info = self.host.agent_view(ref)
        launch = self.launch_of(ref)
        if launch is None:
            return info
        extra = [
            (key, True)
            for key, value in (
                ("launch_pending", launch.launch_pending),
                ("interactive_ready", launch.interactive_ready),
            )
            if value
        ]
        out: dict[str, Any] = {}
        for key, value in info.items():
            if key == "state_change_seq":
                out.update(extra)
            out[key] = value
        return out

    # -- changing ------------------------------------------------------------------------------

    def sync_managed(self, ref: PaneRef) -> ManagedLaunch | None:
        """Tell the engine which agent kind an ``agent.start`` launch manages in the pane: its
        name survives that kind's session changes (Herdr's managed agent). Returns that
        launch (None: none)."""
        launch = self.launch_of(ref)
        ref.pane.agent_rec.managed_kind = None if launch is None else launch.kind
        return launch

    def apply(self, ref: PaneRef, mutate: Mutation, *, cause: ReleaseCause = "request") -> Update:
        """Change the pane's agent record: sync, before, ``mutate``, commit.

        ``mutate`` returns whether the change released the pane's agent (its
        ``pane.agent_detected`` then says ``released``, and the release taps hear ``cause``).
        """
        launch = self.sync_managed(ref)
        pane = ref.pane
        pending = launch is not None and launch.launch_pending
        before = AgentBook.snapshot(pane.agent_rec, pane.state, pane.seen, launch_pending=pending)
        released = mutate(pane.agent_rec)
        update = self._commit(ref, before, released=released)
        if update.released:
            self._released(ref.pane_id, update.event_label, cause)
        return update

    def _released(self, pane_id: str, agent: str | None, cause: ReleaseCause) -> None:
        request_id = current_request_id.get() if cause == "request" else ""
        for tap in list(self.release_taps):
            try:
                tap(pane_id, agent, cause, request_id)
            except Exception:
                log.exception("release tap failed")

    def _commit(self, ref: PaneRef, before: agents.Snapshot, *, released: bool) -> Update:
        """Apply the engine's rules to a changed record and emit Herdr's events (§6.2).

        ``pane.updated`` when the agent name changed, ``pane.agent_detected`` when the label
        changed or the agent was released, ``pane_agent_status_changed`` when the public
        status or the presentation changed.
        """
        host = self.host
        pane = ref.pane
        update = host.session.agents.commit(
            pane.agent_rec,
            before,
            active_tab=host.session.is_active_tab(ref.workspace, ref.tab),
            released=released,
        )
        presentation = (pane.title, pane.display_agent, dict(pane.state_labels))
        pane.agent, pane.state, pane.seen = update.label, update.state, update.seen
        if update.name_changed:
            host.hub.publish(lifecycle.pane_updated(host.pane_view(ref)))
        if update.detected_event:
            host.hub.publish(
                lifecycle.pane_agent_detected(
                    ref.pane_id,
                    ref.workspace.public_id,
                    agent=update.event_label,
                    released=update.released,
                    final_status=update.status,
                )
            )
        # metadata guarded by an agent label or an authority source may appear or disappear
        sync_pane(host, ref, host.meta_for(("pane", pane.key)), False)
        moved = (pane.title, pane.display_agent, pane.state_labels) != presentation
        if update.status_changed and not moved:
            host.publish_status(ref)
        elif update.state_changed:
            host.state_changed.fire()
        return update

    # -- what detection feeds in -----------------------------------------------------------------

    def shell_returned(self, ref: PaneRef) -> None:
        """The pane's shell is back in the foreground: a third-party agent that reported from
        the job that just ended and never released is cleared (the guide's safety net)."""
        if ref.pane.agent_rec.exit_job is None:
            return
        self.apply(ref, agents.abandoned, cause="safety-net")

    def set_detection(self, ref: PaneRef, *, agent: str | None, screen_state: AgentState) -> Update:
        """The seam for process and screen detection: set what Herdr would detect in a pane.

        ``agent`` is the foreground agent's label (None: a plain shell). Dropping a detected
        agent is its process exiting: its authority, name and session are cleared and
        ``pane.agent_detected`` reports ``released``. A detected agent other than the one the
        agent name was given to clears the name (unless a full-lifecycle authority of that
        agent owns the pane, when Herdr ignores detection). A session report held for the
        detected agent is stored, with the report parked for it.
        """
        label = None if agent is None else (agents.known_agent(agent) or agent)

        def detect(rec: AgentRecord) -> bool:
            released = False
            if rec.detected is not None and label != rec.detected:
                released = agents.process_exited(rec)
            if label != rec.detected:
                # a new agent process: its first idle is readiness (unless another just exited)
                rec.acquiring = label is not None and not released
            auth = rec.authority
            ignored = auth is not None and label == auth.agent and rec.screen_detection_skipped()
            rec.detected = label
            rec.screen_state = screen_state if label is not None else "unknown"
            if label is not None and not ignored:
                agents.reconcile_name_owner(rec, label, None)
            agents.replay_parked(rec)  # a report that came before its process may apply now
            return released

        return self.apply(ref, detect, cause="process-exit")
