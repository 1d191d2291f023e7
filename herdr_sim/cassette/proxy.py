"""``herdr-sim record``'s proxy: every client connection gets its own upstream connection.

Bytes are forwarded the moment they arrive, unchanged and unparsed, both ways, so a client
cannot tell the proxy from Herdr: a subscription's events stream through, a ``*.wait*``
request blocks as long as Herdr lets it, a hang-up reaches Herdr as one. Recording happens
after forwarding: each complete line is decoded, redacted (:func:`herdr_sim.redaction.
redact_secrets` unless secrets are kept) and appended to the cassette; a line that is not
JSON is kept as text, bytes that never got their newline as a partial line.

A connection's close record says who closed it and whether a request was still unanswered.
Stopping (``SIGINT``/``SIGTERM`` for the command, :meth:`RecordingProxy.stop` otherwise) stops
accepting, closes what is still open — recorded as closed by the recorder — and writes the
end record, so every stop but ``SIGKILL`` leaves a readable cassette.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from orchestrator.client.wire import MAX_LINE, request

from ..redaction import redact_secrets, redact_text
from .format import CassetteWriter, Closer, Direction, Header, Record

_CHUNK = 65536
#: seconds open connections get to end by themselves when the recorder stops
STOP_GRACE = 0.2


def upstream_header(
    upstream: Path,
    *,
    keep_secrets: bool = False,
    runtime_dirs: tuple[Path, ...] = (),
    timeout: float = 5.0,
) -> Header:
    """The cassette header for ``upstream``: its version and protocol from ``ping``; its
    runtime directories: the socket's, the home directory, and ``runtime_dirs``.

    The ``OSError`` of an upstream that does not answer propagates (nothing to record from).
    """
    from .._version import __version__

    pong = request(upstream, "ping", timeout=timeout).get("result") or {}
    version, protocol = pong.get("version"), pong.get("protocol")
    return Header(
        recorder=f"herdr-sim {__version__}",
        recorded_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        upstream_version=version if isinstance(version, str) else None,
        upstream_protocol=protocol if isinstance(protocol, int) else None,
        runtime_dirs=tuple(
            dict.fromkeys(
                str(path)
                for path in (upstream.resolve().parent, Path.home(), *runtime_dirs)
                if str(path) != "/"
            )
        ),
        redacted=not keep_secrets,
    )


@dataclass
class _Conn:
    """One client connection's recording state."""

    number: int
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter | None = None
    #: requests sent minus answers received, floored at 0: unanswered at close if > 0
    waiting: int = 0
    closer: Closer | None = None


class Recorder:
    """The proxy's asyncio side: accepts on ``listen``, forwards to ``upstream``, records."""

    def __init__(self, upstream: Path, writer: CassetteWriter, *, keep_secrets: bool = False):
        self.upstream = upstream
        self.writer = writer
        self.keep_secrets = keep_secrets
        self._start = time.monotonic()
        self._next_conn = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._conns: dict[int, _Conn] = {}
        self._server: asyncio.Server | None = None

    def _t(self) -> float:
        return round(time.monotonic() - self._start, 6)

    def _record(self, conn: int, direction: Direction, **fields: Any) -> None:
        self.writer.record(Record(conn=conn, direction=direction, t=self._t(), **fields))

    async def start(self, listen: Path) -> None:
        """Bind ``listen`` (0600 in a private directory) and start accepting."""
        from ..server import bind_private_socket

        sock = bind_private_socket(listen, "something already listens there")
        self._server = await asyncio.start_unix_server(self._on_client, sock=sock, limit=MAX_LINE)

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop accepting, close every open connection (closed by the recorder), end the
        cassette.

        Connections get ``grace`` seconds to end by themselves first: a client that hung up
        just before the stop is recorded as it happened, not as cut by the recorder.
        """
        if self._server is not None:
            self._server.close()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=grace)
        for conn in self._conns.values():
            if conn.closer is None:
                conn.closer = "recorder"
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self.writer.finish(self._t())

    async def _on_client(self, reader: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._next_conn += 1
        conn = _Conn(self._next_conn, client)
        self._conns[conn.number] = conn
        self._record(conn.number, "open")
        try:
            await self._serve(conn, reader)
        except asyncio.CancelledError:
            pass
        finally:
            self._record(
                conn.number, "close", by=conn.closer or "upstream", unfinished=conn.waiting > 0
            )
            for side in (client, conn.upstream):
                if side is not None:
                    side.close()
            self._conns.pop(conn.number, None)
            self._tasks.discard(task)

    async def _serve(self, conn: _Conn, reader: asyncio.StreamReader) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(str(self.upstream))
        except OSError:
            conn.closer = "upstream"  # Herdr is gone: the client sees a closed connection
            return
        conn.upstream = up_writer
        to_upstream = asyncio.ensure_future(self._pump(conn, reader, up_writer, "send"))
        to_client = asyncio.ensure_future(self._pump(conn, up_reader, conn.client, "recv"))
        try:
            await to_client  # Herdr closing ends the exchange
        finally:
            to_upstream.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await to_upstream

    async def _pump(
        self,
        conn: _Conn,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        direction: Direction,
    ) -> None:
        """Forward ``source`` to ``sink`` chunk by chunk, recording each complete line."""
        pending = b""
        try:
            while chunk := await source.read(_CHUNK):
                sink.write(chunk)  # forward first: recording never delays the peer
                pending += chunk
                while (newline := pending.find(b"\n")) >= 0:
                    self._line(conn, direction, pending[:newline], partial=False)
                    pending = pending[newline + 1 :]
                if len(pending) > MAX_LINE:  # bound what a line can hold in memory
                    self._line(conn, direction, pending, partial=True)
                    pending = b""
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        if pending:
            self._line(conn, direction, pending, partial=True)
        if direction == "send":
            if conn.closer is None:
                conn.closer = "client"
            with contextlib.suppress(OSError):
                if sink.can_write_eof():
                    sink.write_eof()  # the client hung up: Herdr sees it as a hang-up
        elif conn.closer is None:
            conn.closer = "upstream"

    def _line(self, conn: _Conn, direction: Direction, data: bytes, *, partial: bool) -> None:
        text = data.decode("utf-8", errors="replace")
        if direction == "send":
            conn.waiting += 1
        else:
            conn.waiting = max(conn.waiting - 1, 0)
        try:
            value = json.loads(text)
        except ValueError:
            raw = text if self.keep_secrets else redact_text(text)
            self._record(conn.number, direction, raw=raw, partial=partial)
            return
        line = value if self.keep_secrets else redact_secrets(value)
        self._record(conn.number, direction, line=line, partial=partial)


class RecordingProxy:
    """A recorder on its own thread and loop, for tests, the plugin and the benchmark.

    ``with RecordingProxy(upstream, listen, cassette):`` records until the block ends, then
    finishes the cassette.
    """

    def __init__(
        self,
        upstream: Path,
        listen: Path,
        cassette: Path,
        *,
        keep_secrets: bool = False,
        runtime_dirs: tuple[Path, ...] = (),
    ) -> None:
        self.upstream = upstream
        self.socket_path = listen
        self.cassette = cassette
        self.keep_secrets = keep_secrets
        #: more directories whose paths replay normalises (the server's HOME, …)
        self.runtime_dirs = runtime_dirs
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._recorder: Recorder | None = None

    def start(self) -> Self:
        """Probe the upstream, open the cassette, bind, and return once clients can connect."""
        header = upstream_header(
            self.upstream, keep_secrets=self.keep_secrets, runtime_dirs=self.runtime_dirs
        )
        writer = CassetteWriter(self.cassette, header)
        recorder = Recorder(self.upstream, writer, keep_secrets=self.keep_secrets)
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(recorder.start(self.socket_path))
        except BaseException:
            loop.close()
            writer.finish(0.0)
            raise
        self._loop, self._recorder = loop, recorder
        self._thread = threading.Thread(target=loop.run_forever, name="herdr-record", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the cassette, stop the loop, remove the proxy's socket (idempotent)."""
        loop, recorder, thread = self._loop, self._recorder, self._thread
        if loop is None or recorder is None or thread is None:
            return
        self._loop = self._recorder = self._thread = None
        asyncio.run_coroutine_threadsafe(recorder.stop(), loop).result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        loop.close()
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_recorder(
    upstream: Path,
    listen: Path,
    cassette: Path,
    stop: threading.Event,
    *,
    keep_secrets: bool,
    ready: Callable[[], None] | None = None,
) -> None:
    """Record until ``stop`` is set (the command's signal handlers set it); ``ready`` is
    called once clients can connect."""
    proxy = RecordingProxy(upstream, listen, cassette, keep_secrets=keep_secrets).start()
    try:
        if ready is not None:
            ready()
        stop.wait()
    finally:
        proxy.stop()
