"""A child process in a real pseudo-terminal, driven by an asyncio event loop.

Each simulated pane runs its shell here.  The simulator hosts hundreds of panes
on one event loop in a non-main thread, so everything is callback-driven on
file descriptors the loop already polls: output through ``add_reader`` on the
pty master, exit through ``add_reader`` on a pidfd (no waiter thread per child,
no SIGCHLD handler, which only the main thread could install), input through a
buffer flushed by ``add_writer``.  An idle pane costs two registered fds and no
CPU.

Spawning is glibc's ``posix_spawn`` (:mod:`herdr_sim.pty_spawn`): no fork of the
simulator, whose page tables a fork would copy while holding the GIL (100 panes started at
once held the loop for seconds); the child is a new session's leader with the slave as its
controlling terminal, and a failure to change into the cwd or to exec comes back as an
errno.  Everything after the spawn is ours: one reaper (a pidfd, no child watcher racing
it: the ``ECHILD`` trouble in STYLE.md §3.1, which is also why asyncio's subprocess API is
not used), and the program looked up on the *pane's* ``PATH`` (relative to its cwd) before
the spawn, so a missing program raises ``FileNotFoundError`` naming it.

Like Herdr's pty library, the child starts with every signal at its default
disposition and an empty signal mask, whatever thread spawns it and whatever the
simulator's own process ignores or blocks (an inherited ``SIG_IGN`` for
``SIGINT`` would survive exec, and Ctrl-C would no longer interrupt ``sleep``).

Ending a pane ends its whole process tree (``terminate``).  Orphans that
outlive their parents would be re-parented to init, and a container's init
does not always reap them; so by default the first spawn makes this process a
*child subreaper* (``PR_SET_CHILD_SUBREAPER``), orphans of pane processes come
back to us, and ``terminate`` reaps exactly the ones it killed (by pidfd, so a
recycled pid can never be reaped or signalled by mistake).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import fcntl
import logging
import os
import select
import signal
import struct
import sys
import termios
import threading
import weakref
from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path

from herdr_sim.host.pty_spawn import spawn_on_pty
from orchestrator.client.poll import Deadline

from . import procfs

__all__ = [
    "EXIT_OUTPUT_GRACE",
    "PtyClosedError",
    "PtyProcess",
    "default_signal_state",
    "enable_subreaper",
]

log = logging.getLogger(__name__)

READ_CHUNK = 64 * 1024
"""Most bytes read from the master per loop wakeup, so one chatty pane cannot
starve the others sharing the loop."""

EXIT_OUTPUT_GRACE = 1.0
"""Seconds to wait, after the shell exited, for the pty to report end of output
before ``on_exit`` fires anyway.  On Linux the hang-up that follows the death of
the session leader normally ends the output at once; this only bounds odd
cases (a shell that gave up its controlling tty)."""

_DRAIN_LIMIT = 16  # chunks read synchronously at exit/teardown: at most 1 MiB

_PR_SET_CHILD_SUBREAPER = 36
_subreaper_lock = threading.Lock()
_subreaper_enabled = False
#: every pane process made here: a closing pane's tree walk skips the other panes' shells
#: among this process's children (see ``_TreeKiller``)
_panes: weakref.WeakSet[PtyProcess] = weakref.WeakSet()


class PtyClosedError(OSError):
    """The pty was closed (``terminate``) or its child side has gone away."""


def enable_subreaper() -> bool:
    """Make this process the reaper of orphaned descendants (Linux only).

    Process-wide and permanent: any orphan below this process (not only pane
    processes) is re-parented here instead of to init.  ``terminate`` reaps the
    pane processes among them; orphans of unrelated code stay zombies until
    this process exits, as they would under a non-reaping init.  Returns
    whether the flag is set.
    """
    global _subreaper_enabled
    with _subreaper_lock:
        if _subreaper_enabled:
            return True
        if not sys.platform.startswith("linux"):
            return False
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            log.warning("PR_SET_CHILD_SUBREAPER failed: %s", os.strerror(ctypes.get_errno()))
            return False
        _subreaper_enabled = True
        return True


def subreaper_enabled() -> bool:
    """Whether :func:`enable_subreaper` succeeded in this process (orphans come back here)."""
    return _subreaper_enabled


#: Every signal a process can catch or ignore; the child resets each to SIG_DFL.
_RESETTABLE_SIGNALS = tuple(
    sig for sig in signal.valid_signals() if sig not in (signal.SIGKILL, signal.SIGSTOP)
)


def default_signal_state() -> None:
    """Give the calling thread an empty signal mask and every signal its default action.

    For a child between fork and exec (a ``preexec_fn``): what Herdr's pty library does
    for a pane, so a program started in a pty sees the signal state a terminal gives it,
    not whatever the spawning thread blocked or the simulator's process ignored.
    """
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    for sig in _RESETTABLE_SIGNALS:
        # OSError: reserved by libc (the first real-time signals).  Not ValueError:
        # in a forked child the forking thread is the main thread (3.11 to 3.13), and
        # if that ever changed the spawn must fail, not leave the state half reset.
        with contextlib.suppress(OSError):
            signal.signal(sig, signal.SIG_DFL)


class _Child:
    """The pane's direct child: its pid and, once reaped by us, its exit status.

    ``returncode`` follows ``subprocess``: negative for a signal; 0 if someone
    else reaped the child first (``ECHILD``), as ``Popen.poll`` assumes.
    """

    __slots__ = ("pid", "returncode")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """Reap without blocking; the exit status, or ``None`` while it runs."""
        if self.returncode is not None:
            return self.returncode
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            self.returncode = 0
            return 0
        if pid == self.pid:
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float) -> int:
        """Block until the child exits and reap it; ``TimeoutError`` after ``timeout``."""
        if self.poll() is None:
            pidfd = os.pidfd_open(self.pid)  # readable once it has exited
            try:
                _wait_readable_sync([pidfd], timeout)
            finally:
                os.close(pidfd)
        code = self.poll()
        if code is None:
            raise TimeoutError(f"pid {self.pid} still running after {timeout:g} s")
        return code


def _resolve(program: str, env: Mapping[str, str], cwd: str) -> str:
    """The file exec would run for ``program`` in the child, as ``subprocess`` finds it.

    After the child's ``chdir``: a name with a slash is taken relative to ``cwd``, a bare
    name is looked up on the *pane's* ``PATH`` (relative entries relative to ``cwd``).
    Raises what ``subprocess`` raises: ``PermissionError`` if only something not
    executable was found, else ``FileNotFoundError``.
    """
    if os.sep in program:
        candidates = [Path(cwd, program)]
    else:
        path = env.get("PATH", os.defpath)
        candidates = [Path(cwd, entry, program) for entry in path.split(os.pathsep)]
    denied = False
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
        denied = denied or candidate.exists()  # exec would fail with EACCES
    code = errno.EACCES if denied else errno.ENOENT
    raise OSError(code, os.strerror(code), program)  # PermissionError / FileNotFoundError


def _winsize(cols: int, rows: int) -> bytes:
    if not (0 < cols < 65536 and 0 < rows < 65536):
        raise ValueError(f"invalid pty size {cols}x{rows}")
    return struct.pack("HHHH", rows, cols, 0, 0)


def _is_readable(fd: int) -> bool:
    """Non-blocking readiness check; ``poll`` because fds may exceed 1023."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class _Target:
    """One process to end: its pid and a pidfd that pins its identity."""

    __slots__ = ("pid", "pidfd")

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid = pid
        self.pidfd = pidfd


class _TreeKiller:
    """Finds, signals and reaps every process of one pane.

    The targets are the members of the shell's session plus their descendants
    (a child that called ``setsid`` leaves the session but keeps its parent
    link while the parent lives), plus every process carrying the pane's
    ``mark`` (an environment entry all its processes inherit: it finds a
    ``setsid``/``nohup`` daemon whose parent is gone).  Each target is held by a pidfd opened right
    after it was found and re-checked against ``/proc``, so signals and the
    final reap can only reach the process that was scanned.
    """

    def __init__(self, popen: _Child, mark: str | None = None, *, adopted: bool = False) -> None:
        self._popen = popen
        self._sid = popen.pid
        self._mark = mark
        #: this process was the child subreaper before the pane started: its orphans came
        #: back here, so the pane's tree is walked instead of scanning every process
        self._adopted = adopted
        self._targets: dict[int, _Target] = {}

    def refresh(self) -> None:
        """Add processes that appeared since the last scan (late forks), and those that
        carry the pane's mark after leaving both its session and its tree."""
        me = os.getpid()
        tree = None
        if self._adopted:
            tree = procfs.session_tree_walked(
                self._sid, reaper=me, roots=list(self._targets), mark=self._mark, skip=_shells()
            )
        if tree is None:
            marked = [] if self._mark is None else procfs.marked_pids(self._mark, exact=True)
            tree = procfs.session_tree(self._sid, roots=[*self._targets, *marked])
        found = {info.pid: info.ppid for info in tree}
        if self._popen.returncode is None:
            found.setdefault(self._popen.pid, me)
        for pid, ppid in found.items():
            if pid in self._targets or pid == me:
                continue
            if pid == self._popen.pid and self._popen.returncode is not None:
                continue  # already reaped by us: the number may belong to someone else
            self._adopt(pid, ppid)

    def _adopt(self, pid: int, ppid: int) -> None:
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            return  # exited and reaped between the scan and now
        # The pid could have been recycled between the scan and pidfd_open;
        # keep it only if it is still the process we scanned.
        info = procfs.proc_info(pid)
        if info is None or not (info.sid == self._sid or info.ppid == ppid):
            os.close(pidfd)
            return
        self._targets[pid] = _Target(pid, pidfd)

    def alive(self) -> list[_Target]:
        """Targets that have not exited (a readable pidfd means exited)."""
        return [target for target in self._targets.values() if not _is_readable(target.pidfd)]

    def send(self, sig: int, targets: list[_Target]) -> None:
        for target in targets:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(target.pidfd, sig)
            if sig != signal.SIGKILL:
                # A stopped job cannot act on SIGHUP/SIGTERM until continued.
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(target.pidfd, signal.SIGCONT)

    def reap_and_close(self) -> None:
        """Reap the shell and every exited target that is now our child."""
        with contextlib.suppress(OSError):
            self._popen.poll()
        for target in self._targets.values():
            if target.pid != self._popen.pid:
                with contextlib.suppress(OSError):
                    os.waitid(os.P_PIDFD, target.pidfd, os.WEXITED | os.WNOHANG)
            os.close(target.pidfd)
        self._targets.clear()


def _shells() -> set[int]:
    """The pids of the pane shells this process has not reaped: each is its own pane's
    session leader and no other pane's process (an unreaped pid cannot be reused)."""
    return {pane.pid for pane in list(_panes) if pane.returncode is None}


class PtyProcess:
    """A child process whose stdin, stdout and stderr are one pty.

    Create with :meth:`spawn`, then :meth:`attach` to an event loop; all
    methods except :meth:`terminate_sync` must then be called from that loop's
    thread.  Input written before ``attach`` is buffered and sent on attach.
    """

    def __init__(self, popen: _Child, master_fd: int, *, adopted: bool = False) -> None:
        self._popen = popen
        #: the pane started after this process became a child subreaper (see ``_TreeKiller``)
        self._adopted = adopted
        _panes.add(self)
        self.pid: int = popen.pid
        self.master_fd: int = master_fd
        #: ``NAME=VALUE`` in the environment of every process of this pane (set by the
        #: spawner, which put it there): ending the pane ends whatever carries it
        self.mark: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_output: Callable[[bytes], None] | None = None
        self._on_exit: Callable[[int | None], None] | None = None
        self._pidfd: int | None = None
        self._reading = False
        self._writing = False
        self._eof = False
        self._exited = False
        self._exit_reported = False
        self._grace_timer: asyncio.TimerHandle | None = None
        self._poll_timer: asyncio.TimerHandle | None = None
        self._wbuf = bytearray()
        self._write_error: OSError | None = None
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._closed = False
        self._ended = False
        self._terminating: asyncio.Future[None] | None = None
        self._sync_lock = threading.Lock()

    # -- creation ----------------------------------------------------------------------------

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        cols: int,
        rows: int,
        adopt_orphans: bool = True,
    ) -> PtyProcess:
        """Start ``argv`` on a new pty of ``cols`` x ``rows``, as a session leader.

        The slave becomes the child's controlling terminal, so job control,
        ``tty`` and ``SIGWINCH`` behave as in a terminal emulator.  Raises
        ``OSError`` (``FileNotFoundError`` for a missing program or cwd) if the
        program cannot be started.  ``adopt_orphans`` calls
        :func:`enable_subreaper` first (see the module docstring).
        """
        if adopt_orphans:
            enable_subreaper()
        _winsize(cols, rows)  # validates before anything is created
        if not argv:
            raise ValueError("empty argv")
        if not Path(cwd).is_dir():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
        program = _resolve(argv[0], env, cwd)
        adopted = subreaper_enabled()  # before the spawn: every orphan of the pane comes back
        master, slave = os.openpty()  # both close-on-exec
        try:
            # Set before the program starts, so its first TIOCGWINSZ sees the real size.
            fcntl.ioctl(master, termios.TIOCSWINSZ, _winsize(cols, rows))
            pid = spawn_on_pty(program, argv, cwd=cwd, env=env, slave=os.ttyname(slave))
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        log.debug("spawned pty child", extra={"herdr_pid": pid, "herdr_argv": list(argv)})
        return cls(_Child(pid), master, adopted=adopted)

    @property
    def returncode(self) -> int | None:
        """The exit status once the exit was observed (negative: killed by that signal)."""
        return self._popen.returncode

    # -- the event loop side -------------------------------------------------------------------

    @property
    def adopted(self) -> bool:
        """Whether this process was the child subreaper when the pane started: every process
        the pane starts stays below it (its orphans come back here)."""
        return self._adopted

    def attach(
        self,
        loop: asyncio.AbstractEventLoop,
        on_output: Callable[[bytes], None],
        on_exit: Callable[[int | None], None],
    ) -> None:
        """Deliver output and the exit status through ``loop``'s callbacks.

        ``on_output`` gets each chunk as read (any size up to 64 KiB, split
        anywhere, including inside a UTF-8 sequence).  ``on_exit`` is called
        once, with :attr:`returncode`, after the child exited *and* its last
        output was delivered; it is not called if :meth:`terminate` ends the
        process first (the caller already knows).
        """
        if self._closed:
            raise PtyClosedError(errno.EBADF, "pty is closed")
        if self._loop is not None:
            raise RuntimeError("PtyProcess is already attached to a loop")
        self._loop = loop
        self._on_output = on_output
        self._on_exit = on_exit
        loop.add_reader(self.master_fd, self._read_ready)
        self._reading = True
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except OSError:
            # No pidfd support: fall back to polling after end-of-output.
            self._pidfd = None
        else:
            loop.add_reader(self._pidfd, self._pidfd_ready)
        if self._wbuf:
            self._start_writer()

    def _read_chunk(self) -> bytes | None:
        """One read of the pty: its bytes, ``b""`` at the end of output, None when there is
        nothing to read now."""
        try:
            return os.read(self.master_fd, READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return None  # a spurious wakeup (pexpect #24), or nothing written yet
        except OSError as exc:
            # Linux reports a closed slave side as EIO; treat every error as
            # end of output, the fd is of no further use either way.
            if exc.errno != errno.EIO:
                log.debug("pty read failed: %s", exc, extra={"herdr_pid": self.pid})
            return b""

    def _read_ready(self) -> None:
        data = self._read_chunk()
        if data is None:
            return
        if not data:
            self._end_of_output()
            return
        if self._on_output is not None:
            self._on_output(data)

    def read_pending(self, chunks: int = 16) -> None:
        """Take in now what the pane's program has written and the loop has not read yet
        (at most ``chunks`` reads): a report the program sends after drawing then finds its
        drawing on the screen, whichever of the two the loop would have woken for first.
        The end of output is left to the loop's reader (it reads it again)."""
        for _ in range(chunks):
            if not self._reading or not (data := self._read_chunk()):
                return
            if self._on_output is not None:
                self._on_output(data)

    def _stop_reading(self) -> None:
        if self._reading and self._loop is not None:
            self._loop.remove_reader(self.master_fd)
        self._reading = False

    def _end_of_output(self) -> None:
        self._stop_reading()
        self._eof = True
        if self._pidfd is None and not self._exited:
            self._poll_exit(0.01)
        self._maybe_report_exit()

    def _poll_exit(self, delay: float) -> None:
        """Fallback exit detection without pidfds: poll with backoff up to 1 s."""
        self._poll_timer = None
        if self._closed or self._loop is None:
            return
        if self._popen.poll() is not None:
            self._exited = True
            self._maybe_report_exit()
            return
        self._poll_timer = self._loop.call_later(delay, self._poll_exit, min(delay * 2, 1.0))

    def _pidfd_ready(self) -> None:
        self._close_pidfd()
        self._popen.poll()  # reaps: the pidfd says it has exited
        self._exited = True
        if not self._eof and self._loop is not None:
            self._grace_timer = self._loop.call_later(EXIT_OUTPUT_GRACE, self._grace_expired)
        self._maybe_report_exit()

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            if self._loop is not None:
                self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def _grace_expired(self) -> None:
        self._grace_timer = None
        self._drain_output()
        self._stop_reading()
        self._eof = True
        self._maybe_report_exit()

    def _drain_output(self) -> None:
        """Deliver what is readable right now, without waiting for more.

        Bounded (``_DRAIN_LIMIT`` chunks): a program that never stops printing
        must not hold the loop.  Used on paths that must finish (exit and
        teardown), so a failing ``on_output`` is reported to the loop's
        exception handler instead of aborting them.
        """
        for _ in range(_DRAIN_LIMIT):
            if self._closed:
                return
            try:
                data = os.read(self.master_fd, READ_CHUNK)
            except OSError:
                return
            if not data:
                return
            if self._on_output is None:
                continue
            try:
                self._on_output(data)
            except Exception as exc:
                if self._loop is None:
                    raise
                self._loop.call_exception_handler(
                    {"message": "pty on_output callback failed", "exception": exc}
                )

    def _maybe_report_exit(self) -> None:
        if not (self._exited and self._eof) or self._exit_reported:
            return
        self._exit_reported = True
        if self._grace_timer is not None:
            self._grace_timer.cancel()
            self._grace_timer = None
        # Input can no longer reach anyone: fail pending drains.
        self._fail_writes(PtyClosedError(errno.EIO, "pty child has exited"))
        if self._on_exit is not None:
            self._on_exit(self.returncode)

    # -- input ---------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Queue ``data`` for the child; never blocks.

        What the kernel accepts now is written at once, the rest is flushed as
        the child reads.  Raises :class:`PtyClosedError` once the pty is closed
        or the child side is gone.
        """
        if self._closed:
            raise PtyClosedError(errno.EBADF, "pty is closed")
        if self._write_error is not None:
            raise PtyClosedError(self._write_error.errno, "pty input is closed")
        if not data:
            return
        if self._wbuf:
            self._wbuf += data
            return
        try:
            written = os.write(self.master_fd, data)
        except (BlockingIOError, InterruptedError):
            written = 0
        except OSError as exc:
            self._fail_writes(exc)
            raise PtyClosedError(exc.errno, f"pty write failed: {exc.strerror}") from exc
        if written < len(data):
            self._wbuf += data[written:]
            self._start_writer()

    def _start_writer(self) -> None:
        if not self._writing and self._loop is not None and not self._closed:
            self._loop.add_writer(self.master_fd, self._write_ready)
            self._writing = True

    def _stop_writer(self) -> None:
        if self._writing and self._loop is not None:
            self._loop.remove_writer(self.master_fd)
        self._writing = False

    def _write_ready(self) -> None:
        try:
            written = os.write(self.master_fd, self._wbuf)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._fail_writes(exc)
            return
        del self._wbuf[:written]
        if not self._wbuf:
            self._stop_writer()
            self._wake_drainers(None)

    def _fail_writes(self, exc: OSError) -> None:
        if self._write_error is None:
            self._write_error = exc
        self._wbuf.clear()
        self._stop_writer()
        self._wake_drainers(PtyClosedError(exc.errno, f"pty input failed: {exc.strerror}"))

    def _wake_drainers(self, exc: BaseException | None) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if waiter.done():
                continue
            if exc is None:
                waiter.set_result(None)
            else:
                waiter.set_exception(exc)

    async def drain(self) -> None:
        """Wait until all written input was handed to the kernel.

        Unbounded by itself (a child that never reads never drains): wrap it in
        ``asyncio.wait_for``.  Raises :class:`PtyClosedError` if the pty closes
        or the child exits with input still queued.
        """
        if not self._wbuf:
            return
        if self._loop is None:
            raise RuntimeError("attach() the PtyProcess before draining")
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._drain_waiters.append(waiter)
        await waiter

    # -- terminal control ----------------------------------------------------------------------

    def resize(self, cols: int, rows: int) -> None:
        """Set the window size; the kernel sends SIGWINCH to the foreground job."""
        size = _winsize(cols, rows)
        if self._closed:
            raise PtyClosedError(errno.EBADF, "pty is closed")
        try:
            fcntl.ioctl(self.master_fd, termios.TIOCSWINSZ, size)
        except OSError as exc:
            raise PtyClosedError(exc.errno, f"pty resize failed: {exc.strerror}") from exc

    def foreground_pgid(self) -> int | None:
        """The terminal's foreground process group, or ``None`` if unknown/closed."""
        if self._closed:
            return None
        try:
            pgid = os.tcgetpgrp(self.master_fd)
        except OSError:
            return None
        return pgid if pgid > 0 else None

    # -- termination ---------------------------------------------------------------------------

    def _detach_exit_watch(self) -> None:
        """Stop exit reporting: from here on ``terminate`` owns the child."""
        self._exit_reported = True
        for timer in (self._grace_timer, self._poll_timer):
            if timer is not None:
                timer.cancel()
        self._grace_timer = self._poll_timer = None
        self._close_pidfd()

    def _kill_plan(self, timeout: float) -> Generator[tuple[list[int], float], None, None]:
        """SIGHUP → SIGTERM → SIGKILL over the pane's tree; yields (pidfds, seconds) to wait.

        Each step waits until every target has exited or ``timeout / 3`` is
        spent.  SIGHUP first, as a closing terminal would send (it is also how
        Herdr ends a pane); interactive shells ignore SIGTERM.
        """
        killer = _TreeKiller(self._popen, self.mark, adopted=self._adopted)
        grace = max(timeout, 0.0) / 3
        # HUP, TERM, KILL, then up to two more KILL rounds for late forks.
        signals = [signal.SIGHUP, signal.SIGTERM, *[signal.SIGKILL] * 3]
        try:
            # Find the tree before hanging up: the hang-up's SIGHUP can kill a
            # parent and orphan a child that left the session, after which
            # nothing in /proc leads to it any more.
            killer.refresh()
            self._hang_up()
            for step, sig in enumerate(signals):
                if step:  # the first scan is only microseconds old
                    killer.refresh()
                alive = killer.alive()
                if not alive:
                    # Everything known is dead, so nothing can fork any more;
                    # one last scan finds what was forked just before (and
                    # any zombie left for us to reap).
                    killer.refresh()
                    alive = killer.alive()
                    if not alive:
                        return
                log.debug(
                    "signalling pane processes",
                    extra={
                        "herdr_pid": self.pid,
                        "herdr_signal": signal.Signals(sig).name,
                        "herdr_targets": [target.pid for target in alive],
                    },
                )
                killer.send(sig, alive)
                yield [target.pidfd for target in alive], grace
            survivors = [target.pid for target in killer.alive()]
            if survivors:  # in uninterruptible sleep, or forking faster than we kill
                log.warning(
                    "pane processes survived SIGKILL",
                    extra={"herdr_pid": self.pid, "herdr_targets": survivors},
                )
        finally:
            killer.reap_and_close()

    def _close_fds(self) -> None:
        self._stop_writer()
        self._stop_reading()
        self._fail_writes(PtyClosedError(errno.EBADF, "pty is closed"))
        if not self._closed:
            self._closed = True
            os.close(self.master_fd)
            self.master_fd = -1

    def _hang_up(self) -> None:
        """Deliver pending output, then close the master like a closing terminal.

        Closing the master hangs up the slave: every reader in the pane gets
        end-of-file at once and the kernel sends SIGHUP to the session leader
        and the foreground job.  That
        matters for an interactive shell sitting in readline, which can miss a
        SIGHUP that lands just before it blocks in read() (and it ignores
        SIGTERM), but never misses end-of-file.
        """
        self._detach_exit_watch()
        if self._loop is not None and not self._closed:
            self._drain_output()
        self._close_fds()

    async def terminate(self, timeout: float = 3.0) -> None:
        """End the child and everything it started, reap them and close the pty.

        Output already readable is delivered to ``on_output`` first, then the
        pty is hung up and the process tree gets SIGHUP, SIGTERM and SIGKILL,
        each step waiting (on pidfds, up to ``timeout / 3``) only while
        something is still alive.  ``on_exit`` is not called.  Idempotent and
        safe to call concurrently (later calls wait for the first).
        """
        while self._terminating is not None:
            await asyncio.shield(self._terminating)
        if self._ended:
            return
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop and self._loop.is_running():
            raise RuntimeError("terminate() must run on the loop the pty is attached to")
        done: asyncio.Future[None] = loop.create_future()
        self._terminating = done
        plan = self._kill_plan(timeout)
        try:
            for pidfds, seconds in plan:
                await _wait_readable_async(loop, pidfds, seconds)
            self._ended = True
        finally:
            plan.close()  # reaps and closes the pidfds even if we were cancelled
            self._terminating = None
            done.set_result(None)

    def terminate_sync(self, timeout: float = 3.0) -> None:
        """:meth:`terminate` for code that is not running on the pty's loop.

        If the pty is attached to a loop running in another thread, the work is
        handed to that loop (its callbacks must not be touched from here) and
        this call blocks until it is done.  Called on the running loop's own
        thread it works but blocks that loop meanwhile.
        """
        loop = self._loop
        if loop is not None and loop.is_running() and not loop.is_closed():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:
                future = asyncio.run_coroutine_threadsafe(self.terminate(timeout), loop)
                future.result(timeout + 10.0)
                return
        with self._sync_lock:
            if self._ended:
                return
            plan = self._kill_plan(timeout)
            try:
                for pidfds, seconds in plan:
                    _wait_readable_sync(pidfds, seconds)
                self._ended = True
            finally:
                plan.close()


async def _wait_readable_async(
    loop: asyncio.AbstractEventLoop, fds: list[int], seconds: float
) -> None:
    """Wait until every fd is readable or ``seconds`` pass, on the loop."""
    pending = set(fds)
    if not pending:
        return
    done: asyncio.Future[None] = loop.create_future()

    def ready(fd: int) -> None:
        loop.remove_reader(fd)
        pending.discard(fd)
        if not pending and not done.done():
            done.set_result(None)

    for fd in fds:
        loop.add_reader(fd, ready, fd)
    try:
        await asyncio.wait_for(done, seconds)
    except TimeoutError:
        pass
    finally:
        for fd in pending:
            loop.remove_reader(fd)


def _wait_readable_sync(fds: list[int], timeout: float) -> None:
    """Blocking twin of :func:`_wait_readable_async`."""
    pending = set(fds)
    deadline = Deadline(timeout)
    while pending:
        remaining = deadline.left()
        if remaining <= 0:
            return
        poller = select.poll()
        for fd in pending:
            poller.register(fd, select.POLLIN)
        for fd, _events in poller.poll(remaining * 1000):
            pending.discard(fd)
