"""The request layer every socket command goes through: protocol guard, error mapping.

Before each operation real Herdr's CLI sends ``ping`` (request id ``api-client:status``) on
a connection of its own and refuses to send the operation when the server's protocol
differs from its own; a different *version* with the same protocol is fine. This module
reproduces that guard and turns transport failures into the exact exits Herdr produces
(see :mod:`herdr_sim.herdr_cli.errors`).
"""

from __future__ import annotations

from . import transport
from .errors import FatalError, ProtocolMismatchReported, ServerNotRunningError
from .output import (
    dumps,
    print_response,
    rust_custom_error,
    rust_debug_str,
    rust_os_error,
    rust_os_error_display,
    write_err,
)

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from orchestrator.client.socket_paths import ResolvedSocket

    from .ssh_bridge import SshBridge

__all__ = ["PING_REQUEST_ID", "Context", "PingStatus", "client_protocol"]

#: The id of the guard's ``ping`` (and of ``herdr status``'s).
PING_REQUEST_ID = "api-client:status"


def client_protocol() -> int:
    """The protocol number this CLI speaks (:data:`orchestrator.client.protocol.PROTOCOL`)."""
    from orchestrator.client.protocol import PROTOCOL

    return PROTOCOL


def _json_error_debug(err: ValueError) -> tuple[str, str]:
    """``(Debug, Display)`` of the ``serde_json`` error Herdr would report for bad JSON."""
    message = getattr(err, "msg", str(err))
    line = getattr(err, "lineno", 1)
    column = getattr(err, "colno", 1)
    wording = {
        "Expecting value": "expected value",
        "Extra data": "trailing characters",
        "Unterminated string starting at": "EOF while parsing a string",
        "Expecting property name enclosed in double quotes": "key must be a string",
        "Expecting ':' delimiter": "expected `:`",
        "Expecting ',' delimiter": "expected `,` or `}`",
    }.get(message, message[:1].lower() + message[1:])
    debug = f"Json(Error({rust_debug_str(wording)}, line: {line}, column: {column}))"
    return debug, f"{wording} at line {line} column {column}"


def _error_response_debug(response: dict[str, Any]) -> str:
    error = response.get("error") if isinstance(response.get("error"), dict) else {}
    assert isinstance(error, dict)
    return (
        "ErrorResponse(ErrorResponse { id: "
        + rust_debug_str(str(response.get("id", "")))
        + ", error: ErrorBody { code: "
        + rust_debug_str(str(error.get("code", "")))
        + ", message: "
        + rust_debug_str(str(error.get("message", "")))
        + " } })"
    )


def _remote_failure(message: str) -> FatalError:
    """An ``io::Error`` with a custom message escaping Herdr's ``main``."""
    return FatalError(rust_custom_error(rust_debug_str(message)), message)


class PingStatus:
    """What a successful ``ping`` told us about the server."""

    __slots__ = ("capabilities", "protocol", "version")

    def __init__(self, version: str | None, protocol: int, capabilities: Any) -> None:
        self.version = version
        self.protocol = protocol
        self.capabilities = capabilities


class Context:
    """Everything a command needs: the environment and the resolved socket."""

    def __init__(
        self, env: Mapping[str, str], socket: ResolvedSocket, bridge: SshBridge | None = None
    ) -> None:
        self.env = env
        self.socket = socket
        #: The SSH bridge of a ``--machine`` command (``None``: the local socket).
        self.bridge = bridge

    @property
    def is_remote(self) -> bool:
        """Whether this command runs on a saved machine (``--machine``)."""
        return self.bridge is not None

    @property
    def socket_path(self) -> str:
        """The API socket as a string, the form the transport wants."""
        return self.socket.socket_path

    # -- error mapping -------------------------------------------------------------------

    def _not_running(self, request_id: str) -> ServerNotRunningError:
        message = (
            f"no herdr server is running at {self.socket.socket_path}; "
            f"run `{self.socket.startup_command()}` to start or attach it"
        )
        return ServerNotRunningError(
            {"id": request_id, "error": {"code": "server_not_running", "message": message}}
        )

    def _call(
        self,
        request_id: str,
        method: str,
        params: dict[str, Any],
        *,
        error_id: str,
    ) -> Any:
        """One exchange, with transport failures mapped as Herdr maps them."""
        if self.bridge is not None:
            return self._call_remote(request_id, method, params)
        try:
            return transport.request(self.socket_path, request_id, method, params)
        except transport.ServerNotRunning:
            raise self._not_running(error_id) from None
        except transport.IoFailure as err:
            raise FatalError(
                rust_os_error(err.os_error), rust_os_error_display(err.os_error)
            ) from None
        except transport.EmptyResponse:
            raise FatalError(rust_custom_error("EmptyResponse"), "empty api response") from None
        except transport.BadResponse as err:
            debug, display = _json_error_debug(err.decode_error)
            raise FatalError(rust_custom_error(debug), display) from None

    def _call_remote(self, request_id: str, method: str, params: dict[str, Any]) -> Any:
        """One exchange over the SSH bridge; failures wrapped as Herdr wraps them."""
        from .ssh_bridge import BridgeError

        bridge = self.bridge
        assert bridge is not None
        profile = bridge.profile
        try:
            bridge.start()
        except BridgeError as err:
            raise _remote_failure(f"machine '{profile.label}': {err}") from None
        where = f"machine '{profile.label}' (session {profile.session})"
        try:
            line = bridge.exchange(transport.encode_request(request_id, method, params))
            return transport.decode_reply(line)
        except BridgeError as err:
            raise _remote_failure(f"{where}: {err}") from None
        except transport.EmptyResponse:
            raise _remote_failure(f"{where}: empty api response") from None
        except transport.BadResponse as err:
            _debug, display = _json_error_debug(err.decode_error)
            raise _remote_failure(f"{where}: {display}") from None
        except transport.IoFailure as err:
            raise _remote_failure(f"{where}: {rust_os_error_display(err.os_error)}") from None

    def ping(self, error_id: str = PING_REQUEST_ID) -> PingStatus:
        """Send ``ping`` and decode the ``pong``; errors carry ``error_id``."""
        response = self._call(PING_REQUEST_ID, "ping", {}, error_id=error_id)
        if isinstance(response, dict) and "error" in response and "result" not in response:
            debug = _error_response_debug(response)
            message = response.get("error", {}).get("message", "")
            raise FatalError(rust_custom_error(debug), str(message))
        result = response.get("result") if isinstance(response, dict) else None
        if not isinstance(result, dict) or result.get("type") != "pong":
            text = dumps(result)
            raise FatalError(
                rust_custom_error(f"UnexpectedResult({rust_debug_str(text)})"),
                f"unexpected api result: {text}",
            )
        protocol = result.get("protocol")
        if not isinstance(protocol, int) or isinstance(protocol, bool) or protocol < 0:
            message = "server ping did not include a protocol version"
            raise FatalError(rust_custom_error(rust_debug_str(message)), message)
        version = result.get("version")
        return PingStatus(
            version if isinstance(version, str) else None, protocol, result.get("capabilities")
        )

    def ensure_compatible(self, request_id: str) -> None:
        """The protocol guard: ping, and refuse to continue on a protocol mismatch."""
        server = self.ping(request_id).protocol
        client = client_protocol()
        if server == client:
            return
        if client > server:
            message = (
                f"client protocol {client} is newer than server protocol {server}; restart "
                f"the Herdr server before using this command. {self.socket.restart_guidance()}"
            )
        else:
            message = (
                f"client protocol {client} is older than server protocol {server}; "
                "upgrade the Herdr client before using this command"
            )
        envelope = {"id": request_id, "error": {"code": "protocol_mismatch", "message": message}}
        write_err(dumps(envelope, sort_keys=False))
        raise ProtocolMismatchReported

    # -- what commands call ---------------------------------------------------------------

    def send(self, request_id: str, method: str, params: dict[str, Any]) -> Any:
        """Herdr's ``send_request``: protocol guard, then the operation on a new connection."""
        self.ensure_compatible(request_id)
        return self._call(request_id, method, params, error_id=request_id)

    def send_unchecked(self, request_id: str, method: str, params: dict[str, Any]) -> Any:
        """Herdr's ``send_request_unchecked``: the operation alone, no ``ping`` first."""
        return self._call(request_id, method, params, error_id=request_id)

    def print_method(self, request_id: str, method: str, params: dict[str, Any]) -> int:
        """Send and print the whole response (the JSON-printing commands)."""
        return print_response(self.send(request_id, method, params))

    def send_ok(self, method: str, params: dict[str, Any]) -> int:
        """Herdr's ``send_ok_request`` (id ``cli:request``): silent on success."""
        response = self.send("cli:request", method, params)
        if isinstance(response, dict) and "error" in response:
            write_err(dumps(response))
            return 1
        return 0
