"""Starting an agent without waiting out Herdr's start budget for one that already exited.

``agent start`` returns once the agent is interactive, or fails at its deadline. An agent
that exits at once — pi given a model it does not know prints an error and exits within a
second; an executable that is not installed — is often never seen running by Herdr, so its
launch stays "pending" until the deadline: a bad model costs the whole start timeout, and
the reason (on the pane) is never reported.

So :func:`start_agent` runs the start in a worker thread and watches the pane's foreground
meanwhile (``pane.process_info``). The shell back alone in the foreground means the command
ended: at once if the agent's own process (its command line holds the longest argument we
passed) was seen there; without that (it may have exited between two looks, or never ran),
after :data:`GRACE_S` of a shell alone in the foreground — Herdr types the command as soon
as the shell is alone, and a shell runs a typed line in milliseconds. Then
:class:`ExitedDuringStart` carries the pane's last lines, secrets redacted. The abandoned
worker ends by itself at Herdr's deadline (the caller closes the pane, so nothing is left
running).

**Started up is not yet taking prompts.** Herdr calls an agent interactive after its settle
delay (3 s); real pi draws its editor at once but takes prompts only when its startup is over
(fetching its tools, binding the session: offline a second or two, online on a first run far
longer). A prompt submitted before stays in pi's editor ("Startup is still in progress") and
the turn never starts. pi's Herdr integration reports the session exactly then (pi's
``session_start``), so for such kinds :func:`wait_for_session` waits — bounded by
:data:`SESSION_GRACE_MS` — for that report before the task prompt is sent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from orchestrator.agent_tools import screen_text
from orchestrator.client.errors import ClientError
from orchestrator.client.poll import Deadline
from orchestrator.client.sync import HerdrClient
from orchestrator.client.types import AgentInfo, AgentStarted
from orchestrator.core.result import redact_text

__all__ = [
    "GRACE_S",
    "POLL_S",
    "SESSION_AT_START",
    "SESSION_GRACE_MS",
    "TAIL_LINES",
    "ExitedDuringStart",
    "start_agent",
    "wait_for_session",
]

#: How often the pane is looked at while the start runs.
POLL_S = 0.2
#: How long the shell may sit alone in the foreground before the command counts as ended
#: even though its process was never seen.
GRACE_S = 5.0
#: Lines of the pane quoted in the failure.
TAIL_LINES = 15
#: Kinds whose Herdr integration reports the session once the agent takes prompts.
SESSION_AT_START = ("pi",)
#: How long a spawn waits for that report before it prompts anyway (no integration).
SESSION_GRACE_MS = 10_000
#: How often Herdr is asked meanwhile.
SESSION_POLL_S = 0.05


class ExitedDuringStart(Exception):
    """The agent's command ended before the agent became interactive; ``tail`` is the
    pane's last lines (secrets redacted)."""

    def __init__(self, kind: str, tail: str) -> None:
        self.tail = tail
        shown = f":\n{tail}" if tail else " (the pane shows nothing)"
        super().__init__(
            f"the {kind} agent exited during start; the shell is back in the foreground. "
            f"Last lines of its pane{shown}"
        )


def _foreground(client: HerdrClient, pane_id: str, marker: str) -> tuple[bool, bool] | None:
    """``(shell alone in the foreground, our command among the foreground processes)``;
    None when Herdr could not tell. Our command is a process other than the shell whose
    command line holds ``marker`` (an argument we passed, else the kind's name)."""
    try:
        info = client.pane_process_info(pane_id)
    except ClientError:
        return None
    shell = info.get("shell_pid")
    if shell is None:
        return None
    ours = False
    for proc in info.get("foreground_processes") or ():
        if not isinstance(proc, dict) or proc.get("pid") == shell:
            continue
        argv = proc.get("argv") or [proc.get("cmdline") or "", proc.get("name") or ""]
        if any(isinstance(a, str) and marker in a for a in argv):
            ours = True
    return info.get("foreground_process_group_id") == shell, ours


def _agent_up(client: HerdrClient, name: str, kind: str) -> bool:
    """Whether Herdr sees the agent running under its name (then it did not exit)."""
    try:
        agent = client.agent_get(name)
    except ClientError:
        return False
    return agent.name == name and agent.agent == kind


def pane_tail(client: HerdrClient, pane_id: str, secrets: Sequence[str]) -> str:
    """The pane's last lines without chrome, every secret replaced by a placeholder."""
    try:
        text = client.pane_read(pane_id, "recent", TAIL_LINES * 4).text
    except ClientError:
        return ""
    return redact_text(screen_text.last_lines(text, TAIL_LINES), secrets)


def start_agent(
    client: HerdrClient,
    name: str,
    kind: str,
    pane_id: str,
    *,
    args: Sequence[str],
    timeout_ms: int,
    secrets: Sequence[str] = (),
    poll_s: float = POLL_S,
    grace_s: float | None = None,
) -> AgentStarted:
    """``client.agent_start``, or :class:`ExitedDuringStart` as soon as the command ended.

    Herdr's own failures (``HerdrError``, transport errors) are raised as the client raises
    them. ``grace_s``: :data:`GRACE_S` as it is at the call (a test of a failing start
    shortens it there instead of waiting five seconds).
    """
    grace = GRACE_S if grace_s is None else grace_s
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["started"] = client.agent_start(
                name, kind, pane_id, args=args, timeout_ms=timeout_ms
            )
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=run, name=f"agent-start-{name}", daemon=True)
    worker.start()
    marker = max(args, key=len) if args else kind
    seen_ours = False
    alone_since: float | None = None
    confirmations = 0
    while not done.wait(poll_s):
        seen = _foreground(client, pane_id, marker)
        if seen is None or done.is_set():
            continue
        alone, ours = seen
        seen_ours = seen_ours or ours
        if not alone:
            alone_since, confirmations = None, 0
            continue
        now = time.monotonic()
        alone_since = alone_since if alone_since is not None else now
        if not (seen_ours or now - alone_since >= grace):
            continue
        # Two looks in a row, and Herdr not calling the agent up: never a false alarm.
        confirmations += 1
        if confirmations >= 2 and not done.is_set() and not _agent_up(client, name, kind):
            raise ExitedDuringStart(kind, pane_tail(client, pane_id, secrets))
    if "error" in outcome:
        raise outcome["error"]
    started: AgentStarted = outcome["started"]
    return started


def wait_for_session(
    client: HerdrClient, pane_id: str, kind: str, timeout_ms: int
) -> tuple[AgentInfo | None, str | None]:
    """For a kind of :data:`SESSION_AT_START`, wait (at most ``timeout_ms``, at most
    :data:`SESSION_GRACE_MS`) until Herdr shows the agent's session report: the agent then
    takes prompts (module docstring). Returns the agent as last seen and, when no report came
    in time, a warning to pass on (the prompt may be lost; the spawn says so if it is)."""
    if kind not in SESSION_AT_START:
        return None, None
    budget = max(0, min(timeout_ms, SESSION_GRACE_MS))
    deadline = Deadline(budget / 1000)
    info: AgentInfo | None = None
    while True:
        try:
            info = client.agent_get(pane_id)
        except ClientError:
            return info, None  # the prompt that follows reports what happened
        if info.raw.get("agent_session") is not None:
            return info, None
        if deadline.expired():
            return info, (
                f"the {kind} agent reported no session within {budget} ms of starting (is "
                f"Herdr's {kind} integration installed?); the task prompt was sent anyway, and "
                "an agent still starting up may not take it"
            )
        time.sleep(SESSION_POLL_S)
