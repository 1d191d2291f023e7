"""The live side of a simulator: the model plus processes, terminals, events and faults.

Handlers receive a :class:`Runtime`. It owns the services that keep live state — the agent
engine (``rt.agents``, :mod:`herdr_sim.services.agents`), the detection loop, metadata and
the session file — and hands each of them only itself, seen through a small protocol, so
none of them imports this module (or a handler). Everything here runs on the simulator's
event loop thread; the model is only touched from that thread, so no locks are needed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from herdr_sim.config import SimulatorConfig
from herdr_sim.faults import FaultPlan
from herdr_sim.host import places
from herdr_sim.host.pane_marks import MARK_VARIABLE, PaneMarks
from herdr_sim.host.procfs import cwd_of, proc_info
from herdr_sim.host.pty import PtyProcess
from herdr_sim.host.shell import ShellConfig, pane_command, pane_env
from herdr_sim.model.agents import is_agent
from herdr_sim.model.geometry import terminal_area
from herdr_sim.model.session import PaneRef, Session, Tab, Workspace
from herdr_sim.persist import session as persist
from herdr_sim.persist.cli_refusals import FILE_NAME as REFUSALS_FILE
from herdr_sim.persist.cli_refusals import REFUSALS_VARIABLE
from herdr_sim.persist.session_saver import SessionSaver
from herdr_sim.services import lifecycle
from herdr_sim.services.agents import AgentService
from herdr_sim.services.detection_loop import DetectionLoop
from herdr_sim.services.pane_process import PaneProcess
from herdr_sim.services.pane_views import PaneViews
from herdr_sim.terminal import Terminal
from herdr_sim.timers import TIME_SCALE_ENV
from herdr_sim.wire import errors
from herdr_sim.wire.views import (
    agent_info,
    layout_view,
    pane_info,
    public_status,
    strip_title,
    tab_info,
    workspace_info,
)

from .agent_home import default_agent_home, pane_base_env
from .events import EventHub, Signal
from .metadata import MetaStore

__all__ = ["Notification", "PaneProcess", "Runtime"]

log = logging.getLogger(__name__)


@dataclass
class Notification:
    """One ``notification.show`` call, kept so tests can assert on it."""

    title: str
    body: str | None
    position: str | None
    sound: str
    shown: bool
    reason: str


class Runtime:
    """State and services shared by all handlers of one simulator."""

    #: how many ``notification.show`` requests are remembered (the most recent); a server
    #: up for days must not grow with its traffic
    NOTIFICATIONS_KEPT = 1000

    def __init__(self, config: SimulatorConfig, socket_path: Path, runtime_dir: Path) -> None:
        self.config = config
        self.socket_path = socket_path
        self.runtime_dir = runtime_dir
        self.cli_dir = runtime_dir / "bin"
        self.session = Session()
        self.hub = EventHub()
        self.faults = FaultPlan()
        self.processes: dict[int, PaneProcess] = {}
        self.notifications: deque[Notification] = deque(maxlen=self.NOTIFICATIONS_KEPT)
        #: the outer-window title set by ``client.window_title.set`` for a client to come
        self.window_title: str | None = None
        #: the agent panel's transient view (``agent.view.set``), for a client to come
        self.agent_view_override: dict[str, Any] | None = None
        #: pane graphics layers (pane key, layer id) → their inline bytes (methods/pane_graphics.py)
        self.graphics: dict[tuple[int, str], int] = {}
        self.stopping = False
        self.stopped = asyncio.Event()
        #: what an output subscription's read depends on besides the pane's output
        #: (:mod:`.pane_views`): its ``changed`` fires only when that moved
        self.pane_views = PaneViews(self.session, self.processes)
        self.state_changed = Signal(before=self.pane_views.note)
        #: Herdr's ``last_focus``: the active workspace's index and its focused pane (by
        #: identity, not public id), so a move that shifts the index re-emits focus events
        self._focus_pair: tuple[int, int] | None = None
        self._shell = ShellConfig(shell=config.shell, user_shell=config.user_shell)
        self.area = terminal_area(config.cols, config.rows)
        self.meta: dict[tuple[str, int], MetaStore] = {}
        # agent detection and the fake agents' PATH dir (see start_detection)
        self.fake_bin: Path | None = runtime_dir / "fake-bin" if config.fake_agents else None
        #: the panes' sandbox HOME while the fakes are on, else None (the server's HOME)
        self.agent_home: Path | None = (
            (config.agent_home or default_agent_home(socket_path)) if config.fake_agents else None
        )
        self.detection: DetectionLoop | None = None
        self.session_path = persist.session_file(socket_path) if config.persist else None
        #: the mark every pane process inherits, so none outlives its pane (pane_marks.py)
        self.marks = PaneMarks(socket_path)
        self._save_scheduled = False
        #: writes the session off the loop, in order (session_saver.py)
        self._saver = (
            SessionSaver(self.session_path, self._snapshot)
            if self.session_path is not None
            else None
        )
        #: the agent engine's live side: launches, detection reports, every agent change
        self.agents = AgentService(self)

    # -- wire views ---------------------------------------------------------------------------

    def _live(self, ref: PaneRef) -> dict[str, str | None]:
        """What only the running process knows: the shell's cwd (from /proc), the foreground
        job's cwd when a job other than the shell runs, and the terminal title."""
        proc = self.processes.get(ref.pane.key)
        live: dict[str, str | None] = {
            "cwd": ref.pane.cwd,
            "foreground_cwd": None,
            "terminal_title": None,
        }
        if proc is not None:
            live["cwd"] = cwd_of(proc.pty.pid) or ref.pane.cwd
            pgid = proc.pty.foreground_pgid()
            if pgid is not None and pgid != proc.pty.pid:
                live["foreground_cwd"] = cwd_of(pgid)
            live["terminal_title"] = proc.terminal.title
        return live

    def pane_view(self, ref: PaneRef) -> dict[str, Any]:
        """PaneInfo with the live cwd, terminal title and scroll metrics."""
        proc = self.processes.get(ref.pane.key)
        scroll = None if proc is None else proc.terminal.scroll_metrics().view()
        return pane_info(self.session, ref, **self._live(ref), scroll=scroll)

    def agent_view(self, ref: PaneRef) -> dict[str, Any]:
        """AgentInfo with the live cwd and terminal title (only for agent panes, §5.2)."""
        return agent_info(self.session, ref, **self._live(ref))

    def agent_panes(self) -> list[PaneRef]:
        """Every pane hosting an agent (a name or an effective agent label), in order."""
        return [ref for ref in self.session.all_panes() if is_agent(ref.pane.agent_rec)]

    def workspace_view(self, ws: Workspace) -> dict[str, Any]:
        """WorkspaceInfo, its automatic label following the root pane's current cwd."""
        self.refresh_auto_label(ws)
        return workspace_info(self.session, ws)

    def refresh_auto_label(self, ws: Workspace) -> None:
        """Herdr's automatic label is that of the first tab's root pane's current cwd
        (``src/workspace.rs`` ``display_name_from``, ``resolved_identity_cwd_from``), so a
        ``cd /var`` in it makes the label ``var``. The root pane is the first of the tab's
        layout here."""
        if not ws.tabs or ws.label is not None:
            return
        panes = ws.tabs[0].layout.panes()
        if not panes or panes[0] not in self.session.panes:
            return
        live = self.live_cwd(PaneRef(ws, ws.tabs[0], self.session.panes[panes[0]]))
        if live and live != (ws.auto_label_for or ws.identity_cwd):
            ws.auto_label = self.auto_label(live)
            ws.auto_label_for = live

    def tab_view(self, ws: Workspace, tab: Tab) -> dict[str, Any]:
        """TabInfo."""
        return tab_info(self.session, ws, tab)

    def layout_view(self, ws: Workspace, tab: Tab) -> dict[str, Any]:
        """PaneLayoutSnapshot."""
        return layout_view(self.session, ws, tab, self.area)

    # -- target resolution (Herdr's error codes and messages) ----------------------------------

    def workspace(self, text: str) -> Workspace:
        """Resolve a workspace id or raise ``workspace_not_found``."""
        ws = self.session.find_workspace(text)
        if ws is None:
            raise errors.workspace_not_found(text)
        return ws

    def tab(self, text: str) -> tuple[Workspace, Tab]:
        """Resolve a tab id or raise ``tab_not_found``."""
        found = self.session.find_tab(text)
        if found is None:
            raise errors.tab_not_found(text)
        return found

    def pane(self, text: str) -> PaneRef:
        """Resolve a direct pane target or raise ``pane_not_found`` naming it."""
        ref = self.session.find_pane(text)
        if ref is None:
            raise errors.pane_not_found(text)
        return ref

    def optional_pane(self, text: str | None) -> PaneRef:
        """An optional target: given → that pane; omitted → the focused pane."""
        ref = self.session.find_pane(text) if text is not None else self.session.focused_pane()
        if ref is None:
            raise errors.pane_not_found()
        return ref

    def process(self, ref: PaneRef) -> PaneProcess:
        """The live process of a pane (every pane has one while it is in the model)."""
        proc = self.processes.get(ref.pane.key)
        if proc is None:
            raise errors.HerdrError(errors.PANE_SEND_FAILED, "pane has no live terminal")
        return proc

    # -- processes -----------------------------------------------------------------------------

    def default_cwd(self) -> str:
        """Herdr's ``follow`` policy: the focused pane's cwd, else HOME."""
        focused = self.session.focused_pane()
        if focused is not None:
            return self.live_cwd(focused)
        return places.home_of(self.config.base_env)

    def auto_label(self, cwd: str) -> str:
        """Herdr's automatic workspace label (git repo, ``~``, basename) for this server."""
        return places.auto_label(cwd, places.home_of(self.config.base_env))

    def launch_dir(self, cwd: str, env: Mapping[str, str]) -> str:
        """Where a new pane's shell starts: ``cwd`` if it exists, else HOME."""
        return places.launch_dir(cwd, env, self.config.base_env)

    def focused_cwd(self, ws: Workspace) -> str:
        """The live cwd of a workspace's focused pane (the ``follow`` policy's source)."""
        tab = ws.tabs[ws.active_tab]
        return self.live_cwd(PaneRef(ws, tab, self.session.panes[tab.layout.focused]))

    def live_cwd(self, ref: PaneRef) -> str:
        """The pane shell's current directory (from /proc), else its launch cwd."""
        proc = self.processes.get(ref.pane.key)
        live = cwd_of(proc.pty.pid) if proc is not None else None
        return live or ref.pane.cwd

    def spawn(self, ref: PaneRef, env: Mapping[str, str]) -> None:
        """Start the pane's shell in a fresh pty sized to its layout rect."""
        cols, rows = ref.tab.layout.content_size(ref.pane.key, self.area)
        herdr_env = {
            "HERDR_ENV": "1",
            "HERDR_SOCKET_PATH": str(self.socket_path),
            "HERDR_BIN_PATH": str(self.cli_dir / "herdr"),
            "HERDR_WORKSPACE_ID": ref.workspace.public_id,
            "HERDR_TAB_ID": ref.tab_id,
            "HERDR_PANE_ID": ref.pane_id,
        }
        full_env = pane_env(
            base=self.pane_base_env(),
            caller_env=env,
            herdr_env=herdr_env,
            cli_dir=self.cli_dir,
            deterministic=self.config.shell is None and not self.config.user_shell,
            herdr_version=self.config.version,
        )
        full_env["PATH"] = self.with_fake_agents(full_env.get("PATH", ""))
        full_env[MARK_VARIABLE] = self.marks.value(ref.pane.key)
        # what the simulator's CLI refuses before the socket is recorded there (cli_refusals)
        full_env[REFUSALS_VARIABLE] = str(self.runtime_dir / REFUSALS_FILE)
        if self.config.time_scale != 1:  # the fake agents scale their scripted delays by it
            full_env[TIME_SCALE_ENV] = repr(float(self.config.time_scale))
        argv = ref.pane.launch_argv or pane_command(self._shell, self.runtime_dir)
        pty = PtyProcess.spawn(
            argv,
            cwd=ref.pane.cwd,
            env=full_env,
            cols=max(cols, 2),
            rows=max(rows, 1),
            adopt_orphans=self.config.adopt_orphans,
        )
        pty.mark = self.marks.entry(ref.pane.key)
        self.marks.all_adopted = self.marks.all_adopted and pty.adopted
        terminal = Terminal(
            max(cols, 2), max(rows, 1), scrollback=self.config.scrollback, reply=pty.write
        )
        proc = PaneProcess(pty, terminal)
        key = ref.pane.key

        def on_output(data: bytes) -> None:
            title = terminal.title
            terminal.feed(data)
            if terminal.title != title:
                self._title_changed(key, title, terminal.title)
            proc.output.fire()
            if self.detection is not None:
                self.detection.poke(key)

        def on_exit(_code: int | None) -> None:
            asyncio.get_running_loop().create_task(self._pane_died(key))

        pty.attach(asyncio.get_running_loop(), on_output, on_exit)
        self.processes[key] = proc

    def _title_changed(self, key: int, before: str | None, after: str | None) -> None:
        """OSC 0/2 changed the title: when the stripped title changed, the pane's
        ``revision`` goes up and ``pane_updated`` is emitted (Herdr's
        ``set_terminal_title`` in ``src/terminal/state.rs`` and ``sync_terminal_titles`` in
        ``src/app/terminal_titles.rs``; a spinner frame alone changes nothing)."""
        if strip_title(before) == strip_title(after) or key not in self.session.panes:
            return
        ref = self.session.locate(key)
        ref.pane.revision += 1
        self.hub.publish(lifecycle.pane_updated(self.pane_view(ref)))

    async def _pane_died(self, key: int) -> None:
        """A pane's shell exited: ``pane_exited``, then the pane leaves its tab.

        As in Herdr (``src/app/api.rs``, test ``pane_exit_emits_layout_updated_when_tab_survives``;
        ``handle_pane_died`` in ``src/app/actions.rs``): ``layout_updated`` follows when
        the tab keeps other panes; an emptied tab or workspace is removed without
        ``pane_closed``, ``tab_closed`` or ``workspace_closed``.
        """
        proc = self.processes.pop(key, None)
        if proc is not None:
            proc.output.fire()
            await proc.pty.terminate()
        if key not in self.session.panes or self.stopping:
            return
        ref = self.session.locate(key)
        ref.pane.exited = True
        ws, tab = ref.workspace, ref.tab
        self.hub.publish(lifecycle.pane_exited(ref.pane_id, ws.public_id))
        if self.session.close_pane(ref) == "pane":
            self.publish_layout(ws, tab)
        self.after_request()

    async def reap(self, keys: list[int]) -> None:
        """End the process trees of panes that left the model, and drop their metadata
        (and that of workspaces that went with them: numbers are never reused, so a closed
        one's store would only grow the server)."""
        self._forget_meta(keys)
        procs = [self.processes.pop(key) for key in keys if key in self.processes]
        for proc in procs:
            proc.output.fire()
        await asyncio.gather(*(proc.pty.terminate() for proc in procs))

    def resize_tab(self, ws: Workspace, tab: Tab) -> None:
        """Give every pty of a tab its layout size (the kernel sends SIGWINCH)."""
        for key, (cols, rows) in tab.layout.content_sizes(self.area).items():
            proc = self.processes.get(key)
            if proc is None:
                continue
            cols, rows = max(cols, 2), max(rows, 1)
            if (cols, rows) != (proc.terminal.cols, proc.terminal.rows):
                proc.pty.resize(cols, rows)
                proc.terminal.resize(cols, rows)

    # -- shared mutations ------------------------------------------------------------------------

    async def remove_pane(self, ref: PaneRef) -> None:
        """Close a pane with Herdr's events: a last pane takes its tab or workspace with it."""
        ws, tab = ref.workspace, ref.tab
        pane_id, ws_id = ref.pane_id, ws.public_id
        ws_view = self.workspace_view(ws)
        outcome = self.session.close_pane(ref)
        self.hub.publish(lifecycle.pane_closed(pane_id, ws_id))
        if outcome == "workspace":
            self.hub.publish(lifecycle.workspace_closed(ws_id, ws_view))
        elif outcome == "pane":
            self.resize_tab(ws, tab)
            self.hub.publish(lifecycle.layout_updated(self.layout_view(ws, tab)))
        await self.reap([ref.pane.key])

    def publish_layout(self, ws: Workspace, tab: Tab) -> None:
        """Resize the tab's ptys and emit ``layout_updated``."""
        self.resize_tab(ws, tab)
        self.hub.publish(lifecycle.layout_updated(self.layout_view(ws, tab)))

    def _focus_key(self) -> tuple[int, int] | None:
        """Herdr's ``last_focus`` key (``src/app/api.rs`` ``sync_focus_events``): the active
        workspace's index and its focused pane."""
        focused = self.session.focused_pane()
        if focused is None:
            return None
        return self.session.workspaces.index(focused.workspace), focused.pane.key

    def after_request(self) -> None:
        """Herdr's focus-event check (§6.4): emit the focus triple when the focus key moved
        (another pane, or the active workspace at another index: ``workspace.move``)."""
        focused = self.session.focused_pane()
        pair = self._focus_key()
        if pair != self._focus_pair and focused is not None:
            ws_id = focused.workspace.public_id
            self.hub.publish(lifecycle.workspace_focused(ws_id))
            self.hub.publish(lifecycle.tab_focused(focused.tab_id, ws_id))
            self.hub.publish(lifecycle.pane_focused(focused.pane_id, ws_id))
        self._focus_pair = pair
        self.state_changed.fire()
        self.schedule_save()

    # -- persistence ---------------------------------------------------------------------------

    def schedule_save(self) -> None:
        """Save the session soon; requests in the same loop turn share one write."""
        if self.session_path is None or self._save_scheduled or self.stopping:
            return
        self._save_scheduled = True
        asyncio.get_running_loop().call_soon(self._save)

    def _save(self) -> None:
        self._save_scheduled = False
        if self._saver is not None:
            self._saver.request()

    async def session_saved(self) -> None:
        """Return once the changes made so far are in the session file (the loop serves
        others meanwhile): a mutating request is answered after its change is saved."""
        if self._save_scheduled:
            self._save()  # the save this loop turn would make, made now
        if self._saver is not None:
            await self._saver.saved()

    def _snapshot(self) -> dict[str, Any]:
        """The session as saved, live cwds included (taken on the loop, written off it)."""
        cwd_of = {ref.pane.key: self.live_cwd(ref) for ref in self.session.all_panes()}
        return persist.to_herdr(persist.snapshot(self.session, cwd_of, self.agents.launches.saved))

    def restore(self) -> int:
        """Restore a saved session (if any): same ids, new terminals, resume commands run.

        Returns the number of panes restored.
        """
        if self.session_path is None:
            return 0
        data = persist.load(self.session_path)
        if data is None:
            return 0
        restored = persist.restore(
            self.session, data, resume_agents=self.config.resume_agents_on_restore
        )
        self.agents.launches.adopt_restored(restored.managed)
        resumes = restored.resumes
        for key, resume in resumes:
            ref = self.session.locate(key)
            ref.pane.cwd = self.launch_dir(ref.pane.cwd, {})
            self.spawn(ref, {})
            if resume is not None:
                # Typed into the new shell like a user would; the shell runs it at its prompt.
                self.processes[key].pty.write(shlex.join(resume).encode() + b"\r")
        for ws in self.session.workspaces:
            for tab in ws.tabs:
                self.resize_tab(ws, tab)
        self._focus_pair = self._focus_key()
        return len(resumes)

    def _forget_meta(self, pane_keys: list[int]) -> None:
        """Drop the metadata stores of closed panes and of workspaces no longer open."""
        for key in pane_keys:
            self.meta.pop(("pane", key), None)
        open_numbers = {ws.number for ws in self.session.workspaces}
        for kind, number in list(self.meta):
            if kind == "ws" and number not in open_numbers:
                del self.meta[(kind, number)]

    def meta_for(self, key: tuple[str, int]) -> MetaStore:
        """The metadata store of a pane ``("pane", key)`` or workspace ``("ws", number)``."""
        return self.meta.setdefault(key, MetaStore())

    def status_change(self, ref: PaneRef) -> lifecycle.Event:
        """A ``pane_agent_status_changed`` event for the pane as it is now."""
        pane = ref.pane
        return lifecycle.pane_agent_status_changed(
            ref.pane_id,
            ref.workspace.public_id,
            public_status(pane),
            agent=pane.agent,
            title=pane.title,
            display_agent=pane.display_agent,
            state_labels=pane.state_labels,
        )

    def status_event(self, ref: PaneRef) -> dict[str, Any]:
        """The data of a ``pane_agent_status_changed`` event for the pane as it is now."""
        return self.status_change(ref).data

    def publish_status(self, ref: PaneRef) -> None:
        """Emit ``pane_agent_status_changed`` (status or presentation changed)."""
        self.hub.publish(self.status_change(ref))
        self.state_changed.fire()

    def status_of(self, ref: PaneRef) -> str:
        """The pane's public agent status."""
        return public_status(ref.pane)

    async def shutdown(self) -> None:
        """Save the session one last time (live cwds included), then end every pane's
        process tree (server stop). Herdr 0.9.2 also saves the layout before shutdown."""
        if self._saver is not None:
            # the last state written after every earlier one, and waited for: a change
            # made just before the stop is saved (with no pane left, a failed restore
            # must not overwrite the saved session with nothing)
            await self._saver.close(final=bool(self.processes) or self._save_scheduled)
        await self.reap(list(self.processes))
        # Whatever escaped its pane's end (started while the pane was being ended), then
        # the registry a SIGKILLed server would have left for the next start.
        await asyncio.to_thread(self.marks.end_escaped)
        self.marks.unregister()

    # -- agent detection and fake agents (herdr_sim/services/detection_loop.py) ----------------

    def agent_job(self, ref: PaneRef) -> int | None:
        """The pane's foreground job when an agent reports from it, or None when the report
        came from the prompt itself (the shell, or a ``herdr`` command typed at it)."""
        proc = self.processes.get(ref.pane.key)
        if proc is None:
            return None
        pgid = proc.pty.foreground_pgid()
        if pgid is None or pgid == proc.pty.pid:
            return None
        leader = proc_info(pgid)
        if leader is None or leader.name == "herdr":
            return None
        return pgid

    def pane_of_process(self, pid: int) -> str | None:
        """The pane whose process tree ``pid`` belongs to (its shell's session, or the
        shell among its ancestors), or None: how a request is attributed to the pane whose
        process sent it (:data:`herdr_sim.wire.request_context.current_peer_pid`). Reads ``/proc``:
        a process that is gone is attributed to no pane."""
        shells = {proc.pty.pid: key for key, proc in self.processes.items()}
        own = os.getpid()  # the simulator's process is no pane's (nor are its clients)
        info, seen = (proc_info(pid) if pid != own else None), set()
        while info is not None and info.pid not in seen and info.pid != own:
            key = shells.get(info.sid)
            key = shells.get(info.pid) if key is None else key
            if key is not None and key in self.session.panes:
                return self.session.locate(key).pane_id
            seen.add(info.pid)
            info = proc_info(info.ppid) if info.ppid > 1 else None
        return None

    def start_detection(self) -> None:
        """Start the agent-detection loop (at boot, before any pane is restored)."""
        agents = self.agents
        self.detection = DetectionLoop.for_runtime(
            self,
            lambda ref, agent, screen: agents.set_detection(ref, agent=agent, screen_state=screen),
        )
        self.detection.shell_returned.append(agents.shell_returned)
        self.detection.start()

    def pane_base_env(self) -> dict[str, str]:
        """The server environment every pane inherits (HOME the sandbox while the fakes
        are on: herdr_sim/services/agent_home.py)."""
        return pane_base_env(self.config.base_env, self.agent_home)

    def with_fake_agents(self, path: str) -> str:
        """A pane's PATH with the fake agents' dir right after the simulator's ``herdr`` dir."""
        if self.fake_bin is None:
            return path
        entries = [entry for entry in path.split(os.pathsep) if entry != str(self.fake_bin)]
        at = entries.index(str(self.cli_dir)) + 1 if str(self.cli_dir) in entries else 0
        entries.insert(at, str(self.fake_bin))
        return os.pathsep.join(entries)
