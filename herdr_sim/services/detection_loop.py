"""The live agent-detection loop: which agent runs in each pane, and what its screen shows.

One :class:`DetectionLoop` per simulator feeds the agent state engine through its seam
(the ``report`` callable it is built with: the runtime's
:meth:`herdr_sim.services.agents.AgentService.set_detection`), the way Herdr's per-pane
detection task does:

* **Process detection** — the pane terminal's foreground process group
  (``PtyProcess.foreground_pgid()``, one ``ioctl``) is compared with the last one seen on
  every tick and shortly after output; only when it changed is the foreground job probed
  through ``/proc`` (:func:`herdr_sim.detection.detect_agent_process`). A new foreground job
  that is not yet an agent is re-probed for a short acquisition window (a shell forks
  before it execs the agent), an identified agent every few seconds. When the pane's
  shell is back in the foreground the agent has exited: the detected label is dropped and
  the engine emits ``pane.agent_detected`` with ``released: true``. A foreground that is
  neither the agent nor the shell clears it only after several misses, like Herdr.
* **Screen detection** — while an agent is detected, its manifest
  (:class:`herdr_sim.detection.ManifestSet`) is evaluated on the pane's detection snapshot
  and OSC title whenever the terminal changed (``Terminal.changes``, debounced after
  output). A full-lifecycle authority (``herdr:pi`` …) freezes the screen state, as in
  Herdr; a working → plain-idle change is held for a short confirmation time (Herdr's
  pending-idle rule) so a half-drawn frame does not flap the status.

The periodic tick scales with the panes that *changed*, not with every pane: it checks only
the panes in its active set — those that printed or were typed into within the last
:data:`QUIET_TICKS` ticks, whose foreground job is still being identified, or that have an
agent (detected now or fed to the engine before). A pane sitting quietly at its shell prompt
leaves the set and costs nothing per tick (no ``ioctl``, no ``/proc``, no screen) until its
next output or input puts it back: a shell changes its foreground job only through input it
echoes or a program that prints, and an agent always draws its screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from herdr_sim.config import SimulatorConfig
from herdr_sim.detection import ManifestSet, detect_agent_process, load_manifests
from herdr_sim.model.agents import AgentState
from herdr_sim.model.session import PaneRef, Session
from herdr_sim.services.pane_process import PaneProcess
from herdr_sim.timers import ACQUIRE_REPROBE, ACQUISITION_WINDOW, RECHECK_IDENTIFIED

__all__ = ["DetectionHost", "DetectionLoop", "DetectionTiming", "Report"]

#: ``report(ref, agent, screen_state)``: what detection now sees in a pane (the agent's
#: label or None for a plain shell, and its screen's state)
Report = Callable[[PaneRef, str | None, AgentState], object]


class DetectionHost(Protocol):
    """What detection reads of the runtime that owns it."""

    config: SimulatorConfig
    session: Session
    processes: dict[int, PaneProcess]
    stopping: bool


log = logging.getLogger(__name__)

#: A pane stays in the tick's active set this many ticks after its last output or input
#: (a fork the debounced check ran too early to see is still caught on a later tick).
QUIET_TICKS = 10
#: Misses before an agent replaced by a non-shell foreground job is dropped (Herdr: 6).
MISS_CONFIRMATIONS = 6


@dataclass(frozen=True)
class DetectionTiming:
    """The loop's intervals in seconds (Herdr's defaults; tests shorten them)."""

    #: the periodic foreground check of every pane (Herdr ticks at 500 ms)
    interval: float = 0.5
    #: how long after output the pane is checked (coalesces a burst of output)
    debounce: float = 0.05
    #: how long a working → plain idle screen must persist (Herdr: 3 × 100 ms, ≤ 700 ms)
    idle_hold: float = 0.3
    #: how long after a foreground change a non-agent job is still re-probed (Herdr: 8 s)
    acquisition_window: float = ACQUISITION_WINDOW
    #: least time between two probes of a job that is not an agent yet (while acquiring)
    acquire_reprobe: float = ACQUIRE_REPROBE
    #: re-probe interval of an identified agent (Herdr: 5 s)
    recheck_identified: float = RECHECK_IDENTIFIED


@dataclass
class _Watch:
    """What the loop last saw in one pane."""

    shell_pid: int
    pgid: int | None = None
    probed: bool = False
    agent: str | None = None
    last_probe: float = 0.0
    acquiring_until: float = 0.0
    misses: int = 0
    changes: int = -1
    title: str | None = None
    #: when a working → plain idle screen was first seen (the pending-idle hold)
    idle_since: float | None = None
    scheduled: bool = False
    #: an agent label was fed to the engine for this pane (so a later "none" must be too)
    fed: bool = False
    #: when the pane last printed or was typed into (``time.monotonic``)
    poked_at: float = 0.0


class DetectionLoop:
    """Process and screen detection for every pane of one runtime."""

    def __init__(
        self,
        rt: DetectionHost,
        manifests: ManifestSet,
        timing: DetectionTiming | None = None,
        *,
        report: Report,
    ) -> None:
        self.rt = rt
        self.report = report
        self.manifests = manifests
        self.timing = timing or DetectionTiming()
        self._watches: dict[int, _Watch] = {}
        #: the panes the periodic tick checks (see the module docstring)
        self._active: set[int] = set()
        #: how many periodic ticks and single-pane checks ran (tests prove an idle tick
        #: checks nothing)
        self.ticks = 0
        self.checks = 0
        self._task: asyncio.Task[None] | None = None
        #: called with the pane when its shell is back in the foreground after another job
        #: (the signal for the guide's "exited without releasing" safety net)
        self.shell_returned: list[Callable[[PaneRef], None]] = []

    @classmethod
    def for_runtime(cls, rt: DetectionHost, report: Report) -> DetectionLoop:
        """A loop configured from the runtime's :class:`~herdr_sim.config.SimulatorConfig`."""
        config = rt.config
        manifests = load_manifests(config.agent_manifests_dir)
        timers = config.timers()  # at the simulator's time scale
        timing = DetectionTiming(
            interval=timers.detection_interval,
            debounce=timers.detection_debounce,
            idle_hold=timers.detection_idle_hold,
            acquisition_window=timers.acquisition_window,
            acquire_reprobe=timers.acquire_reprobe,
            recheck_identified=timers.recheck_identified,
        )
        return cls(rt, manifests, timing, report=report)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the periodic tick on the running event loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="detection")

    async def stop(self) -> None:
        """Stop the tick (idempotent)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.timing.interval)
            try:
                self.tick()
            except Exception:  # a detection bug must not stop detection for every pane
                log.exception("agent detection tick failed")

    @property
    def watching(self) -> int:
        """How many panes the periodic tick checks now (its active set)."""
        return len(self._active)

    @property
    def quiet_after(self) -> float:
        """Seconds without output or input after which a pane at its prompt leaves the
        active set."""
        return QUIET_TICKS * self.timing.interval

    # -- triggers -------------------------------------------------------------------------------

    def poke(self, key: int) -> None:
        """Pane ``key`` produced output: check it after the debounce delay.

        A pane whose foreground job is new (or still being identified) is also checked at
        once, so an agent is known before its integration's first report arrives.
        """
        watch = self._watches.get(key)
        if watch is None:
            proc = self.rt.processes.get(key)
            if proc is None:
                return
            watch = self._watches[key] = _Watch(shell_pid=proc.pty.pid)
        proc = self.rt.processes.get(key)
        now = time.monotonic()
        watch.poked_at = now
        self._active.add(key)
        acquiring = watch.agent is None and now < watch.acquiring_until
        if proc is not None and (acquiring or proc.pty.foreground_pgid() != watch.pgid):
            # a new foreground job printed: identify it before it can report (an agent's
            # integration reports right after its first screen)
            asyncio.get_running_loop().call_soon(self._checked, key)
        if watch.scheduled:
            return
        watch.scheduled = True
        asyncio.get_running_loop().call_later(self.timing.debounce, self._poked, key)

    def _poked(self, key: int) -> None:
        watch = self._watches.get(key)
        if watch is not None:
            watch.scheduled = False
        self._checked(key)

    def _checked(self, key: int) -> None:
        try:
            self.check(key)
        except Exception:
            log.exception("agent detection of pane %s failed", key)

    def typed(self, key: int) -> None:
        """Input was written to pane ``key``: keep it in the active set (the job it starts
        may fork after the echo's debounced check)."""
        watch = self._watches.get(key)
        if watch is not None:
            watch.poked_at = time.monotonic()
            self._active.add(key)

    def tick(self) -> None:
        """The periodic check: the active panes only (see the module docstring); a pane that
        went quiet at its shell prompt leaves the set."""
        self.ticks += 1
        processes = self.rt.processes
        if len(self._watches) > len(processes):  # panes closed since: forget them
            for key in [key for key in self._watches if key not in processes]:
                del self._watches[key]
                self._active.discard(key)
        now = time.monotonic()
        for key in list(self._active):
            self.check(key)
            watch = self._watches.get(key)
            if watch is None or key not in processes or self._settled(watch, now):
                self._active.discard(key)

    def _settled(self, watch: _Watch, now: float) -> bool:
        """Nothing can change in this pane without output or input putting it back."""
        return (
            watch.agent is None
            and not watch.fed
            and watch.idle_since is None
            and now >= watch.acquiring_until
            and now - watch.poked_at >= self.quiet_after
        )

    def scan(self) -> None:
        """Check every live pane once (after a manifest reload, or on demand)."""
        processes = self.rt.processes
        for key in [key for key in self._watches if key not in processes]:
            del self._watches[key]
            self._active.discard(key)
        for key in list(processes):
            self._active.add(key)
            self.check(key)

    def reset(self) -> None:
        """Forget what was seen (after a manifest reload): every pane is re-evaluated."""
        for watch in self._watches.values():
            watch.changes = -1
            watch.probed = False
        self.scan()

    # -- one pane ---------------------------------------------------------------------------------

    def check(self, key: int) -> None:
        """Probe pane ``key`` if its foreground changed, re-read its screen if that changed."""
        rt = self.rt
        self.checks += 1
        proc = rt.processes.get(key)
        if rt.stopping or proc is None or key not in rt.session.panes:
            return
        watch = self._watches.get(key)
        if watch is None or watch.shell_pid != proc.pty.pid:
            watch = self._watches[key] = _Watch(shell_pid=proc.pty.pid)
        now = time.monotonic()
        previous = watch.pgid
        agent = self._process_agent(proc, watch, now)
        # back at the prompt: seen leaving it, or a job that reported ended between two passes
        back_at_shell = watch.pgid == watch.shell_pid and (
            previous not in (None, watch.shell_pid)
            or rt.session.panes[key].agent_rec.exit_job is not None  # a dict lookup: hot path
        )
        if back_at_shell and self.shell_returned:
            for listener in list(self.shell_returned):
                listener(rt.session.locate(key))
        if agent is None and not watch.fed:
            return  # no agent now or before: the common idle case stops here
        ref = rt.session.locate(key)
        rec = ref.pane.agent_rec
        screen: AgentState = rec.screen_state if agent == rec.detected else "unknown"
        if agent is not None and not rec.screen_detection_skipped():
            screen = self._screen_state(key, proc, watch, agent, screen, now)
        if agent != rec.detected or (agent is not None and screen != rec.screen_state):
            self.report(ref, agent, screen)
        watch.fed = agent is not None

    def _process_agent(self, proc: PaneProcess, watch: _Watch, now: float) -> str | None:
        """The pane's foreground agent, probing ``/proc`` only when it may have changed."""
        pgid = proc.pty.foreground_pgid()
        shell = watch.shell_pid
        changed = pgid != watch.pgid or not watch.probed
        if changed:
            watch.pgid = pgid
            acquiring = pgid not in (None, shell)
            watch.acquiring_until = now + self.timing.acquisition_window if acquiring else 0.0
        elif watch.agent is None:
            acquiring = now < watch.acquiring_until
            if not acquiring or now - watch.last_probe < self.timing.acquire_reprobe:
                return None
        elif now - watch.last_probe < self.timing.recheck_identified:
            return watch.agent
        watch.last_probe, watch.probed = now, True
        found = detect_agent_process(pgid, shell) if pgid is not None else None
        if found is not None:
            watch.agent, watch.misses = found.agent, 0
        elif watch.agent is not None:
            watch.misses += 1
            if pgid in (None, shell) or watch.misses >= MISS_CONFIRMATIONS:
                watch.agent, watch.misses = None, 0
        return watch.agent

    def _screen_state(
        self,
        key: int,
        proc: PaneProcess,
        watch: _Watch,
        agent: str,
        current: AgentState,
        now: float,
    ) -> AgentState:
        """The state the agent's screen shows (``current`` while nothing new is visible)."""
        terminal = proc.terminal
        title = terminal.title
        fresh = terminal.changes != watch.changes or title != watch.title
        if not fresh and watch.idle_since is None and current != "unknown":
            return current
        watch.changes, watch.title = terminal.changes, title
        text, _ = terminal.read("detection")
        detection = self.manifests.detect(agent, text, osc_title=title or "")
        if detection.skip_state_update:
            return current
        state: AgentState = detection.state  # type: ignore[assignment]
        plain_idle = state == "idle" and not (detection.visible_idle or detection.visible_blocker)
        if current == "working" and plain_idle:
            if watch.idle_since is None:
                watch.idle_since = now
            left = watch.idle_since + self.timing.idle_hold - now
            if left > 0:
                asyncio.get_running_loop().call_later(left, self._poked, key)
                return current
        watch.idle_since = None
        return state
