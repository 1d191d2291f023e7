"""Real shells in real ptys: I/O, sizing, job control, exit and whole-tree teardown.

Every test drives its own asyncio loop (``asyncio.run``, or a loop in a thread
as the simulator runs it) and bounds every wait.  Commands print computed
values (``$((6*7))``, ``RE""ADY``) so that the echo of the typed command line
can never satisfy a wait meant for the command's output.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from herdr_sim.host import procfs
from herdr_sim.host.pty import PtyClosedError, PtyProcess
from herdr_sim.host.pty_spawn import spawn_on_pty
from herdr_sim.host.shell import ShellConfig, pane_command, pane_env
from orchestrator.client.poll import Deadline
from tests.waits import SCALE
from tests.waits import wait_until as poll_until

WAIT = float(os.environ.get("HERDR_TEST_WAIT", "10"))


class Pane:
    """Test harness around one attached PtyProcess: output buffer and exit future."""

    def __init__(self, proc: PtyProcess, loop: asyncio.AbstractEventLoop) -> None:
        self.proc = proc
        self.output = bytearray()
        self.exit_codes: list[int | None] = []
        self.output_at_exit: bytes | None = None
        self.exited: asyncio.Future[int | None] = loop.create_future()
        self._changed = asyncio.Event()
        self._pos = 0
        proc.attach(loop, self._on_output, self._on_exit)

    def _on_output(self, data: bytes) -> None:
        self.output += data
        self._changed.set()

    def _on_exit(self, code: int | None) -> None:
        self.exit_codes.append(code)
        self.output_at_exit = bytes(self.output)
        if not self.exited.done():
            self.exited.set_result(code)

    async def expect(self, pattern: str, within: float = WAIT) -> re.Match[bytes]:
        """Wait for ``pattern`` in output not yet consumed; consume through the match."""
        regex = re.compile(pattern.encode())

        async def search() -> re.Match[bytes]:
            while True:
                match = regex.search(self.output, self._pos)
                if match is not None:
                    self._pos = match.end()
                    return match
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(search(), within)
        except TimeoutError:
            tail = bytes(self.output[self._pos :])[-500:]
            raise AssertionError(f"no {pattern!r} in pane output; unread tail: {tail!r}") from None

    async def run(self, command: str, pattern: str) -> re.Match[bytes]:
        """Type a command line and wait for ``pattern`` after it."""
        self.proc.write(command.encode() + b"\n")
        return await self.expect(pattern)


async def wait_until(predicate: Callable[[], bool], within: float = WAIT) -> None:
    """Poll a condition that has no event to wait on (e.g. /proc state), bounded."""
    deadline = Deadline(within)
    while not predicate():
        if deadline.expired():
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def spawn_shell(
    runtime_dir: Path,
    *,
    cols: int = 80,
    rows: int = 24,
    caller_env: dict[str, str] | None = None,
    herdr_env: dict[str, str] | None = None,
    cli_dir: Path | None = None,
) -> PtyProcess:
    """The deterministic pane shell, with a scrubbed environment and HOME."""
    env = pane_env(
        base={"PATH": os.environ.get("PATH", os.defpath), "HOME": str(runtime_dir)},
        caller_env=caller_env or {},
        herdr_env=herdr_env or {"HERDR_ENV": "1"},
        cli_dir=cli_dir,
        deterministic=True,
    )
    argv = pane_command(ShellConfig(), runtime_dir)
    return PtyProcess.spawn(argv, cwd=str(runtime_dir), env=env, cols=cols, rows=rows)


async def started(
    runtime_dir: Path,
    *,
    cols: int = 80,
    rows: int = 24,
    caller_env: dict[str, str] | None = None,
    herdr_env: dict[str, str] | None = None,
    cli_dir: Path | None = None,
) -> Pane:
    """Spawn, attach to the running loop and wait for the first prompt."""
    proc = spawn_shell(
        runtime_dir,
        cols=cols,
        rows=rows,
        caller_env=caller_env,
        herdr_env=herdr_env,
        cli_dir=cli_dir,
    )
    pane = Pane(proc, asyncio.get_running_loop())
    await pane.expect(r"\$ ")
    return pane


def run_async(body: Callable[[], Awaitable[None]]) -> None:
    async def main() -> None:
        await body()

    asyncio.run(main())


@pytest.fixture
def runtime_dir(tmp_path: Path) -> Path:
    return tmp_path


def gone(pid: int) -> bool:
    return procfs.proc_info(pid) is None


def name_of(pid: int) -> str | None:
    info = procfs.proc_info(pid)
    return None if info is None else info.name


def ppid_of(pid: int) -> int | None:
    info = procfs.proc_info(pid)
    return None if info is None else info.ppid


def sid_of(pid: int) -> int | None:
    info = procfs.proc_info(pid)
    return None if info is None else info.sid


# -- basic I/O ---------------------------------------------------------------------------------


def test_shell_shows_prompt_and_runs_a_command(runtime_dir: Path) -> None:
    async def body() -> None:
        pane = await started(runtime_dir)
        try:
            await pane.run("echo $((6*7))", r"\r\n42\r\n\$ ")
        finally:
            await pane.proc.terminate()

    run_async(body)


def test_window_size_is_set_before_exec_and_resize_changes_it(runtime_dir: Path) -> None:
    async def body() -> None:
        pane = await started(runtime_dir, cols=91, rows=27)
        try:
            await pane.run("stty size", r"\r\n27 91\r\n")
            pane.proc.resize(132, 40)
            await pane.run("stty size", r"\r\n40 132\r\n")
        finally:
            await pane.proc.terminate()

    run_async(body)


def test_resize_reaches_the_foreground_program_as_sigwinch(runtime_dir: Path) -> None:
    async def body() -> None:
        pane = await started(runtime_dir)
        try:
            # A job of its own, so it is the foreground group the kernel signals.
            await pane.run(
                'sh -c \'trap "echo WINCH-\\$(stty size)" WINCH; echo AR""MED;'
                " while :; do sleep 0.05; done'",
                r"ARMED\r\n",
            )
            pane.proc.resize(100, 33)
            await pane.expect(r"WINCH-33 100")
        finally:
            await pane.proc.terminate()

    run_async(body)


def test_pane_env_layers_reach_the_process(runtime_dir: Path) -> None:
    async def body() -> None:
        cli_dir = runtime_dir / "bin"
        cli_dir.mkdir()
        fake = cli_dir / "herdr"
        fake.write_text("#!/bin/sh\necho fake-herdr\n")
        fake.chmod(0o700)
        pane = await started(
            runtime_dir,
            caller_env={"HERDR_PANE_ID": "from-caller", "MY_VAR": "mine"},
            herdr_env={"HERDR_ENV": "1", "HERDR_PANE_ID": "w1:p1"},
            cli_dir=cli_dir,
        )
        try:
            await pane.run('echo "id=[$HERDR_PANE_ID]"', r"id=\[w1:p1\]")
            await pane.run(
                'echo "var=[$MY_VAR] term=[$TERM]"', r"var=\[mine\] term=\[xterm-256color\]"
            )
            await pane.run('echo "first=[${PATH%%:*}]"', rf"first=\[{re.escape(str(cli_dir))}\]")
            await pane.run("herdr", r"\r\nfake-herdr\r\n")
        finally:
            await pane.proc.terminate()

    run_async(body)


# -- controlling tty and job control -----------------------------------------------------------


def test_slave_is_the_controlling_tty(runtime_dir: Path) -> None:
    names: list[str] = []

    async def body() -> None:
        pane = await started(runtime_dir)
        try:
            match = await pane.run("tty", r"\r\n(/dev/pts/\d+)\r\n\$ ")
            info = procfs.proc_info(pane.proc.pid)
            assert info is not None
            # A session leader whose terminal has a foreground group: it has a ctty.
            assert info.sid == pane.proc.pid
            assert info.tpgid == pane.proc.pid
            assert pane.proc.foreground_pgid() == pane.proc.pid
            names.append(match.group(1).decode())
        finally:
            await pane.proc.terminate()

    run_async(body)
    assert len(names) == 1
    assert Path(names[0]).is_char_device() or not Path(names[0]).exists()


def test_background_job_gets_its_own_group_and_terminate_kills_it(runtime_dir: Path) -> None:
    async def body() -> None:
        pane = await started(runtime_dir)
        match = await pane.run("sleep 100 &", r"\[1\] (\d+)\r\n")
        job = int(match.group(1))
        info = procfs.proc_info(job)
        assert info is not None
        assert info.pgid == job != pane.proc.pid  # job control put it in its own group
        assert info.sid == pane.proc.pid
        await pane.proc.terminate()
        assert gone(job)
        assert gone(pane.proc.pid)

    run_async(body)


def test_foreground_pgid_follows_the_running_command(runtime_dir: Path) -> None:
    async def body() -> None:
        pane = await started(runtime_dir)
        shell = pane.proc.pid
        try:
            assert pane.proc.foreground_pgid() == shell
            pane.proc.write(b"sleep 100\n")
            await wait_until(lambda: pane.proc.foreground_pgid() not in (None, shell))
            pgid = pane.proc.foreground_pgid()
            assert pgid is not None
            # The job's group takes the terminal between fork and exec, while the child is
            # still a copy of bash; wait for the exec.
            await wait_until(
                lambda: [p.name for p in procfs.foreground_processes(pgid)] == ["sleep"]
            )
            assert pane.proc.foreground_pgid() == pgid
            pane.proc.write(b"\x03")  # Ctrl-C through the line discipline
            await wait_until(lambda: pane.proc.foreground_pgid() == shell)
        finally:
            await pane.proc.terminate()

    run_async(body)


# -- exit and teardown -------------------------------------------------------------------------


def test_exit_status_is_reported_once_after_the_last_output(runtime_dir: Path) -> None:
    async def body() -> None:
        pane = await started(runtime_dir)
        pane.proc.write(b"printf 'bye-%s' $((1+1)); exit 3\n")
        code = await asyncio.wait_for(pane.exited, WAIT)
        assert code == 3
        assert pane.proc.returncode == 3
        assert pane.output_at_exit is not None
        assert b"bye-2" in pane.output_at_exit
        # Reaped, not a zombie, and input is refused.
        assert gone(pane.proc.pid)
        with pytest.raises(PtyClosedError):
            pane.proc.write(b"echo late\n")
        await pane.proc.terminate()
        assert pane.exit_codes == [3]

    run_async(body)


def test_terminate_ends_the_whole_tree_and_leaves_no_zombie(runtime_dir: Path) -> None:
    async def body() -> None:
        pane = await started(runtime_dir)
        shell = pane.proc.pid
        jobs = [
            ("sleep 1000 &", "job"),
            ("nohup sleep 1001 >/dev/null 2>&1 &", "nohup"),
            ("sh -c 'trap \"\" HUP TERM; exec sleep 1002' &", "stubborn"),
            ("setsid -w sleep 1003 &", "setsid"),
        ]
        pids: dict[str, int] = {}
        for command, label in jobs:
            match = await pane.run(f'{command} echo "{label}=$!"', rf"{label}=(\d+)\r\n")
            pids[label] = int(match.group(1))
        # The stubborn child must have installed its ignores before we start.
        await wait_until(lambda: name_of(pids["stubborn"]) == "sleep")
        await wait_until(lambda: any(p.name == "sleep" for p in procfs.descendants(pids["setsid"])))
        escaped = [p.pid for p in procfs.descendants(pids["setsid"])]
        assert escaped
        assert all(sid_of(pid) not in (None, shell) for pid in escaped)
        tree = [p.pid for p in procfs.session_tree(shell)]
        assert set(pids.values()) | set(escaped) <= set(tree)

        started_at = time.monotonic()
        await pane.proc.terminate(timeout=1.5)
        elapsed = time.monotonic() - started_at

        assert [procfs.proc_info(pid) for pid in tree if not gone(pid)] == []
        assert procfs.session_members(shell) == []
        assert pane.proc.returncode is not None
        assert pane.proc.master_fd == -1
        # SIGHUP and SIGTERM were ignored by one child, so two grace periods ran.
        assert 0.9 < elapsed < 5 * SCALE

    run_async(body)


def test_orphans_of_a_pane_are_adopted_and_reaped(runtime_dir: Path) -> None:
    """A double fork orphans its child; as subreaper we get it back and reap it."""

    async def body() -> None:
        pane = await started(runtime_dir)
        match = await pane.run('(sleep 1004 & echo "orphan=$!")', r"orphan=(\d+)\r\n")
        orphan = int(match.group(1))
        await wait_until(lambda: ppid_of(orphan) == os.getpid())
        await pane.proc.terminate(timeout=1.5)
        assert gone(orphan)

    run_async(body)


def test_terminate_is_idempotent_and_closes_the_pty(runtime_dir: Path) -> None:
    async def body() -> None:
        pane = await started(runtime_dir)
        await asyncio.gather(pane.proc.terminate(), pane.proc.terminate())
        await pane.proc.terminate()
        assert gone(pane.proc.pid)
        assert pane.proc.foreground_pgid() is None
        assert pane.exit_codes == []  # terminate() does not report through on_exit
        with pytest.raises(PtyClosedError):
            pane.proc.write(b"x")
        with pytest.raises(PtyClosedError):
            pane.proc.resize(10, 10)

    run_async(body)


def test_terminate_sync_from_another_thread_hands_off_to_the_loop(runtime_dir: Path) -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:

        async def start() -> Pane:
            return await started(runtime_dir)

        pane = asyncio.run_coroutine_threadsafe(start(), loop).result(WAIT)
        pane.proc.terminate_sync(timeout=1.0)
        assert gone(pane.proc.pid)
        assert pane.proc.master_fd == -1
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(WAIT)
        loop.close()


def test_terminate_sync_without_a_loop(runtime_dir: Path) -> None:
    proc = spawn_shell(runtime_dir)
    proc.write(b"sleep 100 &\n")  # buffered or written; never blocks
    proc.terminate_sync(timeout=1.0)
    assert gone(proc.pid)
    assert procfs.session_members(proc.pid) == []


def test_spawn_failure_raises_and_leaks_no_fd(runtime_dir: Path) -> None:
    before = {entry.name for entry in Path("/proc/self/fd").iterdir()}
    with pytest.raises(FileNotFoundError):
        PtyProcess.spawn(
            [str(runtime_dir / "no-such-program")], cwd=str(runtime_dir), env={}, cols=80, rows=24
        )
    with pytest.raises(FileNotFoundError):
        PtyProcess.spawn(["true"], cwd=str(runtime_dir / "missing"), env={}, cols=80, rows=24)
    assert {entry.name for entry in Path("/proc/self/fd").iterdir()} <= before


def test_a_program_that_is_not_executable_is_a_permission_error(runtime_dir: Path) -> None:
    """As subprocess reports it: the error type and message name the program as given."""
    (runtime_dir / "notes").write_text("not a program\n")
    env = {"PATH": f"{runtime_dir}{os.pathsep}{os.defpath}"}
    for program in ("./notes", "notes"):
        with pytest.raises(PermissionError, match=r"\[Errno 13\] Permission denied: '"):
            PtyProcess.spawn([program], cwd=str(runtime_dir), env=env, cols=80, rows=24)
    with pytest.raises(FileNotFoundError, match=r"No such file or directory: 'no-such'"):
        PtyProcess.spawn(["no-such"], cwd=str(runtime_dir), env=env, cols=80, rows=24)


# -- input -------------------------------------------------------------------------------------


def test_large_write_does_not_block_the_loop(runtime_dir: Path) -> None:
    size = 200 * 1024

    async def body() -> None:
        pane = await started(runtime_dir)
        try:
            # Raw mode: no 4096-byte canonical line limit, no echo of the payload.
            await pane.run(
                f"stty raw -echo; echo RE''ADY; head -c {size} >/dev/null; stty sane; echo DO''NE",
                r"READY",
            )
            gaps: list[float] = []
            stop = asyncio.Event()

            async def ticker() -> None:
                last = time.monotonic()
                while not stop.is_set():
                    await asyncio.sleep(0.005)
                    now = time.monotonic()
                    gaps.append(now - last)
                    last = now

            tick_task = asyncio.create_task(ticker())
            before = time.monotonic()
            pane.proc.write(b"x" * size)
            write_time = time.monotonic() - before
            await asyncio.wait_for(pane.proc.drain(), WAIT)
            await pane.expect(r"DONE")
            stop.set()
            await tick_task
            assert write_time < 0.2
            assert gaps
            assert max(gaps) < 0.5
        finally:
            await pane.proc.terminate()

    run_async(body)


def test_drain_fails_when_the_child_exits_with_input_queued(runtime_dir: Path) -> None:
    async def body() -> None:
        pane = await started(runtime_dir)
        try:
            # Stop reading input entirely, then exit after a moment.
            await pane.run("stty -icanon -echo; echo RE''ADY; sleep 0.3; exit 5", r"READY")
            pane.proc.write(b"y" * (1024 * 1024))
            with pytest.raises(PtyClosedError):
                await asyncio.wait_for(pane.proc.drain(), WAIT)
            assert await asyncio.wait_for(pane.exited, WAIT) == 5
        finally:
            await pane.proc.terminate()

    run_async(body)


def test_input_written_before_attach_is_delivered(runtime_dir: Path) -> None:
    async def body() -> None:
        proc = spawn_shell(runtime_dir)
        proc.write(b"echo $((2+3))X\n")
        pane = Pane(proc, asyncio.get_running_loop())
        try:
            await pane.expect(r"\r\n5X\r\n")
        finally:
            await proc.terminate()

    run_async(body)


def test_terminate_while_output_floods_in(runtime_dir: Path) -> None:
    """A pane printing without pause (``yes``) must not keep teardown busy."""

    async def body() -> None:
        pane = await started(runtime_dir)
        pane.proc.write(b"yes\n")
        await pane.expect(r"(y\r\n){100}")
        started_at = time.monotonic()
        await asyncio.wait_for(pane.proc.terminate(timeout=1.5), WAIT)
        assert time.monotonic() - started_at < 3 * SCALE
        assert gone(pane.proc.pid)
        assert procfs.session_members(pane.proc.pid) == []

    run_async(body)


def test_terminate_survives_a_failing_output_callback(runtime_dir: Path) -> None:
    errors: list[dict[str, object]] = []

    async def body() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: errors.append(context))
        proc = spawn_shell(runtime_dir)
        seen = asyncio.Event()

        def on_output(_data: bytes) -> None:
            seen.set()
            raise RuntimeError("consumer bug")

        proc.attach(loop, on_output, lambda _code: None)
        await asyncio.wait_for(seen.wait(), WAIT)
        proc.write(b"echo one; echo two\n")
        await proc.terminate(timeout=1.5)
        assert gone(proc.pid)
        assert proc.master_fd == -1

    run_async(body)
    assert errors  # reported to the loop, not swallowed
    assert all(isinstance(e.get("exception"), RuntimeError) for e in errors)


# -- scale -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_200_idle_shells_use_almost_no_cpu(runtime_dir: Path) -> None:
    """The simulator's loop thread hosting 200 idle panes must stay near 0% CPU.

    Measured over 5 s of idleness, so this one sleeps on purpose: the quantity
    under test is what happens while nothing happens.

    Slow because it starts (and ends) 200 real shells and then watches them idle for 5 s.
    """
    count = 200
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    panes: list[Pane] = []
    try:

        async def start_all() -> list[Pane]:
            procs = [spawn_shell(runtime_dir) for _ in range(count)]
            started_panes = [Pane(proc, asyncio.get_running_loop()) for proc in procs]
            await asyncio.gather(*(p.expect(r"\$ ", within=60) for p in started_panes))
            return started_panes

        panes = asyncio.run_coroutine_threadsafe(start_all(), loop).result(90)
        cpu_before, wall_before = time.process_time(), time.monotonic()
        threading.Event().wait(5.0)
        cpu = time.process_time() - cpu_before
        wall = time.monotonic() - wall_before
        print(f"\n200 idle panes: {cpu:.4f} s CPU over {wall:.2f} s wall ({100 * cpu / wall:.2f}%)")
        assert cpu < 0.25
    finally:

        async def stop_all() -> None:
            await asyncio.gather(*(p.proc.terminate() for p in panes))

        stop_started = time.monotonic()
        asyncio.run_coroutine_threadsafe(stop_all(), loop).result(120)
        print(f"terminated {len(panes)} panes in {time.monotonic() - stop_started:.2f} s")
        loop.call_soon_threadsafe(loop.stop)
        thread.join(WAIT)
        loop.close()
    assert all(gone(p.proc.pid) for p in panes)


# -- the child's signal state --------------------------------------------------------------------


def _signal_masks(pid: int) -> dict[str, int]:
    """SigBlk/SigIgn of ``pid`` from /proc (hex bit sets, bit n-1 = signal n)."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("SigBlk", "SigIgn"):
            fields[key] = int(value.strip(), 16)
    return fields


def _spawn_cat(runtime_dir: Path) -> PtyProcess:
    """A non-shell child: it keeps the dispositions and mask it was started with."""
    return PtyProcess.spawn(
        ["cat"], cwd=str(runtime_dir), env={"PATH": os.defpath}, cols=80, rows=24
    )


def test_child_starts_with_an_empty_signal_mask_whatever_the_spawning_thread_blocks(
    runtime_dir: Path,
) -> None:
    """Herdr's pty library clears the mask: Ctrl-C must reach a pane started from any thread."""
    spawned: list[PtyProcess] = []
    failure: list[BaseException] = []

    def spawn_with_sigint_blocked() -> None:
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            spawned.append(_spawn_cat(runtime_dir))
        except BaseException as exc:  # reported by the main thread
            failure.append(exc)

    thread = threading.Thread(target=spawn_with_sigint_blocked)
    thread.start()
    thread.join(WAIT)
    assert not failure, failure
    proc = spawned[0]
    try:
        assert _signal_masks(proc.pid)["SigBlk"] == 0
    finally:
        proc.terminate_sync(timeout=1.0)


def test_child_starts_with_default_dispositions_even_if_the_simulator_ignores_signals(
    runtime_dir: Path,
) -> None:
    ignored = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGPIPE)
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in ignored}
    try:
        proc = _spawn_cat(runtime_dir)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    try:
        assert _signal_masks(proc.pid)["SigIgn"] == 0
    finally:
        proc.terminate_sync(timeout=1.0)


def test_ctrl_c_interrupts_a_foreground_program_of_a_pane_spawned_with_sigint_ignored(
    runtime_dir: Path,
) -> None:
    async def body() -> None:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            pane = await started(runtime_dir)
        finally:
            signal.signal(signal.SIGINT, previous)
        try:
            await pane.run('sleep 30; echo "slept=$((6*7))"', r"sleep 30")
            await wait_until(
                lambda: any(p.name == "sleep" for p in procfs.descendants(pane.proc.pid))
            )
            pane.proc.write(b"\x03")
            await pane.run('echo "back=$((6*8))"', r"back=48")
            assert b"slept=42" not in pane.output
        finally:
            await pane.proc.terminate(timeout=1.5)

    run_async(body)


def _cmdline(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]


def test_program_is_found_from_the_pane_cwd_and_keeps_its_argv0(runtime_dir: Path) -> None:
    """As ``subprocess`` (and Herdr) start it: lookup after the chdir, ``argv[0]`` as given."""
    tool = runtime_dir / "tools" / "my-cat"
    tool.parent.mkdir()
    tool.write_bytes(Path(shutil.which("cat") or "/bin/cat").read_bytes())
    tool.chmod(0o755)
    spawned = [
        (["./tools/my-cat"], {"PATH": os.defpath}),
        (["my-cat"], {"PATH": f"tools{os.pathsep}{os.defpath}"}),  # a relative PATH entry
        (["cat", "-u"], {"PATH": os.defpath}),
    ]
    for argv, env in spawned:
        proc = PtyProcess.spawn(argv, cwd=str(runtime_dir), env=env, cols=80, rows=24)
        try:
            # the spawn returns once the exec has begun; the new image's arguments show in
            # /proc a moment later (an empty cmdline until then)
            cmdline = poll_until(
                functools.partial(_cmdline, proc.pid),
                WAIT,
                0.005,
                f"{argv} in {proc.pid}'s cmdline",
            )
            assert [arg.decode() for arg in cmdline] == argv
        finally:
            proc.terminate_sync(timeout=1.0)


def test_child_of_a_non_main_thread_gets_default_dispositions(runtime_dir: Path) -> None:
    """The simulator spawns from its loop thread: the reset must work there too."""
    spawned: list[PtyProcess] = []
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        thread = threading.Thread(target=lambda: spawned.append(_spawn_cat(runtime_dir)))
        thread.start()
        thread.join(WAIT)
    finally:
        signal.signal(signal.SIGINT, previous)
    proc = spawned[0]
    try:
        assert _signal_masks(proc.pid) == {"SigBlk": 0, "SigIgn": 0}
    finally:
        proc.terminate_sync(timeout=1.0)


def test_a_pane_starts_without_forking_the_simulator(
    runtime_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fork copies the page tables of the whole simulator while holding the GIL (100 panes
    starting at once held its loop for seconds): panes start through ``posix_spawn``."""

    def no_fork(*_args: object) -> int:
        raise AssertionError("the simulator's process was forked")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setattr(os, "forkpty", no_fork)
    proc = _spawn_cat(runtime_dir)
    try:
        info = procfs.proc_info(proc.pid)
        assert info is not None and info.sid == proc.pid  # a session leader, as before
    finally:
        proc.terminate_sync(timeout=1.0)


def test_a_cwd_that_vanishes_before_the_spawn_is_reported_by_name(runtime_dir: Path) -> None:
    """The spawn's own failures come back as the errno of the step, naming what failed."""
    with pytest.raises(FileNotFoundError) as missing_cwd:
        spawn_on_pty(
            "/bin/true", ["true"], cwd=str(runtime_dir / "gone"), env={}, slave="/dev/null"
        )
    assert missing_cwd.value.filename == str(runtime_dir / "gone")
    with pytest.raises(FileNotFoundError) as missing_program:
        spawn_on_pty(
            str(runtime_dir / "gone-program"),
            ["gone-program"],
            cwd=str(runtime_dir),
            env={},
            slave="/dev/null",
        )
    assert missing_program.value.filename == "gone-program"
