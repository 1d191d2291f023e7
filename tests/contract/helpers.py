"""Plain helpers shared by the contract tests (fixtures live in ``conftest.py`` next to this).

Type aliases for the root fixtures, request shortcuts, pane input and output waits, event
reading, bounded hang-ups and CLI result checks. Every wait here is bounded.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from herdr_sim import Simulator, testing
from herdr_sim.client import RequestFailed, Subscription
from herdr_sim.model.agents import AgentRecord, AgentState
from pytest_herdr.cli_runner import CliResult
from pytest_herdr.client import HerdrClient
from tests.waits import SCALE, wait_until

#: ``api(method, **params)`` → the result; raises ``RequestFailed`` (the ``api`` fixture)
Api = Callable[..., dict[str, Any]]
#: ``raw(method, **params)`` → the whole envelope, id ``"t"`` (the ``raw`` fixture)
Raw = Callable[..., dict[str, Any]]
#: ``herdr(*argv, env=None)`` → a :class:`CliResult` (the ``herdr`` fixture)
Herdr = Callable[..., CliResult]
#: ``subscribe(*subscriptions)`` → an acknowledged :class:`Subscription` (the fixture)
Subscribe = Callable[..., Subscription]
#: one pushed event line, ``{"event": …, "data": …}``
Event = dict[str, Any]

#: the server-side bound of the output waits, in milliseconds
WAIT_MS = 10_000

#: (env, message) pairs that Herdr's launch-env check rejects with ``invalid_env``
ENV_ERRORS: list[tuple[dict[str, str], str]] = [
    ({"": "x"}, "env key must not be empty"),
    ({"A=B": "x"}, "env key A=B must not contain '='"),
    ({"A\0": "x"}, "env key must not contain NUL bytes"),
    ({"A\0B": "x"}, "env key must not contain NUL bytes"),
    ({"A": "x\0y"}, "env value for A must not contain NUL bytes"),
    ({"KEY": "a\0b"}, "env value for KEY must not contain NUL bytes"),
]


class Closable(Protocol):
    """Anything holding a connection open: a Subscription, a socket, a raw stream."""

    def close(self) -> None:
        """Hang up."""


# -- requests ---------------------------------------------------------------------------------


def failure(call: Callable[..., object], *args: Any, **params: Any) -> tuple[str, str]:
    """The (code, message) of a call that must fail; usually ``failure(api, method, **params)``."""
    try:
        call(*args, **params)
    except RequestFailed as failed:
        return failed.code, failed.message
    raise AssertionError(f"{args[:1]} did not fail")


def invalid_request(reply: dict[str, Any]) -> str:
    """Check an envelope is Herdr's answer to an unparseable request (empty id,
    ``invalid_request``); its message."""
    assert reply["id"] == "", reply
    assert reply["error"]["code"] == "invalid_request", reply
    message: str = reply["error"]["message"]
    return message


def split(herdr_client: HerdrClient, target: str, direction: str = "right", **params: Any) -> str:
    """Split ``target``; the new pane's id."""
    pane: str = herdr_client.call(
        "pane.split", target_pane_id=target, direction=direction, **params
    )["pane"]["pane_id"]
    return pane


def rects(layout: dict[str, Any]) -> dict[str, dict[str, int]]:
    """pane id → rect of a PaneLayoutSnapshot."""
    return {pane["pane_id"]: pane["rect"] for pane in layout["panes"]}


def workspace_ids(herdr_client: HerdrClient) -> list[str]:
    """Workspace ids in display order."""
    return [ws["workspace_id"] for ws in herdr_client.call("workspace.list")["workspaces"]]


def tab_ids(herdr_client: HerdrClient, workspace_id: str = "w1") -> list[str]:
    """A workspace's tab ids in order."""
    return [
        tab["tab_id"] for tab in herdr_client.call("tab.list", workspace_id=workspace_id)["tabs"]
    ]


def pane_ids(herdr_client: HerdrClient, **params: Any) -> list[str]:
    """``pane.list`` ids, in the order the server answers."""
    return [pane["pane_id"] for pane in herdr_client.call("pane.list", **params)["panes"]]


def process_info(herdr_client: HerdrClient, pane: str | None = None) -> dict[str, Any]:
    """The PaneProcessInfo of ``pane`` (or of the focused pane)."""
    params = {} if pane is None else {"pane_id": pane}
    result = herdr_client.call("pane.process_info", **params)
    assert result["type"] == "pane_process_info"
    info: dict[str, Any] = result["process_info"]
    return info


def foreground_names(herdr_client: HerdrClient, pane: str) -> list[str]:
    """Names of the pane's foreground processes."""
    return [
        proc["name"] for proc in process_info(herdr_client, pane).get("foreground_processes", [])
    ]


# -- pane input and output --------------------------------------------------------------------


def enter(herdr_client: HerdrClient, pane: str, command: str) -> None:
    """Type a command line into a pane's shell and press Enter (does not wait)."""
    herdr_client.call("pane.send_input", pane_id=pane, text=command, keys=["Enter"])


def wait_output(
    call: Api,
    pane: str,
    *,
    regex: str | None = None,
    text: str | None = None,
    source: str = "recent",
    timeout_ms: int | None = WAIT_MS,
    **params: Any,
) -> dict[str, Any]:
    """``pane.wait_for_output`` for one ``regex`` or ``text`` (substring) match; what ``call``
    answers (``api``: the OutputMatched result, ``raw``: the envelope). ``timeout_ms=None``
    leaves the bound to the server's default."""
    assert (regex is None) != (text is None), "give exactly one of regex and text"
    match = (
        {"type": "regex", "value": regex} if text is None else {"type": "substring", "value": text}
    )
    if timeout_ms is not None:
        params["timeout_ms"] = timeout_ms
    return call("pane.wait_for_output", pane_id=pane, source=source, match=match, **params)


def wait_line(
    herdr_client: HerdrClient, pane: str, regex: str, timeout_ms: int = WAIT_MS, **params: Any
) -> str:
    """Block server-side until ``regex`` matches a line of the pane (recent output by
    default); that line."""
    line: str = wait_output(herdr_client.call, pane, regex=regex, timeout_ms=timeout_ms, **params)[
        "matched_line"
    ]
    return line


# -- events and connections -------------------------------------------------------------------


def take(sub: Subscription, count: int) -> list[Event]:
    """The next ``count`` event lines (bounded)."""
    return [sub.next(timeout=5 * SCALE) for _ in range(count)]


def kinds(events: list[Event]) -> list[str]:
    """The ``event`` names of some envelopes."""
    return [event["event"] for event in events]


def envelope(kind: str, **data: Any) -> Event:
    """A lifecycle event as pushed: the underscore name, repeated as ``data.type``."""
    return {"event": kind, "data": {"type": kind, **data}}


def focus_events(workspace_id: str, tab_id: str, pane_id: str) -> list[Event]:
    """The focus triple Herdr pushes when focus moves to ``pane_id``."""
    return [
        envelope("workspace_focused", workspace_id=workspace_id),
        envelope("tab_focused", tab_id=tab_id, workspace_id=workspace_id),
        envelope("pane_focused", pane_id=pane_id, workspace_id=workspace_id),
    ]


def events_since(sim: Simulator, mark: int) -> list[tuple[str, dict[str, Any]]]:
    """Lifecycle events emitted after ``mark`` (``len(sim.events)`` taken earlier)."""
    return [(env["event"], env["data"]) for env in sim.events[mark:]]


def kinds_since(sim: Simulator, mark: int) -> list[str]:
    """Just the event names after ``mark``."""
    return [kind for kind, _ in events_since(sim, mark)]


def hang_up(sim: Simulator | None, *held: Closable) -> None:
    """Close connections and, on the simulator, wait until the server has finished every
    connection (a real Herdr's cannot be counted: closing is all a client can do).

    (A subscription still open when the simulator stops leaves a pending queue getter
    that asyncio reports as a destroyed task; see the report on methods/events.py.)
    """
    for connection in held:
        connection.close()
    if sim is not None:
        wait_until(
            lambda: testing.connections(sim) == 0, what="the server to finish the connections"
        )


def reply_after(
    sim: Simulator, send: Callable[[], dict[str, Any]], action: Callable[[], object]
) -> dict[str, Any]:
    """Send a blocking request in the background, run ``action`` once the server holds it,
    and return the request's answer."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(send)
        wait_until(
            lambda: testing.requests_in_flight(sim) > 0, what="the request to be in progress"
        )
        action()
        return waiting.result(timeout=10 * SCALE)


# -- the herdr CLI ----------------------------------------------------------------------------


def cli_json(result: CliResult, request_id: str) -> dict[str, Any]:
    """The ``result`` of a successful JSON-printing CLI call with id ``request_id``."""
    assert result.code == 0, result.stderr
    assert result.json["id"] == request_id
    value: dict[str, Any] = result.json["result"]
    return value


def cli_quiet(result: CliResult) -> None:
    """Check a CLI call succeeded without printing anything."""
    assert (result.code, result.stdout, result.stderr) == (0, "", "")


def cli_error(result: CliResult) -> dict[str, Any]:
    """The error envelope (``id`` and ``error``) of a failed CLI call: exit 1, JSON on stderr,
    nothing on stdout."""
    assert result.code == 1, result
    assert result.stdout == ""
    error: dict[str, Any] = result.error
    return error


# -- the agent engine, driven through its detection seam ------------------------------------------


def get(herdr_client: HerdrClient, pane: str) -> dict[str, Any]:
    """PaneInfo."""
    info: dict[str, Any] = herdr_client.call("pane.get", pane_id=pane)["pane"]
    return info


def record(sim: Simulator, pane: str) -> AgentRecord:
    """The engine's record of a pane (read on the simulator's thread)."""
    return testing.agent_record(sim, pane)


def detect(sim: Simulator, pane: str, agent: str | None, screen: AgentState = "idle") -> None:
    """What process and screen detection would set (the seam the live loop drives)."""
    testing.set_detection(sim, pane, (agent, screen))


def raw_exchange(path: Path, payload: bytes, *, timeout: float = 30.0) -> bytes:
    """Send raw bytes on one connection, half-close, read until the server closes (for
    what no client would send: bad lines, huge lines, bare whitespace)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)
