"""A minimal synchronous client for Herdr's socket protocol.

One request per connection, one response line — exactly what Herdr's own CLI does. Used by
the demo, the test suite and the benchmarks; the full typed client is the orchestrator's.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any, Self

_ids = count(1)


class ProtocolError(RuntimeError):
    """The server closed the connection without a complete response line."""


def _connect(path: Path | str, timeout: float | None) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except BaseException:
        sock.close()
        raise
    return sock


def _read_line(sock: socket.socket) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            raise ProtocolError("connection closed before a response line")
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[:newline])
            return b"".join(chunks)
        chunks.append(chunk)


def send_line(path: Path | str, line: bytes, timeout: float | None = 30.0) -> dict[str, Any]:
    """Send raw bytes as the request line; return the decoded response."""
    with _connect(path, timeout) as sock:
        sock.sendall(line)
        response: dict[str, Any] = json.loads(_read_line(sock))
        return response


def request(
    path: Path | str,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    request_id: str | None = None,
    timeout: float | None = 30.0,
) -> dict[str, Any]:
    """Send one request and return the whole response envelope (result or error)."""
    rid = request_id if request_id is not None else f"herdr-sim:{next(_ids)}"
    line = json.dumps({"id": rid, "method": method, "params": params or {}}) + "\n"
    return send_line(path, line.encode(), timeout)


def call(
    path: Path | str, method: str, params: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    """Send one request; return ``result`` or raise :class:`RequestFailed` with the error."""
    response = request(path, method, params, **kw)
    if "error" in response:
        raise RequestFailed(response["error"]["code"], response["error"]["message"])
    result: dict[str, Any] = response["result"]
    return result


class RequestFailed(RuntimeError):
    """The server answered an error envelope."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class Subscription:
    """An open ``events.subscribe`` stream; iterate to receive event envelopes."""

    def __init__(
        self, path: Path | str, subscriptions: list[dict[str, Any]], timeout: float = 30.0
    ) -> None:
        self._sock = _connect(path, timeout)
        line = {
            "id": "herdr-sim:sub",
            "method": "events.subscribe",
            "params": {"subscriptions": subscriptions},
        }
        self._sock.sendall((json.dumps(line) + "\n").encode())
        self._buffer = b""
        self.ack = self.next()

    def next(self, timeout: float | None = None) -> dict[str, Any]:
        """The next line (blocks up to ``timeout`` seconds, else the socket's default)."""
        if timeout is not None:
            self._sock.settimeout(timeout)
        while b"\n" not in self._buffer:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ProtocolError("subscription closed")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        value: dict[str, Any] = json.loads(line)
        return value

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while True:
            yield self.next()

    def close(self) -> None:
        """Hang up (the server ends the subscription)."""
        self._sock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
