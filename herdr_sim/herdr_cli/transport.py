"""One request per connection over Herdr's Unix socket, exactly as Herdr's CLI does it.

Each call connects, writes one JSON object followed by ``\\n``, reads one line, and
closes. Real Herdr's CLI never pipelines and sets no timeout on ordinary requests (a
``agent wait`` without ``--timeout`` blocks for as long as the server does), so ``timeout``
defaults to ``None`` here too; only ``server stop`` bounds its exchange.

The module uses the low-level ``_socket`` extension instead of :mod:`socket`: the CLI runs
once per command inside every simulated pane, and :mod:`socket` pulls in :mod:`enum` and
:mod:`selectors` for features a single blocking exchange does not need.
"""

from __future__ import annotations

import _socket
import errno
import json
from typing import Any

__all__ = [
    "BadResponse",
    "EmptyResponse",
    "IoFailure",
    "ServerNotRunning",
    "TransportError",
    "connect",
    "encode_request",
    "request",
]

_NOT_RUNNING_ERRNOS = frozenset({errno.ENOENT, errno.ECONNREFUSED})
_CHUNK = 65536


class TransportError(Exception):
    """Base class of everything a request can fail with below the JSON level."""


class ServerNotRunning(TransportError):
    """Nothing listens on the socket (missing file or refused connection).

    Herdr classifies exactly these two errors as ``server_not_running``; every other
    failure keeps its own identity.
    """

    def __init__(self, err: OSError) -> None:
        super().__init__(str(err))
        self.os_error = err


class IoFailure(TransportError):
    """Any other operating-system error while talking to the server."""

    def __init__(self, err: OSError) -> None:
        super().__init__(str(err))
        self.os_error = err


class EmptyResponse(TransportError):
    """The server closed the connection without sending a line."""


class BadResponse(TransportError):
    """The line the server sent is not valid JSON."""

    def __init__(self, err: ValueError) -> None:
        super().__init__(str(err))
        self.decode_error = err


def encode_request(request_id: str, method: str, params: dict[str, Any]) -> bytes:
    """The wire form of a request: compact JSON with ``id``, ``method``, ``params``."""
    body = {"id": request_id, "method": method, "params": params}
    return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode(
        "utf-8", "surrogateescape"
    )


def connect(path: str, timeout: float | None = None) -> _socket.socket:
    """Open a connection to the Unix socket at ``path``.

    Raises :class:`ServerNotRunning` for a missing or refused socket and
    :class:`IoFailure` for any other error.
    """
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
    except OSError as err:
        sock.close()
        if err.errno in _NOT_RUNNING_ERRNOS:
            raise ServerNotRunning(err) from None
        raise IoFailure(err) from None
    return sock


def read_line(sock: _socket.socket) -> bytes:
    """Read up to and including the first newline, or whatever arrives before EOF."""
    chunks: list[bytes] = []
    while True:
        chunk = sock.recv(_CHUNK)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[: newline + 1])
            break
        chunks.append(chunk)
    return b"".join(chunks)


def exchange(sock: _socket.socket, payload: bytes) -> Any:
    """Send ``payload`` on an open connection and decode the one-line JSON reply."""
    try:
        sock.sendall(payload)
        line = read_line(sock)
    except OSError as err:
        raise IoFailure(err) from None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise IoFailure(OSError(errno.EINVAL, "stream did not contain valid UTF-8")) from None
    if not text.strip():
        raise EmptyResponse
    try:
        return json.loads(text)
    except ValueError as err:
        raise BadResponse(err) from None


def request(
    path: str, request_id: str, method: str, params: dict[str, Any], timeout: float | None = None
) -> Any:
    """Send one request on a fresh connection and return the decoded reply.

    The reply is returned whatever its shape; success and error envelopes are both
    ordinary values here, because Herdr's CLI prints server errors rather than raising.
    """
    sock = connect(path, timeout)
    try:
        return exchange(sock, encode_request(request_id, method, params))
    finally:
        sock.close()
