"""``herdr-sim record``'s proxy: every client connection gets its own upstream connection.

Bytes are forwarded the moment they arrive, unchanged and unparsed, both ways, so a client
cannot tell the proxy from Herdr: a subscription's events stream through, a ``*.wait*``
request blocks as long as Herdr lets it, a hang-up reaches Herdr as one. Recording happens
after forwarding: each complete line is decoded, redacted (:func:`herdr_sim.persist.redaction.
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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from herdr_sim.host.stop_signals import StopSignals
from herdr_sim.persist.redaction import redact_secrets, redact_text
from orchestrator.client.wire import MAX_LINE, request

from .format import CassetteWriter, Closer, Direction, Header, Record

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


class _Link:
    """One client connection and its own upstream connection: what one side sends is
    written to the other at once, then recorded line by line."""

    def __init__(self, recorder: Recorder, number: int) -> None:
        self.recorder = recorder
        self.number = number
        self.client: asyncio.Transport | None = None
        self.upstream: asyncio.Transport | None = None
        self.client_lost = False
        self.upstream_lost = False
        #: the recorded bytes of each direction not yet ended by a newline
        self.pending = {"send": b"", "recv": b""}
        #: requests sent minus answers received, floored at 0: unanswered at close if > 0
        self.waiting = 0
        self.closer: Closer | None = None
        self.done = asyncio.get_running_loop().create_future()
        #: opening the upstream connection (the client's bytes wait for it)
        self.connecting: asyncio.Future[None] | None = None

    def peer_of(self, direction: Direction) -> asyncio.Transport | None:
        """Where bytes received in ``direction`` go: Herdr for ``send``, else the client."""
        return self.upstream if direction == "send" else self.client

    def source_of(self, direction: Direction) -> asyncio.Transport | None:
        return self.client if direction == "send" else self.upstream

    def received(self, direction: Direction, data: bytes) -> None:
        peer = self.peer_of(direction)
        if peer is not None:
            peer.write(data)  # forward first: recording never delays the peer
        pending = self.pending[direction] + data
        while (newline := pending.find(b"\n")) >= 0:
            self.recorder.line(self, direction, pending[:newline], partial=False)
            pending = pending[newline + 1 :]
        if len(pending) > MAX_LINE:  # bound what a line can hold in memory
            self.recorder.line(self, direction, pending, partial=True)
            pending = b""
        self.pending[direction] = pending

    def ended(self, direction: Direction) -> bool:
        """One side sent EOF: a client's reaches Herdr as a hang-up (and the answer may
        still come back); Herdr's ends the connection."""
        if direction == "send":
            self.closer = self.closer or "client"
            if self.upstream is not None and self.upstream.can_write_eof():
                self.upstream.write_eof()
            return True
        self.closer = self.closer or "upstream"
        if self.client is not None:
            self.client.close()  # after what is buffered for it
        return False

    def lost(self, direction: Direction) -> None:
        if direction == "send":
            self.client_lost = True
            self.closer = self.closer or "client"
            if self.upstream is not None:
                self.upstream.close()
        else:
            self.upstream_lost = True
            self.closer = self.closer or "upstream"
            if self.client is not None:
                self.client.close()
        if self.client_lost and (self.upstream_lost or self.upstream is None):
            self.finish()

    def finish(self) -> None:
        """Record what is left and the close, once."""
        if self.done.done():
            return
        for direction in ("send", "recv"):
            if self.pending[direction]:
                self.recorder.line(self, direction, self.pending[direction], partial=True)
                self.pending[direction] = b""
        self.recorder.record(
            self.number, "close", by=self.closer or "upstream", unfinished=self.waiting > 0
        )
        self.done.set_result(None)

    def abort(self) -> None:
        """Cut both sides (the recorder is stopping)."""
        self.closer = self.closer or "recorder"
        for side in (self.client, self.upstream):
            if side is not None:
                side.abort()
        if self.upstream is None:
            self.lost("recv")


class _Side(asyncio.Protocol):
    """One end of a :class:`_Link`: ``send`` is the client's end, ``recv`` Herdr's."""

    def __init__(self, link: _Link, direction: Direction) -> None:
        self.link = link
        self.direction = direction

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        if self.direction == "send":
            self.link.client = transport
        else:
            self.link.upstream = transport

    def data_received(self, data: bytes) -> None:
        self.link.received(self.direction, data)

    def eof_received(self) -> bool:
        return self.link.ended(self.direction)

    def connection_lost(self, exc: Exception | None) -> None:
        self.link.lost(self.direction)

    # flow control: a peer that reads slowly slows the side that writes to it
    def pause_writing(self) -> None:
        source = self.link.source_of("recv" if self.direction == "send" else "send")
        if source is not None:
            source.pause_reading()

    def resume_writing(self) -> None:
        source = self.link.source_of("recv" if self.direction == "send" else "send")
        if source is not None:
            source.resume_reading()


class Recorder:
    """The proxy's asyncio side: accepts on ``listen``, forwards to ``upstream``, records.

    Built on asyncio protocols rather than streams: a request is one connection, and
    streams' tasks per connection would cost the recorder more than Herdr's answer takes.
    """

    def __init__(self, upstream: Path, writer: CassetteWriter, *, keep_secrets: bool = False):
        self.upstream = upstream
        self.writer = writer
        self.keep_secrets = keep_secrets
        self._start = time.monotonic()
        self._next_conn = 0
        self._links: set[_Link] = set()
        self._server: asyncio.Server | None = None

    def _t(self) -> float:
        return round(time.monotonic() - self._start, 6)

    def record(self, conn: int, direction: Direction, **fields: Any) -> None:
        """Append one record, timed now."""
        self.writer.record(Record(conn=conn, direction=direction, t=self._t(), **fields))

    async def start(self, listen: Path) -> None:
        """Bind ``listen`` (0600 in a private directory) and start accepting."""
        from ..server import bind_private_socket

        sock = bind_private_socket(listen, "something already listens there")
        loop = asyncio.get_running_loop()
        self._server = await loop.create_unix_server(self._accept, sock=sock)

    def _accept(self) -> asyncio.Protocol:
        self._next_conn += 1
        link = _Link(self, self._next_conn)
        self._links.add(link)
        link.done.add_done_callback(lambda _: self._links.discard(link))
        self.record(link.number, "open")
        link.connecting = asyncio.ensure_future(self._connect(link))
        return _ClientSide(link)

    async def _connect(self, link: _Link) -> None:
        """Open the link's upstream connection; the client's bytes wait until it is open."""
        loop = asyncio.get_running_loop()
        try:
            await loop.create_unix_connection(lambda: _Side(link, "recv"), str(self.upstream))
        except OSError:
            link.closer = link.closer or "upstream"  # Herdr is gone: the client sees a close
            if link.client is not None:
                link.client.close()
            link.lost("recv")
            return
        if link.client_lost:
            assert link.upstream is not None
            link.upstream.close()
            return
        if link.client is not None:
            link.client.resume_reading()

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop accepting, close every open connection (closed by the recorder), end the
        cassette.

        Connections get ``grace`` seconds to end by themselves first: a client that hung up
        just before the stop is recorded as it happened, not as cut by the recorder.
        """
        if self._server is not None:
            self._server.close()
        if self._links:
            await asyncio.wait({link.done for link in self._links}, timeout=grace)
        for link in list(self._links):
            link.abort()
        if self._links:
            await asyncio.wait({link.done for link in self._links}, timeout=grace)
        for link in list(self._links):
            link.finish()  # a side whose loss was never reported
        self.writer.finish(self._t())

    def line(self, link: _Link, direction: Direction, data: bytes, *, partial: bool) -> None:
        """Record one line of ``link`` (redacted unless secrets are kept)."""
        text = data.decode("utf-8", errors="replace")
        if direction == "send":
            link.waiting += 1
        else:
            link.waiting = max(link.waiting - 1, 0)
        try:
            value = json.loads(text)
        except ValueError:
            raw = text if self.keep_secrets else redact_text(text)
            self.record(link.number, direction, raw=raw, partial=partial)
            return
        line = value if self.keep_secrets else redact_secrets(value)
        self.record(link.number, direction, line=line, partial=partial)


class _ClientSide(_Side):
    """The client's end: reading waits until the upstream connection is open."""

    def __init__(self, link: _Link) -> None:
        super().__init__(link, "send")

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if self.link.upstream is None:
            assert isinstance(transport, asyncio.Transport)
            transport.pause_reading()


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
    stop: StopSignals,
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
