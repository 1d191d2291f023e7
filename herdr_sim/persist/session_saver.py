"""Session saves off the simulator's loop: in order, coalesced, the last one awaited at stop.

The session was saved on the loop after every change: encoding and writing the file held
every client while 100 agents started at once (``bench/spawn_fanout.py``). As in Herdr
(``src/app/session.rs``: the snapshot is captured on the app's loop, written by a
``herdr-session-save`` thread, the next one waits for that thread), the loop now only takes
the snapshot, since the state must be read where it changes, and a writer thread encodes and
writes it. While one snapshot is being written, further changes are only counted; when the
write is done, one new snapshot is taken: the newest state wins, and no write can overtake a
newer one, since one write at most is in flight.

A mutating request is answered once a snapshot taken after it is written
(:meth:`SessionSaver.saved`, without holding the loop), so a client that got its answer
finds its change in the file, as when the save ran on the loop (Herdr saves 5 s after a
change; docs/simulator/fidelity.md). :meth:`SessionSaver.close` writes the final state after
everything queued and waits for it: a change made just before a stop (``server.stop``,
SIGTERM) is in the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from herdr_sim.persist import session as persist

__all__ = ["SessionSaver"]

log = logging.getLogger(__name__)


class SessionSaver:
    """Writes snapshots of one session to ``path``, one at a time, on its own thread.

    ``take`` builds the snapshot; it runs on the loop, like every method here. Changes are
    numbered: a write covers every change counted before its snapshot was taken.
    """

    def __init__(self, path: Path, take: Callable[[], dict[str, Any]]) -> None:
        self._path = path
        self._take = take
        self._executor: ThreadPoolExecutor | None = None
        self._writing: asyncio.Future[None] | None = None
        self._requested = 0  # changes counted
        self._taken = 0  # changes in the newest snapshot taken
        self._written = 0  # changes in the newest snapshot written (or that failed)
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        #: the newest snapshot handed to the writer: an equal one is not written again
        self._last: dict[str, Any] | None = None
        self._closed = False

    def request(self) -> None:
        """Save the current state: now, or once the write in progress is done."""
        if self._closed:
            return
        self._requested += 1
        if self._writing is None:
            self._start()

    async def saved(self) -> None:
        """Return once every change counted so far is written (at once after :meth:`close`)."""
        target = self._requested
        if self._written >= target or self._closed:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append((target, waiter))
        await waiter

    def _start(self) -> asyncio.Future[None] | None:
        generation = self._taken = self._requested
        try:
            data = self._take()
        except Exception:
            log.exception("could not take the session's snapshot")
            self._done(generation)
            return None
        if data == self._last:  # most requests change nothing that is saved
            self._done(generation)
            return None
        self._last = data
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="herdr-session-save")
        writing = asyncio.get_running_loop().run_in_executor(self._executor, self._write, data)
        self._writing = writing
        writing.add_done_callback(lambda done: self._written_callback(done, generation))
        return writing

    def _write(self, data: dict[str, Any]) -> None:
        try:
            persist.write_json(self._path, data)
        except OSError:
            log.exception("could not save the session to %s", self._path)
            raise

    def _written_callback(self, writing: asyncio.Future[None], generation: int) -> None:
        if self._writing is writing:
            self._writing = None
        error = None if writing.cancelled() else writing.exception()
        if writing.cancelled() or error is not None:
            self._last = None  # not in the file: the next snapshot is written again
        if error is not None and not isinstance(error, OSError):  # an OSError is logged
            log.error("saving the session failed", exc_info=error)
        self._done(generation)
        if self._requested > self._taken and not self._closed:
            self._start()

    def _done(self, generation: int) -> None:
        self._written = max(self._written, generation)
        waiting, self._waiters = self._waiters, []
        for target, waiter in waiting:
            if target > self._written:
                self._waiters.append((target, waiter))
            elif not waiter.done():
                waiter.set_result(None)

    async def close(self, *, final: bool) -> None:
        """Wait for the writes queued, then write the state now if ``final`` or a change is
        still unsaved, and wait for that too; later changes are not saved."""
        while self._writing is not None:
            in_flight = self._writing
            with contextlib.suppress(Exception):  # logged by _written_callback
                await asyncio.shield(in_flight)  # its callback may start the next one
            if self._writing is in_flight:
                # Done, but its callback (which clears it) is still queued: awaiting a done
                # future does not yield, so without this the loop would spin here for ever
                # (a stop begun just as a write finished never ended).
                await asyncio.sleep(0)
        self._closed = True
        if final or self._requested > self._taken:
            self._requested += 1
            writing = self._start()
            if writing is not None:
                with contextlib.suppress(Exception):
                    await writing
        self._done(self._requested)
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None
