"""``agent start`` over the socket: the readiness polling Herdr's CLI does around the method.

``agent.start`` itself returns at once with ``launch_pending: true``; Herdr's CLI then polls
``agent.get`` until the agent is interactive, blocked, gone or out of time, and prints the
final agent. A socket client that stopped at the method would report success for an agent
that never came up, so the socket path reproduces the CLI's loop (same request ids, same
synthesized error codes and messages) and both transports answer alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

Send = Callable[[str, str, Mapping[str, Any]], dict[str, Any]]

START_ID = "cli:agent:start"
DEFAULT_TIMEOUT_MS = 30_000
POLL_INTERVAL = 0.1
BUSY_RETRY_WINDOW = 2.0
_SETTLE_MS = 3_000
_MAX_TIMEOUT_MS = 300_000


def _error(code: str, message: str) -> dict[str, Any]:
    return {"id": START_ID, "error": {"code": code, "message": message}}


def _name_lost(name: str) -> dict[str, Any]:
    return _error("agent_name_not_found", f"named agent {name} no longer owns the target terminal")


def _terminal_id(send: Send, pane_id: str) -> str | None:
    response = send("cli:agent:start:pane", "pane.get", {"pane_id": pane_id})
    pane = (response.get("result") or {}).get("pane") or {}
    value = pane.get("terminal_id")
    return value if isinstance(value, str) else None


def _shell_alone(send: Send, pane_id: str) -> bool:
    """Whether the pane's shell owns its foreground (a busy answer may be start-up noise)."""
    response = send("cli:agent:start:process_info", "pane.process_info", {"pane_id": pane_id})
    info = (response.get("result") or {}).get("process_info") or {}
    shell = info.get("shell_pid")
    return shell is not None and info.get("foreground_process_group_id") == shell


def start_agent(send: Send, params: Mapping[str, Any], expected_kind: str) -> dict[str, Any]:
    """Run ``agent start`` through ``send(request_id, method, params)``; returns an envelope."""
    name, pane_id = str(params["name"]), str(params["pane_id"])
    timeout_ms = params.get("timeout_ms")
    total_ms = int(timeout_ms) if timeout_ms is not None else DEFAULT_TIMEOUT_MS
    retryable = _SETTLE_MS < total_ms <= _MAX_TIMEOUT_MS
    pinned = _terminal_id(send, pane_id)
    wire = {key: value for key, value in params.items() if value is not None}
    retry_until: float | None = None
    while True:
        response = send(START_ID, "agent.start", wire)
        error = response.get("error")
        if not isinstance(error, dict):
            break
        if error.get("code") != "agent_pane_busy" or not retryable or pinned is None:
            return response
        retry_until = retry_until or time.monotonic() + BUSY_RETRY_WINDOW
        if time.monotonic() >= retry_until or not _shell_alone(send, pane_id):
            return response
        time.sleep(POLL_INTERVAL)
    result = dict(response["result"])
    terminal_id = (result.get("agent") or {}).get("terminal_id")
    if not isinstance(terminal_id, str):
        return _error("agent_start_failed", "agent start response did not include terminal_id")
    if pinned is not None and pinned != terminal_id:
        return _name_lost(name)
    outcome = _poll(send, name, pane_id, total_ms / 1000, expected_kind, terminal_id)
    if "error" in outcome:
        return outcome
    result["agent"] = outcome["agent"]
    return {"id": START_ID, "result": result}


def _poll(
    send: Send, name: str, pane_id: str, timeout: float, kind: str, terminal_id: str
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() >= deadline:
            send("cli:agent:start:timeout", "agent.get", {"target": name})
            return _error("timeout", "timed out waiting for agent startup")
        response = send(START_ID, "agent.get", {"target": name})
        if "error" in response:
            response = send(START_ID, "agent.get", {"target": pane_id})
            if "error" in response:
                time.sleep(POLL_INTERVAL)
                continue
        agent: dict[str, Any] = dict(response["result"]["agent"])
        detected, status = agent.get("agent"), agent.get("agent_status")
        if agent.get("terminal_id") != terminal_id:
            return _name_lost(name)
        if detected is not None and detected != kind:
            return _error("agent_kind_mismatch", f"expected {kind}, detected {detected}")
        if agent.get("name") != name:
            return _name_lost(name)
        if status == "blocked":
            return _error(
                "agent_not_ready",
                f"agent {name} is blocked during startup and is not ready for prompts",
            )
        if status in ("idle", "done"):
            if agent.get("interactive_ready") is True:
                return {"agent": agent}
            if agent.get("launch_pending") is not True:
                return _error(
                    "agent_start_failed", "agent process exited before becoming interactive"
                )
        time.sleep(POLL_INTERVAL)
