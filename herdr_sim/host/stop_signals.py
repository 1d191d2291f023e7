"""The stop of a foreground command (``serve``, ``record``, ``fake-llm``, ``machine-host``):
SIGTERM, SIGINT or SIGHUP, whichever thread the kernel hands the signal to.

Why not a ``threading.Event`` that a signal handler sets while the main thread waits on it:
CPython runs a Python signal handler only in the main thread, when that thread next runs
bytecode. The kernel may deliver a process's signal to any thread that does not block it;
when another thread (the simulator's loop, a session writer, a detection worker) takes it,
the main thread stays asleep on the event's lock, the handler never runs, and the server
ignores its SIGTERM until something else wakes it. Measured: of 40 processes whose main
thread waited on an event beside three busy threads, 5 never ran their SIGTERM handler;
``tests/sim/test_stop_signals.py`` forces that delivery, on the former wait and on this
one. Python's C-level handler writes to the wakeup fd (:func:`signal.set_wakeup_fd`) on
whatever thread it runs, so the main thread here sleeps in a ``select`` on that fd and,
woken, runs the handlers itself.
The standard library has no such wait outside asyncio, whose loop would be a second event
loop in these threaded commands only for this.
"""

from __future__ import annotations

import contextlib
import select
import signal
import socket
import threading
import time
from types import FrameType

__all__ = ["STOP_SIGNALS", "StopSignals"]

#: Herdr's server stops on the three (its ``ctrlc`` handler has the ``termination`` feature)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class StopSignals:
    """Set by SIGTERM, SIGINT or SIGHUP, or by :meth:`set` from any thread.

    Made in the main thread (Python installs signal handlers only there); :meth:`wait` in
    the main thread is woken by a signal whichever thread received it.
    """

    def __init__(self, signums: tuple[signal.Signals, ...] = STOP_SIGNALS) -> None:
        self._event = threading.Event()
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        for signum in signums:
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._event.set()

    def set(self) -> None:
        """Stop (from any thread): the waiter wakes."""
        self._event.set()
        with contextlib.suppress(OSError):  # full: a wake-up is already pending; closed: done
            self._writer.send(b"\0")

    def is_set(self) -> bool:
        """Whether a stop signal came or :meth:`set` was called."""
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until stopped (True) or ``timeout`` seconds passed (False)."""
        # own deadline: the wait is a select on the wakeup fd, which no poll helper offers
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._event.is_set():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            # a signal's C handler writes here; its Python handler runs once this returns
            select.select([self._reader], [], [], left)
            with contextlib.suppress(BlockingIOError):
                self._reader.recv(4096)
        return True

    def close(self) -> None:
        """Give the wakeup fd back to what had it (the handlers stay: a late signal still
        only sets this)."""
        with contextlib.suppress(ValueError):  # not the main thread any more
            signal.set_wakeup_fd(self._previous_fd)
        self._reader.close()
        self._writer.close()
