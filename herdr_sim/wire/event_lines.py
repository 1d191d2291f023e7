"""Event lines on their way to subscribers: each event encoded once, written in batches.

One event fanned out to fifty ``events.subscribe`` streams was encoded fifty times and
written with fifty socket writes, each followed by a drain; with ten busy panes that was most
of the simulator's loop at the event benchmark's p99 (``bench/event_fanout.py``). Streams
receive the very same envelope object for one event (the hub's log entry, or the shared
``pane.output_matched`` envelope of one pane state), so :class:`EncodedLines` encodes it once
for all of them; :class:`EventBatch` collects what one stream produces within a loop turn and
hands it to the socket in one write.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

__all__ = ["EncodedLines", "EventBatch"]

Line = dict[str, Any]


class EncodedLines:
    """The encoded line of each recent event, by identity.

    An entry holds its event, so the identity cannot be reused while the entry lives; events
    are never changed once sent (every stream sees the same object). The most recent
    ``size`` events are kept, more than a burst the hub retains.
    """

    def __init__(self, encode: Callable[[Line], bytes], size: int = 1024) -> None:
        self._encode = encode
        self._size = size
        self._lines: OrderedDict[int, tuple[Line, bytes]] = OrderedDict()

    def line(self, event: Line) -> bytes:
        """``event`` encoded, encoded now only the first time it is asked for."""
        key = id(event)
        kept = self._lines.get(key)
        if kept is not None and kept[0] is event:
            return kept[1]
        data = self._encode(event)
        self._lines[key] = (event, data)
        if len(self._lines) > self._size:
            self._lines.popitem(last=False)
        return data


class EventBatch:
    """One stream's events, written together at the end of the loop turn that made them.

    Order is kept: :meth:`flush` runs before anything else is written to the connection.
    Back-pressure is as before: when the socket's buffer is over its high-water mark (a
    client that does not read) or the connection is gone, :meth:`add` waits for the drain,
    which gives up after ``timeout`` seconds or raises on a lost connection, ending the stream.
    """

    def __init__(self, writer: asyncio.StreamWriter, timeout: float) -> None:
        self._writer = writer
        self._timeout = timeout
        self._pending: list[bytes] = []
        self._high = writer.transport.get_write_buffer_limits()[1]

    async def add(self, data: bytes) -> None:
        """Queue one encoded line; written with the others of this loop turn."""
        if not self._pending:
            asyncio.get_running_loop().call_soon(self.flush)
        self._pending.append(data)
        transport = self._writer.transport
        if transport.is_closing() or transport.get_write_buffer_size() >= self._high:
            self.flush()
            await asyncio.wait_for(self._writer.drain(), self._timeout)

    def flush(self) -> None:
        """Write what is queued (one write); a no-op when nothing is."""
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        if not self._writer.transport.is_closing():
            self._writer.write(data)
