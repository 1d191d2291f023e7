"""The socket transport: Herdr's one-request-per-connection NDJSON protocol on a Unix socket.

A client connects, writes one JSON line, reads one JSON line, and the server closes — except
``events.subscribe``, which streams. The first line must arrive within 5 s and fit in 1 MiB,
else the connection is dropped without an answer; it is trimmed with Rust's ``str::trim``
(nothing is answered when nothing is left) and read as Herdr's serde reads its ``Request``
(:mod:`herdr_sim.wire.request_json`, :func:`parse_request`): a line that is not a valid request
is answered ``invalid_request`` with an empty id and serde_json's message. Handlers never
see raw JSON: params are checked here against the registry's specs.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import socket
import struct
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from herdr_sim.registry import PROTOCOL_22_METHODS, UNSUPPORTED, MethodEntry
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.event_lines import EncodedLines, EventBatch
from herdr_sim.wire.params import Enum, Obj, ParamError, check, shaped
from herdr_sim.wire.request_context import current_peer_pid, current_request_id
from herdr_sim.wire.request_json import JsonError, at_column, read_request, rust_trim
from herdr_sim.wire.request_shapes import SHAPES
from orchestrator.client.file_trust.ownership import check_directory

log = logging.getLogger(__name__)

Line = dict[str, Any]
#: Callables that see every line on the wire: ``tap(kind, line)`` with kind "request" (a
#: request object as received, before dispatch; a line that does not parse is no request),
#: "response" or "event" (lines the simulator writes). The test suite hangs its schema
#: validation here.
WIRE_TAPS: list[Callable[[str, Line], None]] = []
#: ``exchange_tap(first_line, answer)``: one call per request connection (see
#: :attr:`Server.exchange_taps`)
ExchangeTap = Callable[[bytes, Line | None], None]


_WRITE_TIMEOUT = 5.0
#: how many unexpected handler exceptions a server keeps (:attr:`Server.handler_errors`)
HANDLER_ERRORS_KEPT = 16


def encode(line: Line) -> bytes:
    """One NDJSON line, compact and UTF-8 like serde_json's output."""
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def tap(kind: str, line: Line, own: list[Callable[[str, Line], None]] | None = None) -> None:
    """Show a line to every wire tap — the global ones and ``own``, the taps of the one
    server that carried it; a failing tap never breaks the server."""
    for callback in [*WIRE_TAPS, *(own or ())]:
        try:
            callback(kind, line)
        except Exception:
            log.exception("wire tap failed")


class RequestError(Exception):
    """The request line does not parse: answer ``invalid_request`` with id ``""``."""


class Request(NamedTuple):
    """One parsed request line."""

    id: str
    method: str
    #: the params checked against the method's spec (fresh containers, defaults filled in)
    params: dict[str, Any]
    #: the request object as received (what the wire taps see)
    raw: dict[str, Any]


def parse_request(text: str, methods: Mapping[str, MethodEntry]) -> Request:
    """Decode one trimmed request line as Herdr's serde does (:mod:`herdr_sim.wire.request_json`
    reads the object; here the ``Method`` enum and its params are decoded from it);
    ``methods`` is the method table (:func:`herdr_sim.methods.load_all`)."""
    try:
        read = read_request(text)
    except JsonError as exc:
        raise RequestError(str(exc)) from None
    try:
        if read.id is None:
            raise ParamError("missing field `id`")
        method, params = _decode_method(read.entries, methods)
    except ParamError as exc:
        raise RequestError(at_column(str(exc), read.end)) from None
    if read.trailing is not None:
        raise RequestError(at_column("trailing characters", read.trailing))
    raw = {"id": read.id, **dict(read.entries)}
    return Request(read.id, method, params, raw)


#: the ``method`` tag: one of Herdr's variants, in its declaration order (``enum Method``)
_METHOD_TAG = Enum(values=PROTOCOL_22_METHODS)
_PARAMS_SPECS: dict[str, Obj] = {}


def _params_spec(method: str, methods: Mapping[str, MethodEntry]) -> Obj:
    """The method's params spec read as Herdr's struct (a shape-only one for a method the
    simulator does not implement: serde still decodes its params)."""
    entry = methods.get(method)
    base = entry.params if entry is not None else Obj()
    spec = _PARAMS_SPECS.get(method)
    if spec is None or spec.fields is not base.fields:
        spec = _PARAMS_SPECS[method] = shaped(base, SHAPES.get(method))
    return spec


def _decode_method(
    entries: list[tuple[str, Any]], methods: Mapping[str, MethodEntry]
) -> tuple[str, dict[str, Any]]:
    """serde's adjacently tagged ``Method`` (``tag = "method", content = "params"``) over the
    buffered keys, in their order: the first of the two keys decides which is read first, a
    repeated one is ``duplicate field``, a missing one ``missing field``."""
    relevant = [(key, value) for key, value in entries if key in ("method", "params")]
    if not relevant:
        raise ParamError("missing field `method`")
    (first, first_value), rest = relevant[0], relevant[1:]
    if first == "method":
        method: str = _METHOD_TAG.check(first_value, "method")  # read before the next key
    if not rest:
        raise ParamError(f"missing field `{'params' if first == 'method' else 'method'}`")
    (second, second_value), rest = rest[0], rest[1:]
    if second == first:
        raise ParamError(f"duplicate field `{first}`")
    if first == "method":
        content = second_value
    else:
        method = _METHOD_TAG.check(second_value, "method")
        content = first_value
    params: dict[str, Any] = check(_params_spec(method, methods), content)
    if rest:
        raise ParamError(f"duplicate field `{rest[0][0]}`")
    return method, params


class Server:
    """Serves one :class:`Runtime` on its Unix socket with a method table
    (:func:`herdr_sim.methods.load_all`)."""

    def __init__(self, runtime: Runtime, methods: Mapping[str, MethodEntry]) -> None:
        self.runtime = runtime
        self.methods = methods
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        #: unexpected handler exceptions, re-raised by ``Simulator.check()`` in tests: the
        #: first :data:`HANDLER_ERRORS_KEPT` (each holds its traceback, and so its request,
        #: alive); later ones are only counted in :attr:`handler_errors_dropped`
        self.handler_errors: list[BaseException] = []
        self.handler_errors_dropped = 0
        #: handlers running now; seen from the loop, a handler counted here has already
        #: reached its first await (tests use it to act while a wait is in progress)
        self.in_flight = 0
        #: the event lines of every stream: one event sent to many subscribers is encoded once
        self._event_lines = EncodedLines(encode)
        self._closing = False
        #: every client transport from accept to connection_lost
        self._transports: set[asyncio.BaseTransport] = set()
        #: wire taps of this server only (``Simulator.wire_taps``), beside the global ones
        self.taps: list[Callable[[str, Line], None]] = []
        #: ``tap(first_line, answer)`` once per connection that sent anything: the first line
        #: exactly as read (bytes, before decoding, so malformed lines are seen too) and the
        #: answer written for it — for a subscription its ack (or error), not the events —
        #: or None when none was written (a dropped reply fault, the client gone, a line
        #: that gets no answer). Called just before the answer is written, so it has run
        #: by the time the client reads it; a failing tap never breaks the server.
        self.exchange_taps: list[ExchangeTap] = []
        #: first lines read whose answer is not written yet, by connection
        self._unanswered: dict[asyncio.StreamWriter, bytes] = {}

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind the socket: 0600 in a 0700 directory; replace a stale one, refuse a live one."""
        sock = bind_private_socket(self.runtime.socket_path, "herdr is already running")
        loop = asyncio.get_running_loop()
        limit = self.runtime.config.max_request_bytes + 1

        def protocol() -> asyncio.StreamReaderProtocol:
            reader = asyncio.StreamReader(limit=limit, loop=loop)
            return _TrackedProtocol(self._transports, reader, self._on_connection, loop=loop)

        self._server = await loop.create_unix_server(protocol, sock=sock, backlog=4096)

    def connection_count(self) -> int:
        """How many client connections are being handled now (read on the loop)."""
        return len(self._connections)

    def stop_listening(self) -> None:
        """Stop accepting connections (idempotent; the socket file stays until close).

        asyncio accepts a connection in one loop turn and builds its transport in a task
        that runs on a later turn; once the server is closed that build fails (CPython
        3.11's ``Server._attach`` asserts the server is open) and asyncio drops the accepted
        socket unclosed, to be reported by the garbage collector long after the loop is
        gone. So accepting stops now and the server closes on the next turn, after the
        builds already queued.
        """
        self._closing = True
        if self._server is not None:
            server, self._server = self._server, None
            loop = server.get_loop()
            for sock in server.sockets:
                loop.remove_reader(sock.fileno())
            loop.call_soon(server.close)

    async def close(self) -> None:
        """Stop accepting, end open connections and remove the socket file."""
        self.stop_listening()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        self.close_transports()
        with contextlib.suppress(FileNotFoundError):
            self.runtime.socket_path.unlink()

    def close_transports(self) -> None:
        """Close every client transport still open (one accepted while the server closed
        may never have reached its handler)."""
        for transport in list(self._transports):
            transport.close()

    # -- connections --------------------------------------------------------------------------

    async def _on_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        current_peer_pid.set(peer_pid(writer))  # this connection's own task context
        try:
            if not self._closing:  # a connection accepted just before close gets no answer
                await self._serve_one(reader, writer)
        except (ConnectionError, asyncio.CancelledError, TimeoutError):
            pass
        except Exception as exc:  # a simulator bug: record it for the test that caused it
            log.exception("connection handler failed")
            self._record_error(exc)
        finally:
            self._connections.discard(task)
            unanswered = self._unanswered.pop(writer, None)
            if unanswered is not None:
                self._exchanged(unanswered, None)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def _read_first_line(self, reader: asyncio.StreamReader) -> bytes | None:
        config = self.runtime.config
        try:
            line = await asyncio.wait_for(
                reader.readuntil(b"\n"), timeout=config.timers().first_line_timeout
            )
        except asyncio.IncompleteReadError as exc:
            line = exc.partial  # EOF without newline: what was sent is the request
        except (asyncio.LimitOverrunError, ValueError, TimeoutError):
            return None
        # Herdr checks the length after each byte that is not the newline: a line of exactly
        # the limit is read whole, one byte more is refused (the newline is not counted)
        if len(line.removesuffix(b"\n")) > config.max_request_bytes:
            return None
        return line

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raw = await self._read_first_line(reader)
        if not raw:  # nothing read: a timeout, an oversized line, a bare connect
            return
        self._unanswered[writer] = raw
        try:
            text = rust_trim(raw.decode("utf-8"))  # Rust's str::trim, as Herdr trims
        except UnicodeDecodeError:
            return
        if not text:
            return
        try:
            request_id, method, params, raw_request = parse_request(text, self.methods)
        except RequestError as exc:
            await self._write(writer, error_line("", errors.invalid_request(str(exc))))
            return
        tap("request", raw_request, self.taps)  # the object as received
        if self.runtime.stopping:
            await self._write(writer, error_line(request_id, errors.server_shutting_down()))
            return
        fault = self.runtime.faults.take(method)
        if fault is not None:
            if fault.delay:
                await asyncio.sleep(fault.delay)
            if fault.drop == "before":
                return
            if fault.error is not None:
                await self._write(writer, error_line(request_id, HerdrError(*fault.error)))
                return
        stream = self.methods[method].stream if method in self.methods else None
        if stream is not None:
            batch = EventBatch(writer, _WRITE_TIMEOUT)

            async def send(line: Line, kind: str) -> None:
                if kind != "event":
                    batch.flush()
                    await self._write(writer, line, kind)
                    return
                tap(kind, line, self.taps)
                await batch.add(self._event_lines.line(line))

            try:
                await stream(self.runtime, request_id, params, reader, send)
            finally:
                batch.flush()
            return
        response = await self._dispatch_watching_disconnect(request_id, method, params, reader)
        if response is None or (fault is not None and fault.drop == "after"):
            return
        await self._write(writer, response)
        if method == "server.stop":
            self.schedule_stop()

    async def _dispatch_watching_disconnect(
        self, request_id: str, method: str, params: dict[str, Any], reader: asyncio.StreamReader
    ) -> Line | None:
        """Run the handler; abandon it silently if the client hangs up first (Herdr does)."""
        handler = asyncio.ensure_future(self.dispatch(request_id, method, params, saved=False))
        hangup = asyncio.ensure_future(reader.read(1))
        try:
            done, _ = await asyncio.wait({handler, hangup}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            hangup.cancel()
        if handler in done:
            response = handler.result()
        elif hangup in done and not hangup.cancelled() and hangup.result() == b"":
            handler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await handler
            return None
        else:
            response = await handler
        # The answer to a change waits for its session save, outside the hang-up watch: a
        # client that half-closes after its request (end of input, not a hang-up) is
        # answered, as Herdr answers it, however long the save takes.
        entry = self.methods.get(method)
        if entry is not None and entry.mutates and method not in UNSUPPORTED:
            await self.runtime.session_saved()
        return response

    async def dispatch(
        self, request_id: str, method: str, params: dict[str, Any], *, saved: bool = True
    ) -> Line:
        """Run one checked request and build its response envelope; with ``saved``, a
        change is also in the session file before this returns."""
        if method in UNSUPPORTED:
            return error_line(request_id, errors.not_supported(method))
        entry = self.methods[method]
        self.in_flight += 1
        current_request_id.set(request_id)  # this task's own context: no reset needed
        try:
            result = await entry.handler(self.runtime, params)
        except HerdrError as exc:
            return error_line(request_id + exc.id_suffix, exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("handler for %s failed", method, extra={"herdr_method": method})
            self._record_error(exc)
            return error_line(request_id, HerdrError(errors.INTERNAL_ERROR, f"{method}: {exc}"))
        finally:
            self.in_flight -= 1
            if entry.mutates:
                self.runtime.after_request()
        if entry.mutates and saved:
            await self.runtime.session_saved()
        return {"id": request_id, "result": result}

    def _record_error(self, exc: BaseException) -> None:
        """Keep a handler failure for ``Simulator.check()``, within the bound."""
        if len(self.handler_errors) < HANDLER_ERRORS_KEPT:
            self.handler_errors.append(exc)
        else:
            self.handler_errors_dropped += 1

    def schedule_stop(self) -> None:
        """Finish a ``server.stop`` once its answer is on its way."""
        asyncio.get_running_loop().create_task(self._finish_stop())

    async def _finish_stop(self) -> None:
        """After answering ``server.stop``: close the socket, then reap every pane."""
        await self.close()
        await self.runtime.shutdown()
        self.runtime.stopped.set()

    async def _write(
        self, writer: asyncio.StreamWriter, line: Line, kind: str = "response"
    ) -> None:
        tap(kind, line, self.taps)
        if kind == "response":
            first = self._unanswered.pop(writer, None)
            if first is not None:
                self._exchanged(first, line)
        writer.write(encode(line))
        await asyncio.wait_for(writer.drain(), _WRITE_TIMEOUT)

    def _exchanged(self, first: bytes, answer: Line | None) -> None:
        """Show one connection's first line and its answer to the exchange taps."""
        for callback in list(self.exchange_taps):
            try:
                callback(first, answer)
            except Exception:
                log.exception("exchange tap failed")


class _TrackedProtocol(asyncio.StreamReaderProtocol):
    """The stream protocol ``asyncio.start_unix_server`` uses, recording its transport from
    the moment it exists, so shutdown can close connections that never reached a handler."""

    def __init__(self, registry: set[asyncio.BaseTransport], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._registry = registry
        self._tracked: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._tracked = transport
        self._registry.add(transport)
        super().connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._tracked is not None:
            self._registry.discard(self._tracked)
        super().connection_lost(exc)


def error_line(request_id: str, error: HerdrError) -> Line:
    """An error envelope."""
    return {"id": request_id, "error": error.body()}


def prepare_socket_dir(directory: Path) -> None:
    """Create the socket's directory private (0700) when it does not exist yet.

    An existing directory is left as it is (it may be a shared one such as /tmp that the
    caller chose); the socket itself is always 0600, so only its owner can connect. Either
    way the directory and those above it must be ours (or root's) and writable by nobody
    else unless sticky, or another user could swap the socket
    (:func:`orchestrator.client.file_trust.ownership.check_directory`; :class:`UntrustedPathError`).
    """
    if not directory.is_dir():
        directory.mkdir(parents=True, mode=0o700)
        directory.chmod(0o700)
    check_directory(directory, "socket directory")


def bind_private_socket(path: Path, busy: str) -> socket.socket:
    """A listening Unix socket at ``path``: 0600, in a directory :func:`prepare_socket_dir`
    accepts; a stale socket file is replaced, a live one refused (``RuntimeError`` starting
    with ``busy``). The simulator's server and the recording proxy bind this way."""
    prepare_socket_dir(path.parent)
    if path.exists() or path.is_symlink():
        if socket_is_live(path):
            raise RuntimeError(f"{busy} (socket busy at {path})")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        sock.bind(str(path))
        # at once: the path exists from the bind, and a client that connects before the
        # listen is refused (the umask already made it 0600; the chmod is belt and braces)
        sock.listen(1024)
    finally:
        os.umask(old_umask)
    path.chmod(0o600)
    return sock


def peer_pid(writer: asyncio.StreamWriter) -> int | None:
    """The pid of the process that connected (``SO_PEERCRED``), or None when unknown."""
    sock = writer.get_extra_info("socket")
    option = getattr(socket, "SO_PEERCRED", None)
    if sock is None or option is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    pid: int = struct.unpack("3i", raw)[0]
    return pid or None


def socket_is_live(path: Path) -> bool:
    """True when something accepts connections on ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError as exc:
        return exc.errno not in (errno.ECONNREFUSED, errno.ENOENT, errno.ENOTSOCK)
    else:
        return True
    finally:
        probe.close()
