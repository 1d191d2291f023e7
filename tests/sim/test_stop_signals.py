"""The stop of a foreground command (``serve``, ``record``, ``fake-llm``, ``machine-host``)
comes whichever thread the kernel hands SIGTERM to (herdr_sim/host/stop_signals.py).

The child below makes another thread the only one that can take the signal (the main
thread blocks it), as the kernel sometimes chooses on its own: once in eight in a process
with three busy threads. A main thread asleep on a ``threading.Event`` then never runs its
handler; the stop signals' waiter does.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from herdr_sim.host.stop_signals import StopSignals
from tests.waits import SCALE, wait_until

CHILD = textwrap.dedent(
    """
    import signal, sys, threading
    from herdr_sim.host.stop_signals import StopSignals

    if sys.argv[1] == "stop-signals":
        stop = StopSignals()
    else:  # the former wait: a handler that sets an event
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    taker = threading.Thread(target=threading.Event().wait, daemon=True)
    taker.start()  # created before the block below: SIGTERM is open to it alone
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    print("ready", flush=True)
    stop.wait()
    print("stopped", flush=True)
    """
)


def asleep(pid: int) -> bool:
    """Whether the main thread of ``pid`` sleeps (state ``S`` in ``/proc/<pid>/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2] == "S"


@contextlib.contextmanager
def child(kind: str) -> Iterator[subprocess.Popen[str]]:
    """The child above, waiting for its stop; killed and reaped at the end."""
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, kind], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline() == "ready\n"
            # the signal must find the main thread asleep in its wait, not still running
            # bytecode (where it would see the signal whichever thread took it)
            wait_until(lambda: asleep(proc.pid), 10, what="the child's main thread asleep")
            yield proc
        finally:
            proc.kill()


def test_sigterm_taken_by_another_thread_stops_the_waiting_main_thread() -> None:
    with child("stop-signals") as proc:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10 * SCALE) == 0
        assert proc.stdout is not None
        assert proc.stdout.read() == "stopped\n"


def test_the_former_event_wait_sleeps_through_that_sigterm() -> None:
    """The control: the child's setup does send the signal elsewhere (on a plain event the
    main thread is never woken), so the test above shows the waiter, not luck."""
    with child("event") as proc:
        proc.send_signal(signal.SIGTERM)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(1.0)


def test_set_from_another_thread_wakes_the_waiter() -> None:
    stop = StopSignals((signal.SIGUSR2,))
    try:
        assert not stop.wait(0.01)
        threading.Timer(0.05, stop.set).start()
        assert stop.wait(10 * SCALE)
        assert stop.is_set()
    finally:
        stop.close()
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)


def test_a_signal_to_this_process_sets_it() -> None:
    stop = StopSignals((signal.SIGUSR2,))
    try:
        signal.raise_signal(signal.SIGUSR2)
        assert stop.wait(10 * SCALE)
    finally:
        stop.close()
        signal.signal(signal.SIGUSR2, signal.SIG_DFL)


def test_close_gives_the_wakeup_fd_back() -> None:
    before = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(before)
    stop = StopSignals((signal.SIGUSR2,))
    stop.close()
    signal.signal(signal.SIGUSR2, signal.SIG_DFL)
    assert signal.set_wakeup_fd(before) == before
