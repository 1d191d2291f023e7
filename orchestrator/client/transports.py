"""How requests reach Herdr: the Unix socket, the ``herdr`` CLI, or socket-then-CLI.

Every transport runs an :class:`~orchestrator.client.cli_map.Operation` and returns an
:class:`Exchange` shaped as Herdr's CLI would have answered (argv, exit code, stdout, stderr),
whichever way the request travelled, so the tool layer reports one format. Server error
envelopes are part of an exchange; failures of the exchange itself raise
:class:`~orchestrator.client.errors.TransportError`.

Retry policy, the reason this module exists: a request is re-sent another way only when it
certainly was not sent (the socket connection could not be made), or when it is a read. A
mutation whose connection broke after it was written may have been applied, so it is
reported, never repeated.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Protocol

from orchestrator.client import cli_map, socket_paths
from orchestrator.client import wire as _wire
from orchestrator.client.child_env import child_env
from orchestrator.client.cli_map import Operation, Params
from orchestrator.client.errors import ConnectFailed, ProtocolError, TransportError
from orchestrator.client.protocol import startup as agent_start

logger = logging.getLogger(__name__)

TransportName = Literal["socket", "cli"]

#: Extra seconds our own deadline allows beyond a server-side wait's ``timeout_ms``.
WAIT_MARGIN = 5.0


@dataclass(frozen=True)
class Exchange:
    """One operation's outcome, CLI-shaped whichever transport ran it.

    ``argv`` is the CLI form of the request (``herdr …``) even over the socket; ``result`` is
    the socket result (or what the CLI's stdout says of it); ``error`` is Herdr's error
    object ``{"code", "message"}`` when it refused.

    ``stdout`` is what Herdr's CLI printed, or would have printed. Over the socket it is
    rendered from the result only when read (``render``): the low-level tools that report
    text read it, the typed methods and the agent tools never pay for it.
    """

    argv: tuple[str, ...]
    exit_code: int
    printed: str | None
    stderr: str
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    transport: TransportName
    render: Callable[[], str] | None = field(default=None, repr=False, compare=False)

    @cached_property
    def stdout(self) -> str:
        """The CLI's stdout (rendered on first use for a socket exchange)."""
        if self.printed is not None:
            return self.printed
        return self.render() if self.render is not None else ""

    @property
    def ok(self) -> bool:
        """Whether Herdr accepted the request."""
        return self.exit_code == 0 and self.error is None


class Transport(Protocol):
    """Anything that can run an operation."""

    name: str

    def run(self, op: Operation, params: Params, timeout: float | None = None) -> Exchange:
        """Run ``op``; raise TransportError when the exchange itself failed."""
        ...


def operation_deadline(op: Operation, params: Params, timeout: float) -> float:
    """Our deadline for one exchange: ``timeout``, or a server-side wait plus a margin.

    ``agent start`` always waits: Herdr's own budget (``timeout_ms``, 30 s by default) after
    up to :data:`~orchestrator.client.protocol.startup.BUSY_RETRY_WINDOW` of busy-pane retries, so
    our deadline is that budget plus the margin; a deadline equal to Herdr's budget would kill
    ``herdr agent start`` just before it answers while the agent keeps launching.
    """
    wait_ms = params.get("timeout_ms")
    nested = params.get("wait")
    if isinstance(nested, Mapping):
        wait_ms = nested.get("timeout_ms", wait_ms)
    extra = 0.0
    if op.name == "agent.start":
        wait_ms = agent_start.DEFAULT_TIMEOUT_MS if wait_ms is None else wait_ms
        extra = agent_start.BUSY_RETRY_WINDOW
    if isinstance(wait_ms, int | float) and not isinstance(wait_ms, bool):
        return max(timeout, wait_ms / 1000.0 + extra + WAIT_MARGIN)
    return timeout


def default_socket_path(env: Mapping[str, str]) -> Path:
    """Herdr's own socket resolution for ``env``: ``HERDR_SOCKET_PATH``, ``HERDR_SESSION``,
    the default session, under Herdr's directory (``~/.config/herdr``). The rules are
    :mod:`orchestrator.client.socket_paths`' (the simulator's CLI resolves by the same ones,
    under its own directory); an invalid ``HERDR_SESSION`` is
    :class:`~orchestrator.client.socket_paths.SessionNameError`, as Herdr refuses it."""
    herdr_env = {k: v for k, v in env.items() if k != socket_paths.CONFIG_DIR_ENV}
    herdr_env[socket_paths.HERDR_PATHS_ENV] = "1"
    return socket_paths.resolve_socket(None, herdr_env).path


def not_running_message(path: Path | str) -> str:
    """Herdr's ``server_not_running`` message for a default-session or override socket."""
    return f"no herdr server is running at {path}; run `herdr` to start or attach it"


class SocketTransport:
    """One request per connection on Herdr's Unix socket, with deadlines on every step.

    ``wire``: another wire transport to carry the lines instead of the socket, e.g.
    :class:`~orchestrator.client.wire.InMemoryWire` (a Simulator without its socket).
    ``event_hooks`` / ``observers``: as :class:`~orchestrator.client.wire.WireClient`'s,
    told every request line and response envelope.
    """

    name = "socket"

    def __init__(
        self,
        socket_path: Path | str,
        *,
        connect_timeout: float = 5.0,
        timeout: float = 30.0,
        wire: _wire.WireTransport | None = None,
        event_hooks: _wire.EventHooks | None = None,
        observers: Sequence[_wire.Observer] = (),
    ) -> None:
        self.socket_path = Path(socket_path)
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        self.wire = wire
        self.event_hooks = _wire.hook_table(event_hooks, observers)

    def request(
        self, method: str, params: Mapping[str, Any], request_id: str, timeout: float
    ) -> dict[str, Any]:
        """Send one request and return the response envelope.

        Raises ConnectFailed when no connection could be made (nothing was sent) and
        TransportError(maybe_applied=True) when the connection failed after sending.
        """
        request_line = {"id": request_id, "method": method, "params": dict(params)}
        _wire.tell(self.event_hooks, "request", request_line)
        envelope = self._exchange(request_line, timeout)
        _wire.tell(self.event_hooks, "response", envelope)
        return envelope

    def _exchange(self, request_line: dict[str, Any], timeout: float) -> dict[str, Any]:
        method = request_line["method"]
        if self.wire is not None:
            return self.wire.send(request_line, timeout, self.connect_timeout)
        line = _wire.encode_request(request_line["id"], method, request_line["params"])
        try:
            sock = _wire.connect(self.socket_path, self.connect_timeout)
        except OSError as exc:
            missing = exc.errno in {errno.ENOENT, errno.ECONNREFUSED, errno.ENOTDIR}
            raise ConnectFailed(
                f"cannot connect to {self.socket_path}: {exc.strerror or exc}",
                missing=missing,
            ) from exc
        try:
            sock.settimeout(timeout)
            sock.sendall(line)
            data: bytes | None = _wire.read_line(sock, time.monotonic() + timeout)
        except ProtocolError:
            data = None
        except TimeoutError as exc:
            raise TransportError(
                f"{method}: no answer within {timeout:g} s", maybe_applied=True
            ) from exc
        except OSError as exc:
            raise TransportError(f"{method}: {exc}", maybe_applied=True) from exc
        finally:
            sock.close()
        if data is None:
            raise TransportError(
                f"{method}: connection closed before a response line", maybe_applied=True
            )
        try:
            envelope = json.loads(data)
        except ValueError as exc:
            raise TransportError(
                f"{method}: unreadable response: {exc}", maybe_applied=True
            ) from exc
        if not isinstance(envelope, dict):
            raise TransportError(f"{method}: response is not an object", maybe_applied=True)
        return envelope

    def run(self, op: Operation, params: Params, timeout: float | None = None) -> Exchange:
        """Run ``op`` over the socket; a missing server answers ``server_not_running``."""
        deadline = operation_deadline(op, params, self.timeout if timeout is None else timeout)
        argv = ("herdr", *op.cli_argv(params))
        try:
            envelope = self.request(op.method, op.wire_params(params), op.request_id, deadline)
        except ConnectFailed as exc:
            if not exc.missing:
                raise
            return not_running(op, argv, self.socket_path)
        return exchange_from_envelope(op, params, envelope, argv, "socket")


def not_running(op: Operation, argv: tuple[str, ...], socket_path: Path) -> Exchange:
    """Herdr's ``server_not_running`` answer for ``op``: nothing listens at ``socket_path``."""
    error = {"code": "server_not_running", "message": not_running_message(socket_path)}
    stderr = cli_map.render_error(op.request_id, error["code"], error["message"])
    return Exchange(argv, 1, "", stderr, None, error, "socket")


def exchange_from_envelope(
    op: Operation,
    params: Params,
    envelope: Mapping[str, Any],
    argv: tuple[str, ...],
    transport: TransportName,
) -> Exchange:
    """Render a socket response as the CLI would have printed it."""
    error = envelope.get("error")
    if isinstance(error, dict):
        rid = envelope.get("id") or op.request_id
        stderr = cli_map.render_error(
            str(rid), str(error.get("code")), str(error.get("message", ""))
        )
        return Exchange(argv, 1, "", stderr, None, dict(error), transport)
    result = envelope.get("result")
    result = dict(result) if isinstance(result, dict) else {}

    def render() -> str:
        return cli_map.render_stdout(op, params, result)

    return Exchange(argv, 0, None, "", result, None, transport, render)


def find_herdr(env: Mapping[str, str], configured: Path | str | None = None) -> Path | None:
    """The ``herdr`` executable: configured path, ``$HERDR_BIN_PATH``, then PATH."""
    if configured:
        return Path(configured)
    from_env = env.get("HERDR_BIN_PATH", "")
    if from_env:
        return Path(from_env)
    found = shutil.which("herdr", path=env.get("PATH", os.defpath))
    return Path(found) if found else None


class CliTransport:
    """Runs the ``herdr`` executable, one process per operation, as a shell script would.

    ``machine`` (a saved machine's label or profile id) puts Herdr's global prefix
    ``--machine <machine>`` before every command: Herdr forwards it over SSH to that
    machine's server (the only transport to a remote machine). ``HERDR_PANE_ID`` is not
    passed on then: a local pane id means nothing on another server.
    """

    name = "cli"

    def __init__(
        self,
        herdr: Path | str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        machine: str | None = None,
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self.herdr = find_herdr(self.env, herdr)
        self.timeout = timeout
        if machine is not None and (not machine or machine.startswith("-")):
            raise ValueError(f"not a machine label or profile id: {machine!r}")
        self.machine = machine
        if machine is not None:
            self.env.pop("HERDR_PANE_ID", None)

    def run(self, op: Operation, params: Params, timeout: float | None = None) -> Exchange:
        """Run ``herdr ARGV``; its exit code, stdout and stderr make the exchange.

        A value Herdr's CLI would read as something else (:func:`cli_map.cli_refusal`) is
        refused before anything runs: exit code 2 and ``invalid_cli_argument``, nothing sent.
        Herdr's output is UTF-8 whatever the locale; undecodable bytes become U+FFFD.
        """
        args = op.cli_argv(params)
        if self.machine is not None:
            args = ["--machine", self.machine, *args]
        argv = ("herdr", *args)
        refusal = cli_map.cli_refusal(op, params)
        if refusal is not None:
            stderr = cli_map.render_error(op.request_id, "invalid_cli_argument", refusal)
            error = {"code": "invalid_cli_argument", "message": refusal}
            return Exchange(argv, 2, "", stderr, None, error, "cli")
        if self.herdr is None:
            raise ConnectFailed("no herdr executable (HERDR_BIN_PATH or PATH)", missing=False)
        deadline = operation_deadline(op, params, self.timeout if timeout is None else timeout)
        try:
            done = subprocess.run(
                [str(self.herdr), *args],
                env=child_env(self.env),  # herdr needs none of our secrets
                capture_output=True,
                encoding="utf-8",
                errors="replace",
                timeout=deadline,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise TransportError(
                f"herdr {' '.join(args[:2])}: no answer within {deadline:g} s",
                maybe_applied=True,
            ) from exc
        except OSError as exc:
            raise ConnectFailed(f"cannot run {self.herdr}: {exc}", missing=False) from exc
        return exchange_from_cli(op, params, argv, done.returncode, done.stdout, done.stderr)


def exchange_from_cli(
    op: Operation, params: Params, argv: tuple[str, ...], code: int, stdout: str, stderr: str
) -> Exchange:
    """Read a finished CLI run back into an exchange (result or Herdr's error object)."""
    if code == 0:
        if op.name == "ping":
            return Exchange(argv, 0, stdout, stderr, _pong_from_status(stdout), None, "cli")
        result = cli_map.parse_stdout(op, params, stdout)
        return Exchange(argv, 0, stdout, stderr, result, None, "cli")
    envelope = cli_map.parse_stderr(stderr)
    if envelope is not None:
        error = dict(envelope["error"])
    elif code == 2:
        error = {"code": "usage_error", "message": stderr.strip()}
    elif stderr.startswith("Error: "):
        # Rust's `Error: <Debug>`: the CLI's own I/O with the server failed (a dropped
        # connection, an empty response); like a socket I/O failure, the request may have run
        error = {"code": "transport_error", "message": stderr.strip(), "maybeApplied": True}
    else:
        error = {"code": "cli_error", "message": stderr.strip() or f"herdr exited {code}"}
    return Exchange(argv, code, stdout, stderr, None, error, "cli")


def _pong_from_status(stdout: str) -> dict[str, Any] | None:
    try:
        status = json.loads(stdout)
    except ValueError:
        return None
    if not isinstance(status, dict):
        return None
    return {
        "type": "pong",
        "version": status.get("version"),
        "protocol": status.get("protocol"),
        "running": status.get("running"),
        "compatible": status.get("compatible"),
        "socket": status.get("socket"),
    }


class AutoTransport:
    """The socket first; the CLI when a socket connection cannot be MADE.

    A connection that could not be made sent nothing, so running the operation through the
    CLI cannot duplicate it. Once a request may have been written, a read is safe to repeat
    through the CLI; a mutation is reported as a TransportError (``maybe_applied``) instead.
    """

    name = "auto"

    def __init__(self, socket_transport: SocketTransport, cli_transport: CliTransport) -> None:
        self.socket = socket_transport
        self.cli = cli_transport

    def run(self, op: Operation, params: Params, timeout: float | None = None) -> Exchange:
        """Run ``op``: socket, else CLI under the rules above."""
        deadline = operation_deadline(
            op, params, self.socket.timeout if timeout is None else timeout
        )
        argv = ("herdr", *op.cli_argv(params))
        try:
            envelope = self.socket.request(
                op.method, op.wire_params(params), op.request_id, deadline
            )
        except ConnectFailed as exc:
            if self.cli.herdr is None:
                # no CLI to fall back on: the socket's failure is the true cause, and a
                # missing socket is Herdr's server_not_running (as over the socket alone)
                if exc.missing:
                    return not_running(op, argv, self.socket.socket_path)
                raise
            logger.info("%s: the socket could not be reached; through the CLI", op.method)
            return self.cli.run(op, params, timeout)
        except TransportError:
            if op.mutation:
                logger.warning("%s: the socket failed mid-request (may be applied)", op.method)
                raise
            logger.info("%s: the socket failed mid-request; the read through the CLI", op.method)
            return self.cli.run(op, params, timeout)
        return exchange_from_envelope(op, params, envelope, argv, "socket")
