"""``agent.start``: launch an agent in an idle shell pane (reference §5.6, §17.6).

``agent.start`` checks its request in Herdr's order (name grammar, kind, argument control
characters, name taken, exact pane id, pane busy or without a terminal, timeout bounds),
names the pane, types the agent's command line — quoted for the pane's shell — and
answers at once with ``launch_pending: true``. The launch then moves through Herdr's
phases (:mod:`herdr_sim.services.launches`), driven by the runtime's launch book
(``rt.agents.launches``, :class:`herdr_sim.services.agents.LaunchBook`), which also tells
session persistence what to save of it.

The settle delay is ``SimulatorConfig.agent_start_settle`` (Herdr: 3 s) so test suites can
run fast; it and the default deadline (30 s without ``timeout_ms``) run at the simulator's
time scale (:mod:`herdr_sim.timers`). The timeout bounds stay Herdr's (3000 <
``timeout_ms`` ≤ 300000), and a given ``timeout_ms`` is the client's time, never scaled.
"""

from __future__ import annotations

import re
from typing import Any

from herdr_sim.detection.process import foreground_job
from herdr_sim.registry import method
from herdr_sim.services.pane_process import PaneProcess
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import F, ListOf, Obj, Str
from orchestrator.client.protocol import (
    AGENT_NAME_PATTERN,
    INVALID_AGENT_NAME_MESSAGE,
    interactive_executable,
    parse_agent_label,
)
from orchestrator.client.protocol.startup import MAX_TIMEOUT_MS, SETTLE_MS

from ..model.agents import is_agent
from ..model.session import PaneRef
from .specs import OPT_U64, REQ_STR

INVALID_AGENT_NAME = "invalid_agent_name"
AGENT_NAME_TAKEN = "agent_name_taken"
NAME = re.compile(AGENT_NAME_PATTERN)

#: Herdr's startup timeout default and bounds, in milliseconds (the lower bound is Herdr's
#: 3 s settle delay, whatever settle delay the simulator is configured with): the protocol's
MIN_TIMEOUT_MS = SETTLE_MS
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
    if is_agent(ref.pane.agent_rec) or rt.agents.launch_of(ref) is not None:
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
    timeout_ms = p["timeout_ms"]
    if timeout_ms is not None and not MIN_TIMEOUT_MS < timeout_ms <= MAX_TIMEOUT_MS:
        raise HerdrError("invalid_agent_timeout", INVALID_TIMEOUT_MESSAGE)
    # the client's timeout is the client's time; Herdr's default (30 s) runs at the time scale
    timeout = rt.config.timers().agent_start_timeout if timeout_ms is None else timeout_ms / 1000
    launches = rt.agents.launches
    launches.begin(ref, name, kind, timeout)
    try:
        proc.pty.write(data + b"\r")
    except OSError as exc:
        ref.pane.agent_rec.name = None
        launches.drop(ref.pane.key)
        raise HerdrError("agent_start_input_failed", str(exc)) from exc
    rt.schedule_save()
    return {"type": "agent_started", "agent": rt.agents.view(ref), "argv": argv}


def _bad_argument() -> HerdrError:
    return HerdrError(
        "invalid_agent_argument", "agent arguments cannot be encoded safely for the target shell"
    )
