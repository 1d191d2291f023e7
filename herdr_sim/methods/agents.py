"""``agent.*`` handlers: list, get, read, rename, focus, send_keys, prompt and wait
(reference §5.7–§5.9, §4, §12 items 18–20, §17.2).

Targets resolve like Herdr's ``resolve_agent_target``: the exact canonical id of a pane that
hosts an agent, else the one live agent with that name. Readiness for input (``prompt``,
``send_keys``) needs a known agent label that is also the pane's detected foreground agent
(the detection seam of :mod:`herdr_sim.services.agents` stands in for process
detection); ``agent.prompt`` also refuses an agent whose ``agent.start`` launch is still
pending, and ``agent.rename`` answers ``agent_launch_pending`` then. ``agent.wait`` and
``agent.prompt`` with ``wait`` listen to the event hub from before their first probe, so a
status that comes and goes between two looks still counts where Herdr counts it.
``agent.start`` lives in :mod:`herdr_sim.methods.agent_start`; its managed launches are
the runtime's (``rt.agents``, :mod:`herdr_sim.services.agents`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any, Self

from herdr_sim.registry import method
from herdr_sim.services.events import Envelope, Signal
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Bool, F, ListOf, Nullable, Obj, Str
from orchestrator.client.poll import Deadline

from ..model.agents import AgentRecord, effective, is_agent, known_agent
from ..model.session import PaneRef
from .agent_start import candidates as _candidates
from .agent_start import check_name, check_name_free
from .pane_io import _encode_keys, read_pane
from .specs import AGENT_STATUS, EMPTY, OPT_STR, OPT_U32, OPT_U64, READ_FORMAT, READ_SOURCE, REQ_STR

AGENT_NOT_FOUND = "agent_not_found"
AGENT_TARGET_AMBIGUOUS = "agent_target_ambiguous"
AGENT_NOT_READY = "agent_not_ready"
AGENT_BLOCKED = "agent_blocked"
AGENT_NOT_RUNNING = "agent_not_running"
AGENT_PROMPT_STALLED = "agent_prompt_stalled"
AGENT_PROMPT_FAILED = "agent_prompt_failed"
AGENT_SEND_KEYS_FAILED = "agent_send_keys_failed"
AGENT_LAUNCH_PENDING = "agent_launch_pending"
EMPTY_AGENT_PROMPT = "empty_agent_prompt"
#: ``until`` when the caller gives none (or an empty list)
DEFAULT_UNTIL: tuple[str, ...] = ("idle", "done", "blocked")
#: 0.9 (§17.2): a prompted non-working agent must be seen working or blocked
_PROMPT_EFFECT: tuple[str, ...] = ("working", "blocked")
_FOCUS_GAINED = b"\x1b[I"
_BRACKET_OPEN = b"\x1b[200~"
_BRACKET_CLOSE = b"\x1b[201~"

_TARGET = Obj(fields={"target": REQ_STR})
_UNTIL = F(ListOf(AGENT_STATUS), default=list)


# -- target resolution ------------------------------------------------------------------------


def not_found(target: str) -> HerdrError:
    """``agent_not_found`` for an unresolved target."""
    return HerdrError(AGENT_NOT_FOUND, f"agent target {target} not found")


def resolve(rt: Runtime, target: str) -> PaneRef:
    """§5.9: an agent pane's exact canonical id, else a unique live agent name."""
    panes = rt.session.all_panes()
    for ref in panes:
        if ref.pane_id == target and is_agent(ref.pane.agent_rec):
            return ref
    named = [ref for ref in panes if ref.pane.agent_rec.name == target]
    if len(named) == 1:
        return named[0]
    if named:
        raise HerdrError(
            AGENT_TARGET_AMBIGUOUS,
            f"agent target {target} is ambiguous; candidates: {_candidates(rt, named)}",
        )
    raise not_found(target)


def _not_ready(target: str) -> HerdrError:
    return HerdrError(AGENT_NOT_READY, f"agent {target} is not an active named agent")


def _ready_agent(ref: PaneRef, target: str) -> str:
    """The pane's known agent kind, which must be its detected foreground agent."""
    rec = ref.pane.agent_rec
    label = effective(rec)[0]
    kind = known_agent(label) if label is not None else None
    if kind is None:
        raise _not_ready(target)
    return kind


# -- simple methods ---------------------------------------------------------------------------


@method("agent.list", EMPTY, result="agent_list", mutates=False)
async def list_(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Every pane hosting an agent, in workspace, tab and layout order."""
    return {"type": "agent_list", "agents": [rt.agents.view(ref) for ref in rt.agent_panes()]}


@method("agent.get", _TARGET, result="agent_info", mutates=False)
async def get(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """One agent by pane id or name; a managed launch is re-evaluated first, like Herdr."""
    target = p["target"]
    with contextlib.suppress(HerdrError):
        rt.agents.launches.reconcile(resolve(rt, target), announce=True)
    return {"type": "agent_info", "agent": rt.agents.view(resolve(rt, target))}


@method(
    "agent.read",
    Obj(
        fields={
            "target": REQ_STR,
            "source": F(READ_SOURCE, required=True),
            "lines": OPT_U32,
            "format": F(READ_FORMAT, default="text"),
            "strip_ansi": F(Bool(), default=True),
        }
    ),
    result="pane_read",
    mutates=False,
)
async def read(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """``pane.read`` of the agent's pane."""
    ref = resolve(rt, p["target"])
    return {"type": "pane_read", "read": read_pane(rt, ref, p["source"], p["lines"], p["format"])}


@method("agent.focus", _TARGET, result="agent_info")
async def focus(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Focus the agent's pane (switching workspace and tab) and mark its tab seen."""
    ref = resolve(rt, p["target"])
    unseen = [key for key in ref.tab.layout.panes() if not rt.session.panes[key].seen]
    rt.session.focus_pane(ref)
    for key in unseen:
        rt.publish_status(rt.session.locate(key))
    return {"type": "agent_info", "agent": rt.agents.view(ref)}


@method("agent.rename", Obj(fields={"target": REQ_STR, "name": OPT_STR}), result="agent_info")
async def rename(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Name an agent, or clear its name when ``name`` is absent or null.

    Not while its ``agent.start`` launch is pending (``agent_launch_pending``). A name
    cleared ends the managed launch with it; a new name carries an active launch over.
    """
    target, name = p["target"], p["name"]
    ref = resolve(rt, target)
    if name is not None:
        check_name(name)
        check_name_free(rt, name, ref.pane.key)
    rec = ref.pane.agent_rec
    launch = rt.agents.launch_of(ref)
    if launch is not None and launch.launch_pending:
        raise HerdrError(AGENT_LAUNCH_PENDING, "agent name cannot change while startup is pending")
    if effective(rec)[0] is None:
        raise HerdrError(AGENT_NOT_FOUND, "agent target does not currently host an agent")

    def rename_agent(target: AgentRecord) -> bool:
        if launch is not None:
            if name is None:
                rt.agents.launches.drop(ref.pane.key)
            else:
                launch.name = name
        target.name = name
        return False

    rt.agents.apply(ref, rename_agent)
    return {"type": "agent_info", "agent": rt.agents.view(ref)}


@method(
    "agent.send_keys",
    Obj(fields={"target": REQ_STR, "keys": F(ListOf(Str()), required=True)}),
    result="ok",
)
async def send_keys(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Press keys in a ready agent's pane (every key is checked before anything is sent)."""
    target = p["target"]
    ref = resolve(rt, target)
    kind = _ready_agent(ref, target)
    if ref.pane.agent_rec.detected != kind:
        raise _not_ready(target)
    data = _encode_keys(rt, ref, p["keys"])
    try:
        rt.process(ref).pty.write(data)
    except (OSError, HerdrError) as exc:
        raise HerdrError(AGENT_SEND_KEYS_FAILED, "channel closed") from exc
    return {"type": "ok"}


# -- agent.prompt -----------------------------------------------------------------------------


def _submit(rt: Runtime, target: str, text: str) -> PaneRef:
    """Herdr's app-side ``agent.prompt``: checks in order, then the text now and Enter later."""
    if not text:
        raise HerdrError(EMPTY_AGENT_PROMPT, "agent prompt must not be empty")
    ref = resolve(rt, target)
    if ref.pane.state == "blocked":
        raise HerdrError(AGENT_BLOCKED, f"agent {target} is blocked and requires interactive input")
    kind = _ready_agent(ref, target)
    launch = rt.agents.launch_of(ref)
    if launch is not None and launch.launch_pending:
        raise _not_ready(target)
    if ref.pane.agent_rec.detected != kind:
        raise HerdrError(
            AGENT_NOT_READY, f"agent {target} is no longer the pane foreground process"
        )
    proc = rt.process(ref)
    payload = text.encode("utf-8", "surrogatepass")
    if proc.terminal.bracketed_paste:
        payload = _BRACKET_OPEN + payload + _BRACKET_CLOSE
    if kind == "copilot":
        payload = _FOCUS_GAINED + payload
    try:
        proc.pty.write(payload)
    except OSError as exc:
        raise HerdrError(AGENT_PROMPT_FAILED, "channel closed") from exc
    key = ref.pane.key

    def press_enter() -> None:
        live = rt.processes.get(key)
        if live is proc:
            with contextlib.suppress(OSError):
                proc.pty.write(b"\r")

    asyncio.get_running_loop().call_later(rt.config.timers().agent_prompt_submit_delay, press_enter)
    return ref


_WAIT_OPTIONS = Obj(fields={"until": _UNTIL, "timeout_ms": OPT_U64})


@method(
    "agent.prompt",
    Obj(
        fields={
            "target": REQ_STR,
            "text": F(Str(), required=True),
            "wait": F(Nullable(_WAIT_OPTIONS)),
        }
    ),
    result="agent_prompted",
)
async def prompt(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Type a prompt and submit it; with ``wait``, also wait for the turn to settle."""
    target, options = p["target"], p["wait"]
    if options is None:
        ref = _submit(rt, target, p["text"])
        return {"type": "agent_prompted", "agent": rt.agents.view(ref)}
    with _Watch(rt) as watch:
        before = _probe(rt, target, translate=False)
        prompted = rt.agents.view(_submit(rt, target, p["text"]))
        name = before.get("name") if before.get("name") == target else None
        if not _same_agent(prompted, before["terminal_id"], name, before.get("agent")):
            raise _not_running()
        started = time.monotonic()
        baseline = prompted["state_change_seq"]
        until = tuple(options["until"]) or DEFAULT_UNTIL
        timeout_ms: int | None = options["timeout_ms"]
        agent, after = prompted, baseline
        if prompted["agent_status"] != "working":
            stall = rt.config.timers().agent_prompt_stall_timeout
            effect = stall if timeout_ms is None else min(timeout_ms / 1000, stall)
            short = timeout_ms is not None and timeout_ms / 1000 <= stall
            agent = await watch.until_status(
                _Wait(target, _PROMPT_EFFECT, effect, prompted, baseline, transient=True),
                stalled=None if short else (baseline, round(effect * 1000)),
            )
            after = None
            if agent["agent_status"] in until:
                return {"type": "agent_prompted", "agent": agent}
        remaining = None
        if timeout_ms is not None:
            remaining = max(0.0, timeout_ms / 1000 - (time.monotonic() - started))
        agent = await watch.until_status(_Wait(target, until, remaining, agent, after))
        return {"type": "agent_prompted", "agent": agent}


# -- agent.wait -------------------------------------------------------------------------------


@method(
    "agent.wait",
    Obj(fields={"target": REQ_STR, "until": _UNTIL, "timeout_ms": OPT_U64}),
    result="agent_info",
    mutates=False,
)
async def wait(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Block until the agent reaches one of ``until`` (default idle, done or blocked)."""
    target = p["target"]
    until = tuple(p["until"]) or DEFAULT_UNTIL
    timeout = None if p["timeout_ms"] is None else p["timeout_ms"] / 1000
    with _Watch(rt) as watch:
        initial = _probe(rt, target, translate=False)
        if initial["agent_status"] in until:
            return {"type": "agent_info", "agent": initial}
        agent = await watch.until_status(
            _Wait(target, until, timeout, initial, None, transient=True)
        )
        return {"type": "agent_info", "agent": agent}


def _not_running() -> HerdrError:
    return HerdrError(AGENT_NOT_RUNNING, "agent is no longer running in the target pane")


def _probe(rt: Runtime, target: str, *, translate: bool = True) -> dict[str, Any]:
    """``agent.get``; once waiting, a vanished agent is ``agent_not_running``."""
    try:
        return rt.agents.view(resolve(rt, target))
    except HerdrError as exc:
        if translate and exc.code == AGENT_NOT_FOUND:
            raise _not_running() from None
        raise


def _same_agent(
    agent: dict[str, Any], terminal_id: str, name: str | None, label: str | None
) -> bool:
    """Identity pinning: same terminal, same name (when targeted by name), same agent."""
    if agent["terminal_id"] != terminal_id:
        return False
    if name is not None and agent.get("name") != name:
        return False
    current = agent.get("agent")
    if label is None:
        return True
    if current is None:
        return agent.get("name") is not None
    return bool(current == label)


def _gone(kind: str, data: dict[str, Any], pane_id: str) -> bool:
    """The pane closed, exited or moved away (its id changed)."""
    if kind == "pane_moved":
        return bool(data.get("previous_pane_id") == pane_id)
    return kind in ("pane_closed", "pane_exited") and data["pane_id"] == pane_id


@dataclass
class _Wait:
    """One stage of a wait: what to match, for how long, against which pinned identity."""

    target: str
    until: tuple[str, ...]
    timeout: float | None
    initial: dict[str, Any]
    #: match only a status whose ``state_change_seq`` is above this
    after_seq: int | None
    #: a matching status seen in an event counts even if the pane moved on before the probe
    transient: bool = False


class _Watch:
    """Collects hub events from before the first probe, so no transition falls in a gap."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.events: list[Envelope] = []
        self.signal = Signal()

    def _listen(self, envelope: Envelope) -> None:
        self.events.append(envelope)
        self.signal.fire()

    def __enter__(self) -> Self:
        self.rt.hub.add_listener(self._listen)
        return self

    def __exit__(self, *exc: object) -> None:
        self.rt.hub.remove_listener(self._listen)

    async def until_status(
        self, wait: _Wait, *, stalled: tuple[int, int] | None = None
    ) -> dict[str, Any]:
        """Herdr's ``wait_for_resolved_agent``; every stage replays the events from the start.

        ``stalled`` (baseline, ms) turns the deadline into ``agent_prompt_stalled``.
        """
        rt, initial = self.rt, wait.initial
        deadline = Deadline(wait.timeout)
        terminal_id, pane_id = initial["terminal_id"], initial["pane_id"]
        name = initial.get("name") if initial.get("name") == wait.target else None
        label = initial.get("agent")
        index = 0
        matched: str | None = None

        def settled(agent: dict[str, Any]) -> bool:
            after = wait.after_seq
            return agent["agent_status"] in wait.until and (
                after is None or agent["state_change_seq"] > after
            )

        def pinned() -> dict[str, Any]:
            agent = _probe(rt, wait.target)
            if not _same_agent(agent, terminal_id, name, label):
                raise _not_running()
            return agent

        while True:
            probe = False
            while index < len(self.events):
                envelope = self.events[index]
                index += 1
                kind, data = envelope["event"], envelope["data"]
                if kind == "pane_agent_detected" and data["pane_id"] == pane_id:
                    if data.get("released"):
                        final = data.get("final_status")
                        status = final if final in wait.until else matched
                        if status is None:
                            raise _not_running()
                        return {**initial, "agent_status": status}
                    other = data.get("agent")
                    if other is not None and label is not None and other != label:
                        raise _not_running()
                    probe = True
                elif kind == "pane_agent_status_changed" and data["pane_id"] == pane_id:
                    if wait.transient and data["agent_status"] in wait.until:
                        matched = data["agent_status"]
                    probe = True
                elif kind == "pane_updated" and data["pane"]["pane_id"] == pane_id:
                    probe = True
                elif _gone(kind, data, pane_id):
                    raise _not_running()
            if probe:
                agent = pinned()
                if matched is not None:
                    return {**agent, "agent_status": matched}
                if settled(agent):
                    return agent
            remaining = deadline.remaining()
            if remaining is not None and remaining <= 0:
                agent = pinned()
                if settled(agent):
                    return agent
                if stalled is not None:
                    baseline, ms = stalled
                    raise HerdrError(
                        AGENT_PROMPT_STALLED,
                        f"agent prompt produced no observed state change within {ms} ms; "
                        f"status is {agent['agent_status']} and state_change_seq remained "
                        f"{baseline}",
                    )
                raise HerdrError(errors.TIMEOUT, "timed out waiting for agent status")
            await self.signal.wait(remaining)
