"""The event hub: a numbered log of lifecycle events that subscriptions read at their own pace.

Lifecycle events (built by :mod:`herdr_sim.services.lifecycle`) use the underscore envelope
``{"event": "pane_created", "data": {"type": "pane_created", …}}``. Subscriptions
(:mod:`herdr_sim.methods.subscriptions`) each keep a cursor into the log, as Herdr's do;
Herdr 0.9 starts that cursor at the current end (live events only, reference §17.1).
Recorders and waits listen synchronously.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from .lifecycle import Event

Envelope = dict[str, Any]


class Signal:
    """A level-free wake-up: every waiter of the current round wakes on :meth:`fire`.

    Waits for pane output and state changes are built on it, so they do not spin; a
    subscription stream also re-polls every 100 ms, as Herdr's does, for the changes that
    only a snapshot shows. Waiters are kept in a dict (insertion-ordered, O(1) removal):
    fifty streams leave the hub's signal after every round.
    """

    def __init__(self, before: Callable[[], None] | None = None) -> None:
        self._waiters: dict[asyncio.Future[None], None] = {}
        #: how many times it fired: "has anything changed since I looked" without a wait
        self.fired = 0
        #: called at each fire, before anyone is woken (a narrower signal derived from it)
        self._before = before

    def fire(self) -> None:
        """Wake everyone waiting now."""
        self.fired += 1
        if self._before is not None:
            self._before()
        waiters, self._waiters = self._waiters, {}
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    async def wait(self, timeout: float | None) -> bool:
        """Wait for the next :meth:`fire`; False on timeout."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters[fut] = None
        try:
            await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return False
        finally:
            self._waiters.pop(fut, None)
        return True


async def wait_any(
    signals: Iterable[Signal], timeout: float | None, *, also: Iterable[asyncio.Future[Any]] = ()
) -> None:
    """Return when any of ``signals`` fires, any future in ``also`` is done, or after
    ``timeout`` seconds, whichever comes first.

    One future, woken by whichever comes first, and a timer handle: every stream waits here
    after each round, and ``asyncio.wait`` (a set, a waiter and a callback per future on
    each call) was a third of a fifty-stream round's cost (``bench/event_fanout.py``).
    """
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[None] = loop.create_future()

    def wake(_: object = None) -> None:
        if not fut.done():
            fut.set_result(None)

    held = list(signals)
    extras = list(also)
    for signal in held:
        signal._waiters[fut] = None
    for extra in extras:
        extra.add_done_callback(wake)
    timer = None if timeout is None else loop.call_later(timeout, wake)
    try:
        await fut
    finally:
        if timer is not None:
            timer.cancel()
        for extra in extras:
            extra.remove_done_callback(wake)
        for signal in held:
            signal._waiters.pop(fut, None)
        fut.cancel()


class EventHub:
    """Herdr's event hub: a numbered, bounded log of lifecycle events, plus listeners.

    As in Herdr (``src/api/event_hub.rs``) every event gets the next sequence number and
    the hub keeps the last :data:`MAX_EVENTS` of them; each subscription reads the log
    after its own cursor (:meth:`events_after`), so two subscriptions never share one.
    Synchronous listeners (recorders, ``events.wait``, the agent engine) are called on
    every publish.
    """

    #: how many events the hub retains (Herdr's ``EventHub::MAX_EVENTS``)
    MAX_EVENTS = 512

    def __init__(self) -> None:
        self._log: deque[tuple[int, Envelope]] = deque(maxlen=self.MAX_EVENTS)
        self._sequence = 0
        self._listeners: list[Callable[[Envelope], None]] = []
        #: fired after every publish (subscription loops wait on it between polls)
        self.published = Signal()

    def publish(self, event: Event) -> Envelope:
        """Emit one lifecycle event (built by :mod:`herdr_sim.services.lifecycle`)."""
        kind = event.kind
        envelope: Envelope = {"event": kind, "data": {"type": kind, **event.data}}
        self._sequence += 1
        self._log.append((self._sequence, envelope))
        for listener in list(self._listeners):
            listener(envelope)
        self.published.fire()
        return envelope

    @property
    def current_sequence(self) -> int:
        """The sequence number of the last event published (0 before the first)."""
        return self._sequence

    def events_after(self, sequence: int) -> list[tuple[int, Envelope]]:
        """The retained events numbered above ``sequence``, oldest first."""
        if not self._log:
            return []
        skip = max(0, sequence - self._log[0][0] + 1)
        return list(itertools.islice(self._log, skip, None))

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
