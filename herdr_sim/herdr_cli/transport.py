"""One request per connection over Herdr's Unix socket, exactly as Herdr's CLI does it.

The documented exception to "one wire client" (:mod:`orchestrator.client.wire` is the
project's client; the simulator, its tests, the plugin and the orchestrator all use it):
this CLI starts once per command in every simulated pane, and that client's imports
(``socket``, ``json``, ``typing``, the orchestrator's error families) would cost each start
more than the whole exchange, so the CLI keeps this minimal transport of its own.

Each call connects, writes one JSON object followed by ``\\n``, reads one line, and
closes. Real Herdr's CLI never pipelines and sets no timeout on ordinary requests (a
``agent wait`` without ``--timeout`` blocks for as long as the server does), so ``timeout``
defaults to ``None`` here too; only ``server stop`` bounds its exchange.

The module uses the low-level ``_socket`` extension instead of :mod:`socket`: the CLI runs
once per command inside every simulated pane, and :mod:`socket` pulls in :mod:`enum` and
:mod:`selectors` for features a single blocking exchange does not need. For the same
reason it does not import :mod:`json` (whose pure-Python layer imports :mod:`re` and
:mod:`enum`): requests are encoded by :func:`~herdr_sim.herdr_cli.output.dumps_compact`
and replies decoded by :func:`loads`, which drives the C scanner behind :func:`json.loads`
and leaves every error to :func:`json.loads` itself, so failures read exactly the same.
"""

from __future__ import annotations

import _socket
import errno

from .output import dumps_compact

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = [
    "BadResponse",
    "EmptyResponse",
    "IoFailure",
    "ServerNotRunning",
    "TransportError",
    "connect",
    "decode_reply",
    "encode_request",
    "loads",
    "request",
]

_NOT_RUNNING_ERRNOS = frozenset({errno.ENOENT, errno.ECONNREFUSED})
_CHUNK = 65536
#: What :func:`json.loads` skips around a document.
_JSON_WHITESPACE = " \t\n\r"


class _DecoderSettings:
    """The attributes ``_json.make_scanner`` reads: those of a default ``json.JSONDecoder``."""

    def __init__(self) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.array_hook = None  # read by newer Pythons
        self.parse_float = float
        self.parse_int = int
        constants = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
        self.parse_constant = constants.__getitem__


def _make_scanner() -> Callable[[str, int], tuple[Any, int]] | None:
    try:
        from _json import make_scanner

        return make_scanner(_DecoderSettings())  # type: ignore[arg-type]
    except Exception:  # no C accelerator, or one that wants other settings: use json
        return None


_scan = _make_scanner()


def loads(text: str) -> Any:
    """:func:`json.loads` for a ``str``, without importing :mod:`json` when ``text`` is valid.

    Invalid input (and anything the fast path does not handle, a byte-order mark, say) is
    handed to :func:`json.loads`, so the error raised is exactly the one it raises.
    """
    if _scan is not None and not text.startswith("\ufeff"):
        start = len(text) - len(text.lstrip(_JSON_WHITESPACE))
        try:
            value, end = _scan(text, start)
        except (StopIteration, ValueError):
            pass
        else:
            if not text[end:].strip(_JSON_WHITESPACE):
                return value
    import json

    return json.loads(text)


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
    return (dumps_compact(body) + "\n").encode("utf-8", "surrogateescape")


#: whether this process tried to reach a server (a failure after that is not a command line
#: the CLI refused on its own: :func:`herdr_sim.herdr_cli.app._refused`)
attempted = False


def connect(path: str, timeout: float | None = None) -> _socket.socket:
    """Open a connection to the Unix socket at ``path``.

    Raises :class:`ServerNotRunning` for a missing or refused socket and
    :class:`IoFailure` for any other error.
    """
    global attempted
    attempted = True
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
    return decode_reply(line)


def decode_reply(line: bytes) -> Any:
    """Decode one reply line (a socket's or the SSH bridge's) as Herdr's CLI does."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise IoFailure(OSError(errno.EINVAL, "stream did not contain valid UTF-8")) from None
    if not text.strip():
        raise EmptyResponse
    try:
        return loads(text)
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
