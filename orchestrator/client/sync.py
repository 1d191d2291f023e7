"""HerdrClient: the synchronous Herdr client the tools stand on.

Two layers:

* :meth:`HerdrClient.execute` runs a named operation (:mod:`.cli_map`) and returns an
  :class:`~orchestrator.client.transports.Exchange` — CLI-shaped (argv, exit code, stdout,
  stderr) whichever transport ran it, with server errors inside, never raised. The tool layer
  reports exchanges.
* typed methods (``workspace_create``, ``pane_read``, ``agent_start`` …) return frozen
  dataclasses from :mod:`.types` and raise :mod:`.errors` exceptions.

Before the first operation that travels over the socket the client pings the server and
refuses one whose protocol is not :data:`PROTOCOL` (:class:`IncompatibleServer`): a different
protocol means different request shapes, and guessing would corrupt state. The CLI transport
needs no such check: Herdr's CLI guards every command itself (``protocol_mismatch``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from orchestrator.client import cli_map
from orchestrator.client.errors import ConnectFailed, error_for
from orchestrator.client.protocol import PROTOCOL, parse_agent_label
from orchestrator.client.protocol.startup import start_agent
from orchestrator.client.transports import (
    AutoTransport,
    CliTransport,
    Exchange,
    SocketTransport,
    Transport,
    default_socket_path,
    exchange_from_envelope,
    not_running_message,
    operation_deadline,
)
from orchestrator.client.types import (
    AgentInfo,
    AgentStarted,
    OutputMatch,
    PaneInfo,
    PaneRead,
    Pong,
    TabCreated,
    TabInfo,
    WorkspaceCreated,
    WorkspaceInfo,
)
from orchestrator.client.wire import EventHooks, InMemoryServer, InMemoryWire

logger = logging.getLogger(__name__)

#: Environment variable choosing the transport: ``auto`` (default), ``socket`` or ``cli``.
TRANSPORT_ENV = "HERDR_ORCHESTRATOR_TRANSPORT"
TransportKind = Literal["auto", "socket", "cli"]
Source = Literal["visible", "recent", "recent-unwrapped", "detection"]


def incompatible_message(server_protocol: int | None, version: str) -> str:
    """The refusal text: both protocol numbers and what to do about it."""
    if server_protocol is None:
        return f"server ping did not include a protocol version (server version {version})"
    side = "newer" if server_protocol < PROTOCOL else "older"
    fix = (
        "restart the Herdr server with a newer Herdr"
        if side == "newer"
        else "upgrade this client (pytest-herdr orchestrator)"
    )
    return (
        f"client protocol {PROTOCOL} is {side} than server protocol {server_protocol} "
        f"(server version {version}); {fix} before using this client"
    )


def pong_refusal(pong: Pong, socket_path: Path | str | None = None) -> tuple[str, str] | None:
    """The error ``(code, message)`` a ping answer stands for; None for a usable server.

    The one reading of a ping for every caller (the client's protocol check, both doctors):
    ``running: false`` (``herdr status server --json`` with no server) is
    ``server_not_running``; a server protocol other than :data:`PROTOCOL`, or a ``herdr``
    executable that reports itself not ``compatible`` with the server, is
    ``protocol_mismatch`` (every later CLI command would be refused that way).
    """
    if pong.running is False:
        where = pong.raw.get("socket") or socket_path or "the Herdr socket"
        return "server_not_running", not_running_message(str(where))
    if pong.protocol != PROTOCOL:
        return "protocol_mismatch", incompatible_message(pong.protocol, pong.version)
    if pong.compatible is False:
        return "protocol_mismatch", (
            f"the herdr executable does not speak the protocol of the server (protocol "
            f"{pong.protocol}, version {pong.version}); every herdr command would fail "
            "protocol_mismatch: use the herdr executable of the server's release"
        )
    return None


class HerdrClient:
    """A synchronous client over one transport (see the module docstring)."""

    def __init__(self, transport: Transport, *, timeout: float = 30.0) -> None:
        self.transport = transport
        self.timeout = timeout
        self._pong: Pong | None = None

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        kind: TransportKind = "auto",
        *,
        socket_path: Path | str | None = None,
        herdr: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        event_hooks: EventHooks | None = None,
    ) -> HerdrClient:
        """A client of ``kind``; the socket path and ``herdr`` default as Herdr's CLI finds
        them (``HERDR_SOCKET_PATH`` / ``HERDR_SESSION`` / default; ``HERDR_BIN_PATH`` / PATH).
        ``event_hooks`` (httpx style, see :mod:`~orchestrator.client.wire`) see every line
        that travels over the socket."""
        environ = dict(os.environ if env is None else env)
        path = Path(socket_path) if socket_path is not None else default_socket_path(environ)
        sock = SocketTransport(path, timeout=timeout, event_hooks=event_hooks)
        cli = CliTransport(herdr, env=environ, timeout=timeout)
        transport: Transport
        if kind == "socket":
            transport = sock
        elif kind == "cli":
            transport = cli
        elif kind == "auto":
            transport = AutoTransport(sock, cli)
        else:
            raise ValueError(f"unknown transport {kind!r} (expected auto, socket or cli)")
        return cls(transport, timeout=timeout)

    @classmethod
    def in_memory(
        cls,
        simulator: InMemoryServer,
        *,
        timeout: float = 30.0,
        event_hooks: EventHooks | None = None,
    ) -> HerdrClient:
        """A socket-transport client of a running simulator that skips its socket: the
        lines go through ``Simulator.call`` (:class:`~orchestrator.client.wire.InMemoryWire`),
        everything else (the protocol check, ``agent start``'s loop, CLI-shaped exchanges)
        is the socket transport's."""
        transport = SocketTransport(
            simulator.socket_path,
            timeout=timeout,
            wire=InMemoryWire(simulator),
            event_hooks=event_hooks,
        )
        return cls(transport, timeout=timeout)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> HerdrClient:
        """A client configured by ``HERDR_ORCHESTRATOR_TRANSPORT`` and Herdr's variables."""
        environ = dict(os.environ if env is None else env)
        kind = environ.get(TRANSPORT_ENV, "auto") or "auto"
        if kind not in ("auto", "socket", "cli"):
            raise ValueError(f"{TRANSPORT_ENV}={kind!r}: expected auto, socket or cli")
        return cls.build(kind, env=environ)  # type: ignore[arg-type]

    # -- protocol check -----------------------------------------------------------------------

    def _socket(self) -> SocketTransport | None:
        transport = self.transport
        if isinstance(transport, SocketTransport):
            return transport
        if isinstance(transport, AutoTransport):
            return transport.socket
        return None

    def connect(self) -> Pong:
        """Ping the server and check it (:func:`pong_refusal`): IncompatibleServer on a
        protocol mismatch, ServerNotRunning when the CLI reports no server."""
        exchange = self._run(cli_map.operation("ping"), {})
        if exchange.error is not None:
            raise error_for(exchange.error["code"], exchange.error["message"])
        pong = Pong.from_wire(exchange.result or {})
        refusal = pong_refusal(pong)
        if refusal is not None:
            raise error_for(*refusal)
        self._pong = pong
        return pong

    def _cli_fallback(self) -> bool:
        """Whether a socket that cannot be reached falls back to the CLI: ``auto`` with a
        ``herdr`` executable (without one the socket's own failure is the true answer: no
        server at its path, not a missing executable)."""
        transport = self.transport
        return isinstance(transport, AutoTransport) and transport.cli.herdr is not None

    def _unreachable(
        self,
        exc: ConnectFailed,
        op: cli_map.Operation,
        params: Mapping[str, Any],
        argv: tuple[str, ...],
        socket_path: Path,
        timeout: float | None,
    ) -> Exchange:
        """The answer when no connection to the socket could be made: with ``auto`` and a
        ``herdr`` executable the operation goes through the CLI (which checks the protocol
        itself) without a second socket attempt; a missing socket is
        ``server_not_running``; anything else is raised."""
        if self._cli_fallback():
            assert isinstance(self.transport, AutoTransport)
            logger.info("no connection to %s: %s through the CLI", socket_path, op.name)
            return self.transport.cli.run(op, params, timeout)
        if exc.missing:
            return _error_exchange(op, argv, "server_not_running", not_running_message(socket_path))
        raise exc

    def _check(
        self, op: cli_map.Operation, params: Mapping[str, Any], timeout: float | None
    ) -> Exchange | None:
        """The protocol check before the first socket operation.

        Returns an exchange when the check settles the call: a refusal, or (auto) the
        operation already run through the CLI because the socket could not be reached.
        """
        sock = self._socket()
        if self._pong is not None or sock is None:
            return None
        argv = ("herdr", *op.cli_argv(params))
        try:
            envelope = sock.request("ping", {}, "api-client:status", self.timeout)
        except ConnectFailed as exc:
            return self._unreachable(exc, op, params, argv, sock.socket_path, timeout)
        pong = Pong.from_wire(dict(envelope.get("result") or {}))
        refusal = pong_refusal(pong, sock.socket_path)
        if refusal is not None:
            logger.warning("server at %s refused: %s", sock.socket_path, refusal[0])
            return _error_exchange(op, argv, *refusal)
        logger.debug("server at %s checked (protocol %s)", sock.socket_path, pong.protocol)
        self._pong = pong
        return None

    # -- the tool layer's entry point ---------------------------------------------------------

    def execute(
        self, operation: str, params: Mapping[str, Any], *, timeout: float | None = None
    ) -> Exchange:
        """Run one operation; server errors come back inside the exchange.

        Raises :class:`~orchestrator.client.errors.TransportError` when the exchange itself
        failed (``maybe_applied`` tells whether a mutation may have run).
        """
        op = cli_map.operation(operation)
        params = cli_map.normalise_params(
            {key: value for key, value in params.items() if value is not None}
        )
        refused = None if op.name == "ping" else self._check(op, params, timeout)
        if refused is not None:
            return refused
        return self._run(op, params, timeout)

    def _run(
        self, op: cli_map.Operation, params: Mapping[str, Any], timeout: float | None = None
    ) -> Exchange:
        if op.name == "agent.start" and self._socket_first():
            return self._agent_start_socket(op, params, timeout)
        return self.transport.run(op, params, timeout)

    def _socket_first(self) -> bool:
        return isinstance(self.transport, SocketTransport | AutoTransport)

    def _agent_start_socket(
        self, op: cli_map.Operation, params: Mapping[str, Any], timeout: float | None
    ) -> Exchange:
        sock = self._socket()
        assert sock is not None
        deadline = operation_deadline(op, params, self.timeout if timeout is None else timeout)
        argv = ("herdr", *op.cli_argv(params))
        wire = {"name": params["name"], "kind": params["kind"], "pane_id": params["pane_id"]}
        wire["args"] = list(params.get("args") or [])
        if params.get("timeout_ms") is not None:
            wire["timeout_ms"] = params["timeout_ms"]
        launched: list[bool] = []

        def send(rid: str, method: str, p: dict[str, Any], _checked: bool) -> dict[str, Any]:
            # the protocol was checked once for this client: no per-request guard
            if method == "agent.start":
                launched.append(True)
            return sock.request(method, p, rid, deadline)

        # Herdr compares the detected agent with the kind's canonical label (an alias such as
        # ``claude-code`` is detected as ``claude``), so the comparison must use it too.
        kind = str(params["kind"])
        try:
            envelope = start_agent(send, wire, parse_agent_label(kind) or kind)
        except ConnectFailed as exc:
            # The reads before the method are the reachability check (no ping of its own,
            # one request fewer a spawn): a socket gone before ``agent.start`` went out is
            # unreachable, with nothing run; after it, the start may have happened.
            if launched:
                raise
            return self._unreachable(exc, op, params, argv, sock.socket_path, timeout)
        return exchange_from_envelope(op, params, envelope, argv, "socket")

    # -- typed calls --------------------------------------------------------------------------

    def call(self, operation: str, params: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        """``execute`` then the result, raising the error family of a refusal."""
        exchange = self.execute(operation, params or {}, **kw)
        if exchange.error is not None:
            raise error_for(str(exchange.error.get("code")), str(exchange.error.get("message", "")))
        return exchange.result or {}

    def ping(self) -> Pong:
        """The server's version and protocol (checks compatibility)."""
        return self.connect()

    def workspace_list(self) -> list[WorkspaceInfo]:
        """Every workspace, in display order."""
        result = self.call("workspace.list")
        return [WorkspaceInfo.from_wire(w) for w in result.get("workspaces", [])]

    def workspace_get(self, workspace_id: str) -> WorkspaceInfo:
        """One workspace."""
        return WorkspaceInfo.from_wire(
            self.call("workspace.get", {"workspace_id": workspace_id})["workspace"]
        )

    def workspace_create(
        self,
        cwd: str | None = None,
        *,
        label: str | None = None,
        env: Mapping[str, str] | None = None,
        focus: bool = False,
    ) -> WorkspaceCreated:
        """A new workspace (focus left alone unless asked)."""
        params = {"cwd": cwd, "label": label, "env": dict(env or {}) or None, "focus": focus}
        return WorkspaceCreated.from_wire(self.call("workspace.create", params))

    def tab_list(self, workspace_id: str | None = None) -> list[TabInfo]:
        """Tabs of one workspace, or of all."""
        result = self.call("tab.list", {"workspace_id": workspace_id})
        return [TabInfo.from_wire(t) for t in result.get("tabs", [])]

    def tab_get(self, tab_id: str) -> TabInfo:
        """One tab."""
        return TabInfo.from_wire(self.call("tab.get", {"tab_id": tab_id})["tab"])

    def tab_create(
        self,
        workspace_id: str,
        cwd: str | None = None,
        *,
        label: str | None = None,
        env: Mapping[str, str] | None = None,
        focus: bool = False,
    ) -> TabCreated:
        """A new tab in ``workspace_id``."""
        params = {
            "workspace_id": workspace_id,
            "cwd": cwd,
            "label": label,
            "env": dict(env or {}) or None,
            "focus": focus,
        }
        return TabCreated.from_wire(self.call("tab.create", params))

    def pane_list(self, workspace_id: str | None = None) -> list[PaneInfo]:
        """Panes of one workspace, or of all."""
        result = self.call("pane.list", {"workspace_id": workspace_id})
        return [PaneInfo.from_wire(p) for p in result.get("panes", [])]

    def pane_get(self, pane_id: str) -> PaneInfo:
        """One pane."""
        return PaneInfo.from_wire(self.call("pane.get", {"pane_id": pane_id})["pane"])

    def pane_layout(self, pane_id: str) -> dict[str, Any]:
        """The layout snapshot of the pane's tab."""
        layout: dict[str, Any] = self.call("pane.layout", {"pane_id": pane_id})["layout"]
        return layout

    def pane_process_info(self, pane_id: str) -> dict[str, Any]:
        """The pane's shell and foreground processes."""
        info: dict[str, Any] = self.call("pane.process_info", {"pane_id": pane_id})["process_info"]
        return info

    def pane_edges(self, pane_id: str) -> dict[str, Any]:
        """Which sides of the tab area the pane touches."""
        edges: dict[str, Any] = self.call("pane.edges", {"pane_id": pane_id})["edges"]
        return edges

    def pane_split(
        self,
        pane_id: str,
        direction: Literal["right", "down"],
        *,
        ratio: float | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        focus: bool = False,
    ) -> PaneInfo:
        """The new pane split off ``pane_id``."""
        params = {
            "target_pane_id": pane_id,
            "direction": direction,
            "ratio": ratio,
            "cwd": cwd,
            "env": dict(env or {}) or None,
            "focus": focus,
        }
        return PaneInfo.from_wire(self.call("pane.split", params)["pane"])

    def pane_read(
        self, pane_id: str, source: Source = "recent", lines: int | None = None
    ) -> PaneRead:
        """The pane's text (over the CLI only ``text`` and the request's fields are known)."""
        params = {"pane_id": pane_id, "source": source, "lines": lines}
        return PaneRead.from_wire(self.call("pane.read", params)["read"])

    def pane_run(self, pane_id: str, command: str) -> None:
        """Type ``command`` and Enter into the pane."""
        self.call("pane.run", {"pane_id": pane_id, "command": command})

    def pane_close(self, pane_id: str) -> None:
        """Close the pane (its processes end)."""
        self.call("pane.close", {"pane_id": pane_id})

    def agent_send_keys(self, target: str, *keys: str) -> None:
        """Press ``keys`` in the agent's pane (``"Escape"``, ``"Enter"`` …)."""
        self.call("agent.send_keys", {"target": target, "keys": list(keys)})

    def pane_send_text(self, pane_id: str, text: str) -> None:
        """Type ``text`` (no Enter)."""
        self.call("pane.send_text", {"pane_id": pane_id, "text": text})

    def pane_wait_output(
        self,
        pane_id: str,
        pattern: str,
        *,
        regex: bool = False,
        source: Source = "recent",
        lines: int | None = None,
        timeout_ms: int | None = None,
    ) -> OutputMatch:
        """Wait (server side) for a line matching ``pattern``."""
        params = {
            "pane_id": pane_id,
            "source": source,
            "lines": lines,
            "match": {"type": "regex" if regex else "substring", "value": pattern},
            "timeout_ms": timeout_ms,
        }
        return OutputMatch.from_wire(self.call("pane.wait_for_output", params))

    def agent_list(self) -> list[AgentInfo]:
        """Every agent Herdr recognises."""
        return [AgentInfo.from_wire(a) for a in self.call("agent.list").get("agents", [])]

    def agent_get(self, target: str) -> AgentInfo:
        """One agent by name or pane id."""
        return AgentInfo.from_wire(self.call("agent.get", {"target": target})["agent"])

    def agent_read(
        self, target: str, source: Source = "recent", lines: int | None = None
    ) -> PaneRead:
        """The agent pane's text."""
        params = {"target": target, "source": source, "lines": lines}
        return PaneRead.from_wire(self.call("agent.read", params)["read"])

    def agent_start(
        self,
        name: str,
        kind: str,
        pane_id: str,
        *,
        args: Sequence[str] = (),
        timeout_ms: int | None = None,
    ) -> AgentStarted:
        """Start an agent and wait until it is interactive (as ``herdr agent start`` does)."""
        params = {
            "name": name,
            "kind": kind,
            "pane_id": pane_id,
            "args": list(args) or None,
            "timeout_ms": timeout_ms,
        }
        return AgentStarted.from_wire(self.call("agent.start", params))

    def agent_wait(
        self, target: str, *, until: Sequence[str] = (), timeout_ms: int | None = None
    ) -> AgentInfo:
        """Wait for a status in ``until`` (Herdr's default: idle, done, blocked)."""
        params = {"target": target, "until": list(until) or None, "timeout_ms": timeout_ms}
        return AgentInfo.from_wire(self.call("agent.wait", params)["agent"])

    def agent_prompt(
        self,
        target: str,
        text: str,
        *,
        wait: bool = False,
        until: Sequence[str] = (),
        timeout_ms: int | None = None,
    ) -> AgentInfo:
        """Send a prompt; with ``wait`` return once the agent settles."""
        params: dict[str, Any] = {"target": target, "text": text}
        if wait:
            params["wait"] = {
                k: v
                for k, v in (("until", list(until) or None), ("timeout_ms", timeout_ms))
                if v is not None
            }
        return AgentInfo.from_wire(self.call("agent.prompt", params)["agent"])

    def agent_explain(self, target: str) -> dict[str, Any]:
        """Herdr's detection explanation for the agent."""
        explain: dict[str, Any] = self.call("agent.explain", {"target": target})["explain"]
        return explain


def _error_exchange(
    op: cli_map.Operation, argv: tuple[str, ...], code: str, message: str
) -> Exchange:
    stderr = cli_map.render_error(op.request_id, code, message)
    return Exchange(argv, 1, "", stderr, None, {"code": code, "message": message}, "socket")
