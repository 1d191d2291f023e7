"""``agent.start`` and Herdr's managed launch phases (reference §5.6, §17.6).

``agent.start`` checks its request in Herdr's order (name grammar, kind, argument control
characters, name taken, exact pane id, pane busy or without a terminal, timeout bounds),
names the pane, types the agent's command line — quoted for the pane's shell — and
answers at once with ``launch_pending: true``. The launch then moves through Herdr's
phases (``reconcile_managed_agent_at``), re-evaluated on every agent state change of the
pane, at the settle delay and deadline, and on ``agent.get``:

* **pending** → **active** (``interactive_ready``) once the settle delay has passed and
  the expected agent is detected and idle;
* **pending** → **blocked** (still ``launch_pending``) when the expected agent shows a
  blocked state; **blocked** → **active** when it is idle again;
* the name is cleared (the launch fails) when another agent kind is detected, the
  expected agent was seen and disappeared, or the deadline passes while pending.

The settle delay is ``SimulatorConfig.agent_start_settle`` (Herdr: 3 s) so test suites can
run fast; the timeout bounds stay Herdr's (3000 < ``timeout_ms`` ≤ 300000).

Session persistence reads the book (:func:`herdr_sim.persist.track_managed`): the name and
kind of a launch that is no longer pending are saved, and a managed agent a restore brought
back is taken over as an *active* launch (Herdr's ``restore_managed_agent``).
"""

from __future__ import annotations

import asyncio
import re
import weakref
from dataclasses import dataclass
from typing import Any, Literal

from .. import persist
from ..detect.process import foreground_job
from ..errors import HerdrError
from ..events import Envelope
from ..model.agents import effective, is_agent, known_agent
from ..model.session import PaneRef
from ..params import F, ListOf, Obj, Str
from ..protocol import (
    AGENT_NAME_PATTERN,
    INVALID_AGENT_NAME_MESSAGE,
    interactive_executable,
    parse_agent_label,
)
from ..registry import method
from ..runtime import PaneProcess, Runtime
from .specs import OPT_U64, REQ_STR

Phase = Literal["pending", "blocked", "active"]
Outcome = Literal["same", "changed", "clear"]

INVALID_AGENT_NAME = "invalid_agent_name"
AGENT_NAME_TAKEN = "agent_name_taken"
NAME = re.compile(AGENT_NAME_PATTERN)

#: Herdr's startup timeout default and bounds, in milliseconds (the lower bound is Herdr's
#: 3 s settle delay, whatever settle delay the simulator is configured with)
DEFAULT_TIMEOUT_MS = 30_000
MIN_TIMEOUT_MS = 3_000
MAX_TIMEOUT_MS = 300_000
INVALID_TIMEOUT_MESSAGE = "agent start timeout must be greater than 3000ms and at most 300000ms"

#: Herdr's ``is_pane_shell_process_name``
SHELL_NAMES = frozenset(
    ("sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "csh", "tcsh", "elvish", "xonsh", "nu",
     "pwsh", "powershell", "cmd")
)  # fmt: skip
_POSIX_BARE = re.compile(r"[A-Za-z0-9@%_+=:,./-]+")
_POWERSHELL_BARE = re.compile(r"[A-Za-z0-9_./:+=-]+")
_BRACKET_OPEN = b"\x1b[200~"
_BRACKET_CLOSE = b"\x1b[201~"


# -- names and candidates (shared with agent.rename) -------------------------------------------


def candidates(rt: Runtime, refs: list[PaneRef]) -> str:
    """Herdr's candidate list (statuses in Rust ``Debug`` form: ``Idle``, ``Working`` …)."""
    return "; ".join(
        f"terminal_id={ref.pane.terminal_id} pane_id={ref.pane_id} "
        f"workspace_id={ref.workspace.public_id} tab_id={ref.tab_id} "
        f"cwd={rt.live_cwd(ref) or 'unknown'} status={rt.status_of(ref).capitalize()}"
        for ref in refs
    )


def check_name(name: str) -> None:
    """``invalid_agent_name`` unless ``name`` is 1–32 of ``[a-z][a-z0-9_-]*``."""
    if NAME.fullmatch(name) is None:
        raise HerdrError(INVALID_AGENT_NAME, INVALID_AGENT_NAME_MESSAGE)


def check_name_free(rt: Runtime, name: str, except_key: int | None = None) -> None:
    """``agent_name_taken`` when another agent pane already has ``name``."""
    taken = [
        ref
        for ref in rt.session.all_panes()
        if ref.pane.agent_rec.name == name and ref.pane.key != except_key
    ]
    if taken:
        raise HerdrError(
            AGENT_NAME_TAKEN,
            f"agent name {name} is already used; candidates: {candidates(rt, taken)}",
        )


# -- the phase machine (pure) -------------------------------------------------------------------


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


# -- the live side: one book of launches per runtime ---------------------------------------------


class LaunchBook:
    """The managed launches of one runtime, by pane key, and what drives their phases."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.launches: dict[int, ManagedLaunch] = {}
        self._timers: dict[int, asyncio.TimerHandle] = {}
        self._queued = False
        rt.hub.add_listener(self._on_event)
        for key, (name, kind) in persist.take_restored_managed(rt.session).items():
            # restored as Herdr restores a managed agent: named, active, no startup times
            self.launches[key] = ManagedLaunch(
                name=name, kind=kind, deadline=0.0, ready_after=None, phase="active"
            )
        persist.track_managed(rt.session, self._saved)

    def _saved(self, key: int) -> tuple[str, bool] | None:
        """What the session file records of a pane's launch: its kind and whether it is
        still pending (None: no live launch)."""
        launch = self.launches.get(key)
        pane = self.rt.session.panes.get(key)
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
            ready_after=now + self.rt.config.agent_start_settle,
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
        rt = self.rt
        label, state = effective(ref.pane.agent_rec)
        outcome = reconcile(launch, label, state, asyncio.get_running_loop().time())
        if outcome == "clear":
            before = rt.agent_before(ref)
            ref.pane.agent_rec.name = None
            self.drop(ref.pane.key)
            rt.agent_commit(ref, before)  # the name changed: pane.updated
        elif outcome == "changed":
            self._arm(ref.pane.key, launch)
            if announce:
                rt.hub.publish("pane_updated", {"pane": rt.pane_view(ref)})
            rt.state_changed.fire()
        else:
            return
        rt.schedule_save()

    def reconcile_all(self, *, announce: bool) -> None:
        """Re-evaluate every launch (a pane gone from the model loses its launch)."""
        self._queued = False
        rt = self.rt
        if rt.stopping:
            return
        for key in list(self.launches):
            if key not in rt.session.panes:
                self.drop(key)
                continue
            self.reconcile(rt.session.locate(key), announce=announce)

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
        rt = self.rt
        if rt.stopping or key not in rt.session.panes:
            self.drop(key)
            return
        self.reconcile(rt.session.locate(key), announce=True)


_BOOKS: weakref.WeakKeyDictionary[Runtime, LaunchBook] = weakref.WeakKeyDictionary()


def book(rt: Runtime) -> LaunchBook:
    """The runtime's launch book (created on first use)."""
    found = _BOOKS.get(rt)
    if found is None:
        found = _BOOKS[rt] = LaunchBook(rt)
    return found


def launch_of(rt: Runtime, ref: PaneRef) -> ManagedLaunch | None:
    """The pane's live managed launch, if any (restored managed agents included)."""
    found = _BOOKS.get(rt)
    if found is None and persist.has_restored_managed(rt.session):
        found = book(rt)
    return None if found is None else found.get(ref)


def agent_view(rt: Runtime, ref: PaneRef) -> dict[str, Any]:
    """AgentInfo with the managed-launch fields (``launch_pending``, ``interactive_ready``
    in Herdr's place, just before ``state_change_seq``; omitted when false)."""
    info = rt.agent_view(ref)
    launch = launch_of(rt, ref)
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


# -- the command line ---------------------------------------------------------------------------


def _normalized_process_name(name: str) -> str:
    base = re.split(r"[/\\]", name)[-1].lstrip("-")
    return base.removesuffix(".exe").lower()


def available_shell(proc: PaneProcess) -> str | None:
    """The pane shell's name when it is alone in the foreground (Herdr's
    ``available_pane_shell``), else None: a program is running in the pane."""
    shell_pid = proc.pty.pid
    job = foreground_job(shell_pid, proc.pty.foreground_pgid())
    if job is None or job.process_group_id != shell_pid:
        return None
    if any(process.pid != shell_pid for process in job.processes):
        return None
    for process in job.processes:
        name = _normalized_process_name(process.name)
        if name in SHELL_NAMES:
            return name
    return None


def quote_posix(arg: str) -> str:
    """Bare when only ``[A-Za-z0-9@%_+=:,./-]``, else single-quoted (``'`` as ``'\\''``)."""
    if _POSIX_BARE.fullmatch(arg):
        return arg
    return "'" + arg.replace("'", "'\\''") + "'"


def quote_powershell(arg: str) -> str:
    """PowerShell: bare when only ``[A-Za-z0-9_./:+=-]``, else single-quoted (``''``)."""
    if _POWERSHELL_BARE.fullmatch(arg):
        return arg
    return "'" + arg.replace("'", "''") + "'"


def command_line(argv: list[str], shell: str) -> str:
    """``argv`` quoted for the pane's shell."""
    quote = quote_powershell if shell in ("pwsh", "powershell") else quote_posix
    return " ".join(quote(arg) for arg in argv)


def _control(text: str) -> bool:
    """Rust's ``char::is_control`` (Unicode category Cc)."""
    return any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in text)


# -- the method ------------------------------------------------------------------------------------


def _exact_pane(rt: Runtime, pane_id: str) -> PaneRef:
    for ref in rt.session.all_panes():
        if ref.pane_id == pane_id:
            return ref
    raise HerdrError("agent_pane_not_found", f"agent target pane {pane_id} not found")


def _busy(pane_id: str) -> HerdrError:
    return HerdrError("agent_pane_busy", f"agent target pane {pane_id} is not an available shell")


@method(
    "agent.start",
    Obj(
        fields={
            "name": REQ_STR,
            "kind": REQ_STR,
            "pane_id": REQ_STR,
            "args": F(ListOf(Str()), default=list),
            "timeout_ms": OPT_U64,
        }
    ),
    result="agent_started",
)
async def start(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Launch an agent of ``kind`` in an idle shell pane under ``name`` (reference §5.6)."""
    name, pane_id, args = p["name"], p["pane_id"], p["args"]
    check_name(name)
    kind = parse_agent_label(p["kind"])
    if kind is None:
        raise HerdrError(
            "unsupported_agent_kind", f"unsupported interactive agent kind {p['kind']}"
        )
    if any(_control(arg) for arg in args):
        raise _bad_argument()
    check_name_free(rt, name)
    ref = _exact_pane(rt, pane_id)
    if is_agent(ref.pane.agent_rec) or launch_of(rt, ref) is not None:
        raise _busy(pane_id)
    proc = rt.processes.get(ref.pane.key)
    if proc is None:
        raise HerdrError(
            "agent_pane_unavailable", f"agent target pane {pane_id} has no live terminal"
        )
    shell = available_shell(proc)
    if shell is None:
        raise _busy(pane_id)
    argv = [interactive_executable(kind), *args]
    data = command_line(argv, shell).encode("utf-8", "surrogatepass")
    if proc.terminal.bracketed_paste:
        data = _BRACKET_OPEN + data + _BRACKET_CLOSE
    timeout_ms = p["timeout_ms"] if p["timeout_ms"] is not None else DEFAULT_TIMEOUT_MS
    if not MIN_TIMEOUT_MS < timeout_ms <= MAX_TIMEOUT_MS:
        raise HerdrError("invalid_agent_timeout", INVALID_TIMEOUT_MESSAGE)
    launches = book(rt)
    launches.begin(ref, name, kind, timeout_ms / 1000)
    try:
        proc.pty.write(data + b"\r")
    except OSError as exc:
        ref.pane.agent_rec.name = None
        launches.drop(ref.pane.key)
        raise HerdrError("agent_start_input_failed", str(exc)) from exc
    rt.schedule_save()
    return {"type": "agent_started", "agent": agent_view(rt, ref), "argv": argv}


def _bad_argument() -> HerdrError:
    return HerdrError(
        "invalid_agent_argument", "agent arguments cannot be encoded safely for the target shell"
    )
