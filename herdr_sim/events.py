"""The event hub: lifecycle events fan out to live subscribers and to recorders.

Herdr 0.9 subscriptions carry live events only (no replay of history, reference §17.1).
Lifecycle events (built by :mod:`herdr_sim.lifecycle`) use the underscore envelope
``{"event": "pane_created", "data": {"type": "pane_created", …}}``; filtered subscriptions
(``pane.agent_status_changed``, ``pane.output_matched``) are built on top by
:mod:`herdr_sim.methods.events`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .lifecycle import Event

Envelope = dict[str, Any]


class Signal:
    """A level-free wake-up: every waiter of the current round wakes on :meth:`fire`.

    Waits for pane output and state changes are built on it, so nothing polls while idle.
    """

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] = []

    def fire(self) -> None:
        """Wake everyone waiting now."""
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    async def wait(self, timeout: float | None) -> bool:
        """Wait for the next :meth:`fire`; False on timeout."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return False
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)
        return True


class EventHub:
    """Publishes envelopes to subscriber queues and synchronous listeners."""

    def __init__(self) -> None:
        self._queues: list[asyncio.Queue[Envelope]] = []
        self._listeners: list[Callable[[Envelope], None]] = []

    def publish(self, event: Event) -> Envelope:
        """Emit one lifecycle event (built by :mod:`herdr_sim.lifecycle`)."""
        kind = event.kind
        envelope: Envelope = {"event": kind, "data": {"type": kind, **event.data}}
        for queue in self._queues:
            queue.put_nowait(envelope)
        for listener in list(self._listeners):
            listener(envelope)
        return envelope

    def subscribe(self) -> asyncio.Queue[Envelope]:
        """A queue receiving every event from now on; pair with :meth:`unsubscribe`."""
        queue: asyncio.Queue[Envelope] = asyncio.Queue()
        self._queues.append(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Envelope]) -> None:
        """Stop feeding ``queue``."""
        if queue in self._queues:
            self._queues.remove(queue)

    def listener_count(self) -> int:
        """How many listeners :meth:`add_listener` holds now."""
        return len(self._listeners)

    def add_listener(self, listener: Callable[[Envelope], None]) -> None:
        """Call ``listener`` synchronously for every event (recorders, test hooks)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[Envelope], None]) -> None:
        """Undo :meth:`add_listener`."""
        if listener in self._listeners:
            self._listeners.remove(listener)
