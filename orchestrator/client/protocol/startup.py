"""``agent start`` as Herdr's CLI runs it: the method, then polling until the agent is up.

``agent.start`` answers at once with ``launch_pending: true``. Herdr's CLI (``src/cli/
agent.rs``) pins the pane's terminal id, sends the method, retries a fresh shell that is still
initializing (``agent_pane_busy``) for up to two seconds, then polls ``agent.get`` every
100 ms until the agent is interactive, turned out to be another kind, got blocked, exited,
or the startup deadline passed, and answers with synthesized error codes for each failure.
A client that stopped at the method would report success for an agent that never came up.

The algorithm is written once, over ``send(request_id, method, params, checked)`` returning
the response envelope: the simulator's ``herdr`` CLI sends through its protocol guard
(``checked`` says whether Herdr's CLI guards that request), the orchestrator's client through
its socket transport (it checks the protocol once per client and ignores ``checked``).
Exceptions ``send`` raises pass through untouched, so each caller maps its own transport
failures. Import-light on purpose, like the rest of :mod:`orchestrator.client.protocol`.
"""

from __future__ import annotations

import time

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    #: ``send(request_id, method, params, checked)`` → the response envelope
    Send = Callable[[str, str, dict[str, Any], bool], Any]

__all__ = [
    "BUSY_RETRY_WINDOW",
    "DEFAULT_TIMEOUT_MS",
    "MAX_TIMEOUT_MS",
    "POLL_INTERVAL",
    "SETTLE_MS",
    "START_ID",
    "as_u64",
    "json_get",
    "request_start",
    "start_agent",
    "wait_until_interactive",
]

#: The request id of ``agent.start`` and of the readiness polls (and of synthesized errors).
START_ID = "cli:agent:start"
#: ``--timeout`` when none is given.
DEFAULT_TIMEOUT_MS = 30_000
#: Herdr's settle delay: a timeout must exceed it to allow busy-pane retries.
SETTLE_MS = 3_000
#: The largest ``--timeout`` Herdr accepts.
MAX_TIMEOUT_MS = 300_000
#: How long a busy fresh shell is retried.
BUSY_RETRY_WINDOW = 2.0
#: Pause between polls.
POLL_INTERVAL = 0.1

_SHELL_NAMES = frozenset(
    (
        "sh",
        "bash",
        "dash",
        "zsh",
        "fish",
        "ksh",
        "mksh",
        "csh",
        "tcsh",
        "elvish",
        "xonsh",
        "nu",
        "pwsh",
        "powershell",
        "cmd",
    )
)


def _error(code: str, message: str) -> dict[str, Any]:
    return {"id": START_ID, "error": {"code": code, "message": message}}


def _name_lost(name: str) -> dict[str, Any]:
    return _error("agent_name_not_found", f"named agent {name} no longer owns the target terminal")


def json_get(value: Any, *keys: str) -> Any:
    """``value[k1][k2]...`` with serde_json's indexing rules (missing -> None)."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_u64(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _failed(response: Any) -> bool:
    return isinstance(response, dict) and "error" in response


def _shell_name(name: str) -> bool:
    base = name.replace("\\", "/").rsplit("/", 1)[-1].lstrip("-").removesuffix(".exe")
    return base.lower() in _SHELL_NAMES


def _pane_terminal_id(send: Send, pane_id: str) -> str | None:
    response = send("cli:agent:start:pane", "pane.get", {"pane_id": pane_id}, True)
    return _as_str(json_get(response, "result", "pane", "terminal_id"))


def _shell_is_initializing(send: Send, pane_id: str) -> bool:
    """A fresh shell still running its startup: it leads the foreground group itself."""
    response = send("cli:agent:start:process_info", "pane.process_info", {"pane_id": pane_id}, True)
    info = json_get(response, "result", "process_info")
    shell_pid = as_u64(json_get(info, "shell_pid"))
    if shell_pid is None or as_u64(json_get(info, "foreground_process_group_id")) != shell_pid:
        return False
    processes = json_get(info, "foreground_processes")
    if not isinstance(processes, list):
        return False
    for process in processes:
        if as_u64(json_get(process, "pid")) != shell_pid:
            continue
        name = _as_str(json_get(process, "name"))
        argv = json_get(process, "argv")
        first = _as_str(argv[0]) if isinstance(argv, list) and argv else None
        if (name is not None and _shell_name(name)) or (first is not None and _shell_name(first)):
            return True
    return False


def request_start(send: Send, params: dict[str, Any]) -> tuple[Any, str | None]:
    """Send ``agent.start`` (retrying a busy fresh shell): ``(response, terminal_id)``.

    ``terminal_id`` is None when ``response`` is already the final answer (Herdr's refusal
    or a synthesized error); otherwise the agent's launch is pending on that terminal and
    :func:`wait_until_interactive` follows. ``params`` are sent as given.
    """
    name, pane_id, timeout_ms = params["name"], params["pane_id"], params.get("timeout_ms")
    timeout_total = timeout_ms if timeout_ms is not None else DEFAULT_TIMEOUT_MS
    retryable = SETTLE_MS < timeout_total <= MAX_TIMEOUT_MS
    pinned = _pane_terminal_id(send, pane_id)
    retry_deadline: float | None = None
    busy_response: Any = None
    while True:
        if busy_response is not None and (
            (retry_deadline is not None and time.monotonic() >= retry_deadline)
            or _pane_terminal_id(send, pane_id) != pinned
            or not _shell_is_initializing(send, pane_id)
        ):
            return busy_response, None
        response = send(START_ID, "agent.start", params, True)
        if not _failed(response):
            break
        if (
            _as_str(json_get(response, "error", "code")) != "agent_pane_busy"
            or not retryable
            or pinned is None
            or _pane_terminal_id(send, pane_id) != pinned
            or not _shell_is_initializing(send, pane_id)
        ):
            return response, None
        if retry_deadline is None:
            # own deadline: the herdr CLI's `agent start` runs this, loading no module beyond
            # the protocol's own (start-up speed)
            retry_deadline = time.monotonic() + BUSY_RETRY_WINDOW
        busy_response = response
        remaining = retry_deadline - time.monotonic()
        if remaining <= 0:
            return busy_response, None
        time.sleep(min(POLL_INTERVAL, remaining))
    terminal_id = _as_str(json_get(response, "result", "agent", "terminal_id"))
    if terminal_id is None:
        return _error(
            "agent_start_failed", "agent start response did not include terminal_id"
        ), None
    if pinned is not None and pinned != terminal_id:
        return _name_lost(name), None
    return response, terminal_id


def wait_until_interactive(
    send: Send,
    name: str,
    fallback_pane_id: str,
    timeout: float,
    expected_kind: str,
    terminal_id: str,
) -> tuple[bool, Any]:
    """Poll ``agent.get`` until startup ends: ``(True, agent)`` or ``(False, error envelope)``.

    ``expected_kind`` is the kind's canonical label (Herdr detects ``claude-code`` as
    ``claude``); ``timeout`` is in seconds.
    """
    # own deadline: the herdr CLI's `agent start` runs this, loading no module beyond the
    # protocol's own (start-up speed)
    deadline = time.monotonic() + timeout
    first_poll = True
    while True:
        if time.monotonic() >= deadline:
            # Give the server a chance to reconcile its own startup deadline first, so the
            # pending name is free again by the time the caller sees the timeout.
            import contextlib  # here, not at the top: it costs every `herdr` start ~1 ms

            with contextlib.suppress(Exception):
                send("cli:agent:start:timeout", "agent.get", {"target": name}, False)
            return False, _error("timeout", "timed out waiting for agent startup")
        response = send(START_ID, "agent.get", {"target": name}, first_poll)
        first_poll = False
        if _failed(response):
            response = send(START_ID, "agent.get", {"target": fallback_pane_id}, False)
            if _failed(response):
                time.sleep(POLL_INTERVAL)
                continue
        agent = json_get(response, "result", "agent")
        detected = _as_str(json_get(agent, "agent"))
        status = _as_str(json_get(agent, "agent_status"))
        if _as_str(json_get(agent, "terminal_id")) != terminal_id:
            return False, _name_lost(name)
        if detected is not None and detected != expected_kind:
            return False, _error(
                "agent_kind_mismatch", f"expected {expected_kind}, detected {detected}"
            )
        if _as_str(json_get(agent, "name")) != name:
            return False, _name_lost(name)
        if status == "blocked":
            return False, _error(
                "agent_not_ready",
                f"agent {name} is blocked during startup and is not ready for prompts",
            )
        if status in ("idle", "done"):
            if json_get(agent, "interactive_ready") is True:
                return True, agent
            if json_get(agent, "launch_pending") is not True:
                return False, _error(
                    "agent_start_failed", "agent process exited before becoming interactive"
                )
        time.sleep(POLL_INTERVAL)


def start_agent(send: Send, params: dict[str, Any], expected_kind: str) -> dict[str, Any]:
    """The whole of ``agent start``: the final response envelope (result or error).

    On success the envelope is ``agent.start``'s with its ``agent`` replaced by the
    interactive agent, as Herdr's CLI prints it.
    """
    response, terminal_id = request_start(send, params)
    if terminal_id is None:
        final: dict[str, Any] = response
        return final
    timeout_ms = params.get("timeout_ms")
    timeout = (timeout_ms if timeout_ms is not None else DEFAULT_TIMEOUT_MS) / 1000
    ok, value = wait_until_interactive(
        send, str(params["name"]), str(params["pane_id"]), timeout, expected_kind, terminal_id
    )
    if not ok:
        error: dict[str, Any] = value
        return error
    response["result"]["agent"] = value
    started: dict[str, Any] = response
    return started
