"""``herdr_sim.host.procfs`` against real processes, plus a fake /proc for vanishing entries."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
import typing as t
from collections.abc import Iterator
from pathlib import Path

import pytest

from herdr_sim.host import procfs
from orchestrator.client.poll import Deadline
from tests.waits import wait_until


@pytest.fixture
def sleeper_session() -> Iterator[subprocess.Popen[bytes]]:
    """A new session: ``sh`` with two background ``sleep`` children."""
    proc = subprocess.Popen(
        ["sh", "-c", "sleep 100 & sleep 100 & echo started; wait"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"started\n"
    yield proc
    _end(proc)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Kill the leaves first so their parents reap them: no orphan, no zombie. A child seen
    between fork and exec is not named ``sleep`` yet: kill again until the parent is done
    (bounded)."""
    end = Deadline(10)
    while True:
        for info in procfs.descendants(proc.pid):
            if info.name == "sleep":
                os.kill(info.pid, 9)
        try:
            proc.wait(0.1)
        except subprocess.TimeoutExpired:
            if end.expired():
                raise
            continue
        if proc.stdout is not None:
            proc.stdout.close()
        return
    if proc.stdout is not None:
        proc.stdout.close()


def _wait_children(pid: int, count: int) -> list[procfs.ProcInfo]:
    """Poll /proc (bounded): children appear at fork, their name only after exec."""
    end = Deadline(10)
    while True:
        found = [p for p in procfs.descendants(pid) if p.name == "sleep"]
        if len(found) == count or end.expired():
            return found
        time.sleep(0.01)


def test_proc_info_of_this_process() -> None:
    info = procfs.proc_info(os.getpid())
    assert info is not None
    assert info.pid == os.getpid()
    assert info.ppid == os.getppid()
    assert info.pgid == os.getpgrp()
    assert info.sid == os.getsid(0)
    assert info.cwd == str(Path.cwd())
    assert info.state in {"R", "S"}


def test_proc_info_reads_a_processs_argv_as_it_was_given(tmp_path: Path) -> None:
    # a child of known argv: this process's own may be retitled (pytest-xdist sets its
    # workers' titles through setproctitle, which rewrites /proc/self/cmdline); it says
    # "ready" once it runs, so it has exec'd (before that /proc shows this process's argv)
    code = "import sys; print('ready', flush=True); sys.stdin.read()"
    argv = (sys.executable, "-c", code, "an arg with spaces", "")
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path)
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline() == b"ready\n"
        info = procfs.proc_info(child.pid)
        assert info is not None
        assert info.argv == argv
        assert info.cwd == str(tmp_path)
        assert info.ppid == os.getpid()
    finally:
        child.stdin.close()
        child.wait(timeout=30)
        child.stdout.close()


def test_missing_process_is_none() -> None:
    assert procfs.proc_info(0) is None
    assert procfs.proc_info(-1) is None
    assert procfs.proc_info(2**22 + 12345) is None  # above any pid_max
    assert procfs.cwd_of(2**22 + 12345) is None
    assert not procfs.is_zombie(2**22 + 12345)


def test_comm_with_spaces_and_parentheses_is_parsed(tmp_path: Path) -> None:
    # comm is the basename the program was exec'd by, so a symlink names it.
    odd = tmp_path / "a) b (c"
    odd.symlink_to("/bin/sleep")
    proc = subprocess.Popen([str(odd), "100"], cwd=tmp_path)
    try:
        # Bounded poll: comm changes at exec, the new command line a moment later.
        end = Deadline(10)
        info = procfs.proc_info(proc.pid)
        while info is None or info.name != "a) b (c" or info.argv is None:
            assert not end.expired()
            time.sleep(0.01)
            info = procfs.proc_info(proc.pid)
        assert info is not None
        assert info.name == "a) b (c"
        assert info.ppid == os.getpid()
        assert info.state in {"R", "S"}
        assert info.argv == (str(odd), "100")
        assert info.cwd == str(tmp_path)
    finally:
        proc.kill()
        proc.wait(10)


class StatCase(t.NamedTuple):
    test_id: str
    line: bytes
    expected: tuple[str, str, int, int, int, int] | None


STAT_CASES = [
    StatCase("plain", b"42 (bash) S 1 42 42 34816 50 4194560 0", ("bash", "S", 1, 42, 42, 50)),
    StatCase(
        "parens-and-spaces",
        b"42 (x) (y z)) R 7 8 9 0 -1 0",
        ("x) (y z)", "R", 7, 8, 9, -1),
    ),
    StatCase("empty-comm", b"42 () Z 1 2 3 0 -1", ("", "Z", 1, 2, 3, -1)),
    StatCase("truncated", b"42 (bash) S 1", None),
    StatCase("garbage", b"not a stat line", None),
    StatCase("non-numeric", b"42 (a) S x y z 0 0", None),
]


@pytest.mark.parametrize(list(StatCase._fields), STAT_CASES, ids=[c.test_id for c in STAT_CASES])
def test_parse_stat(
    test_id: str, line: bytes, expected: tuple[str, str, int, int, int, int] | None
) -> None:
    stat = procfs._parse_stat(42, line)
    if expected is None:
        assert stat is None
        return
    assert stat is not None
    assert (stat.name, stat.state, stat.ppid, stat.pgid, stat.sid, stat.tpgid) == expected


def test_session_members_and_descendants(sleeper_session: subprocess.Popen[bytes]) -> None:
    sid = sleeper_session.pid
    sleeps = _wait_children(sid, 2)
    assert len(sleeps) == 2
    members = procfs.session_members(sid)
    assert [p.pid for p in members] == sorted(p.pid for p in members)
    assert {p.pid for p in members} == {sid} | {p.pid for p in sleeps}
    assert all(p.sid == sid for p in members)
    assert sid not in {p.pid for p in procfs.descendants(sid)}
    assert procfs.session_members(os.getsid(0)) != []
    assert sid not in {p.pid for p in procfs.session_members(os.getsid(0))}


def test_all_processes_sees_this_process_and_children(
    sleeper_session: subprocess.Popen[bytes],
) -> None:
    pids = {p.pid for p in procfs.all_processes()}
    assert {os.getpid(), sleeper_session.pid} <= pids


def test_session_tree_follows_children_that_left_the_session(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        ["sh", "-c", "setsid -w sleep 100 & echo started; wait"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"started\n"
        escaped = _wait_children(proc.pid, 1)
        assert len(escaped) == 1
        assert escaped[0].sid != proc.pid
        assert escaped[0].pid not in {p.pid for p in procfs.session_members(proc.pid)}
        assert escaped[0].pid in {p.pid for p in procfs.session_tree(proc.pid)}
        # A root outside any session is followed too.
        tree = procfs.session_tree(-5, roots=[escaped[0].ppid])
        assert {p.pid for p in tree} == {escaped[0].ppid, escaped[0].pid}
    finally:
        _end(proc)


def test_foreground_processes_lists_live_group_members() -> None:
    proc = subprocess.Popen(["sleep", "100"], process_group=0)
    try:
        members = procfs.foreground_processes(proc.pid)
        assert [p.pid for p in members] == [proc.pid]
    finally:
        proc.kill()
        proc.wait(10)
    assert procfs.foreground_processes(proc.pid) == []


def test_zombie_until_reaped(tmp_path: Path) -> None:
    proc = subprocess.Popen(["true"], cwd=tmp_path)
    pidfd = os.pidfd_open(proc.pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        assert poller.poll(10_000)  # exited, not yet reaped
        assert procfs.is_zombie(proc.pid)
        info = procfs.proc_info(proc.pid)
        assert info is not None
        assert info.state == "Z"
        assert info.argv is None  # a zombie has no command line left
        assert info.cwd is None
    finally:
        os.close(pidfd)
        proc.wait(10)
    assert not procfs.is_zombie(proc.pid)
    assert procfs.proc_info(proc.pid) is None


def test_cwd_of_a_child(tmp_path: Path) -> None:
    proc = subprocess.Popen(["sleep", "100"], cwd=tmp_path)
    try:
        assert procfs.cwd_of(proc.pid) == str(tmp_path)
    finally:
        proc.kill()
        proc.wait(10)


def test_entries_that_vanish_mid_scan_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fake /proc: the only way to freeze a process between listing and reading.

    ``10`` is complete, ``11`` lost its stat (exited after the listing), ``12``
    has a stat but nothing else (cmdline and cwd gone), ``self`` is not a pid.
    """
    fake = tmp_path / "proc"
    (fake / "10").mkdir(parents=True)
    (fake / "10" / "stat").write_bytes(b"10 (sh) S 1 10 10 0 -1 0")
    (fake / "10" / "cmdline").write_bytes(b"sh\0-c\0x\0")
    (fake / "10" / "cwd").symlink_to(tmp_path)
    (fake / "11").mkdir()
    (fake / "12").mkdir()
    (fake / "12" / "stat").write_bytes(b"12 (gone) S 10 10 10 0 -1 0")
    (fake / "self").mkdir()
    monkeypatch.setattr(procfs, "_PROC", fake)

    assert procfs.all_processes() == [
        procfs.ProcInfo(10, 1, 10, 10, -1, "sh", ("sh", "-c", "x"), str(tmp_path), "S"),
        procfs.ProcInfo(12, 10, 10, 10, -1, "gone", None, None, "S"),
    ]
    assert [p.pid for p in procfs.descendants(10)] == [12]
    assert [p.pid for p in procfs.session_members(10)] == [10, 12]
    assert procfs.proc_info(11) is None


def test_missing_proc_directory_yields_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/proc`` unmounted (or a non-Linux host): empty results, no exception."""
    monkeypatch.setattr(procfs, "_PROC", tmp_path / "absent")
    assert procfs.all_processes() == []
    assert procfs.session_tree(1) == []


def test_descendants_walk_the_kernels_children_lists_not_every_process(
    sleeper_session: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: agent detection probes a new pane's tree on its first output; a scan of
    every ``stat`` on the machine made that cost grow with the machine's process count. The
    tree is now walked through ``/proc/PID/task/TID/children``: the same answer as the full
    scan, with no full scan."""
    _wait_children(sleeper_session.pid, 2)
    scanned = procfs.descendants(sleeper_session.pid)
    monkeypatch.setattr(procfs, "_stats", lambda: pytest.fail("scanned every process"))
    walked = procfs.descendants(sleeper_session.pid)
    # the same processes (a state letter can change between two reads: a sleep just
    # started is R, then S)
    assert [(p.pid, p.ppid, p.name) for p in walked] == [(p.pid, p.ppid, p.name) for p in scanned]
    assert [p.name for p in scanned] == ["sleep", "sleep"]


def test_descendants_drop_a_listed_child_whose_pid_was_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child listed, then gone and its pid taken by an unrelated process before it was
    read: its ``stat`` names another parent, so it is not counted."""
    fake = tmp_path / "proc"
    for pid, ppid, children in ((10, 1, b"11 12 "), (11, 10, b""), (12, 77, b"")):
        (fake / str(pid) / "task" / str(pid)).mkdir(parents=True)
        (fake / str(pid) / "stat").write_bytes(f"{pid} (sh) S {ppid} 10 10 0 -1 0".encode())
        (fake / str(pid) / "task" / str(pid) / "children").write_bytes(children)
    monkeypatch.setattr(procfs, "_PROC", fake)
    assert [p.pid for p in procfs.descendants(10)] == [11]


def test_marked_pids_since_skips_processes_older_than_the_mark() -> None:
    """A simulator's stop looks for its mark in the processes started since its token was
    made, not in every environment on the machine (most of a stop's time on a busy one)."""
    entry = f"HERDR_SIM_TEST_MARK=since-{os.getpid()}:1"
    name, value = entry.split("=", 1)
    env = {**os.environ, name: value}
    older = subprocess.Popen(["sleep", "100"], env=env)
    try:
        _wait_exec(older.pid)
        # one clock tick later, the next process is younger
        wait_until(
            lambda: procfs.boot_ticks() > (procfs.start_ticks(older.pid) or 0),
            10,
            0.01,
            "a clock tick after the older process started",
        )
        since = procfs.boot_ticks()
        newer = subprocess.Popen(["sleep", "100"], env=env)
        try:
            _wait_exec(newer.pid)
            assert procfs.marked_pids(entry, exact=True) == sorted([older.pid, newer.pid])
            assert procfs.marked_pids(entry, exact=True, since=since) == [newer.pid]
        finally:
            newer.kill()
            newer.wait()
    finally:
        older.kill()
        older.wait()


def _wait_exec(pid: int) -> None:
    """Until ``pid`` has exec'd ``sleep`` (its environment is the new one then), bounded."""

    def exec_d() -> bool:
        info = procfs.proc_info(pid)
        return info is not None and info.name == "sleep"

    wait_until(exec_d, 10, 0.01, f"{pid} to exec sleep")


def test_marked_pids_under_a_process_walk_its_tree_and_find_an_escaped_daemon(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A simulator's stop, as its panes' child subreaper, walks its own tree for its mark:
    a daemon that left its session and lost its parent came back below it, so the walk finds
    what the scan of every process finds, and a marked process elsewhere is not below it."""
    from herdr_sim.host.pty import enable_subreaper

    assert enable_subreaper()
    entry = f"HERDR_SIM_TEST_MARK=under-{os.getpid()}:1"
    name, value = entry.split("=", 1)
    env = {**os.environ, name: value}
    # the daemon's parent exits at once: the daemon comes back to this process
    subprocess.run(["setsid", "sh", "-c", "sleep 101 &"], env=env, check=True, timeout=10)
    (daemon,) = wait_until(
        lambda: procfs.marked_pids(entry, exact=True) or None, 10, what="the daemon to start"
    )
    try:
        assert procfs.proc_info(daemon).ppid == os.getpid()  # type: ignore[union-attr]
        monkeypatch.setattr(procfs, "_stats", lambda: pytest.fail("scanned every process"))
        assert procfs.marked_pids(entry, exact=True, under=os.getpid()) == [daemon]
        other = subprocess.Popen(["sleep", "100"])
        try:
            assert procfs.marked_pids(entry, exact=True, under=other.pid) == []
        finally:
            other.kill()
            other.wait()
    finally:
        os.kill(daemon, 9)
        wait_until(lambda: os.waitpid(daemon, os.WNOHANG)[0] == daemon, 10, 0.01, "the reap")
