"""The concurrency cap: FIFO queue, bounded waits, cross-process locks, dead-holder recovery."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from orchestrator.agent_tools.records import TaskStore
from orchestrator.agent_tools.slots import QueueTimeout, Slot, Slots
from tests.waits import SCALE, wait_until

ROOT = Path(__file__).resolve().parents[3]


@contextlib.contextmanager
def _holder(directory: Path, cap: int) -> Iterator[subprocess.Popen[str]]:
    """A process that takes a slot, says so, then holds it until stdin closes (or it dies)."""
    code = (
        "import sys\n"
        "from orchestrator.agent_tools.slots import Slots\n"
        f"slot = Slots({str(directory)!r}, {cap}).acquire('held', timeout_ms=10000)\n"
        "print('acquired', flush=True)\n"
        "sys.stdin.read()\n"
        "slot.release()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(10)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _wait_acquired(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()  # bounded: the child's own acquire times out in 10 s
    assert line.strip() == "acquired", proc.stderr.read() if proc.stderr else ""


def _arrived(acquired: list[int], slots: Slots | None, n: int) -> bool:
    """Whether ``n`` acquirers have a slot (or, with ``slots``, a slot or a queue place)."""
    return len(acquired) + (slots.waiting() if slots else 0) == n


def test_five_acquirers_cap_two_run_two_queue_three_in_order(tmp_path: Path) -> None:
    slots = Slots(tmp_path / "slots", 2, poll_s=0.005)
    acquired: list[int] = []
    releases = [threading.Event() for _ in range(5)]
    peak = [0]
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            slot = slots.acquire(f"task-{i}", timeout_ms=10_000)
            with lock:
                acquired.append(i)
                peak[0] = max(peak[0], slots.running())
            assert releases[i].wait(10)
            slot.release()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads: list[threading.Thread] = []
    for i in range(5):
        thread = threading.Thread(target=worker, args=(i,))
        thread.start()
        threads.append(thread)
        # Arrival order is the test's order: each one is in (running or queued) before the next.
        assert wait_until(partial(_arrived, acquired, slots, i + 1), timeout=5)
    # A queued acquirer counts as arrived before its poll finds the free slot: acquirer 1 may
    # still be queued (first in line) when the others arrive, so wait for it to get in.
    assert wait_until(lambda: acquired == [0, 1], timeout=5), acquired
    assert slots.waiting() == 3 and slots.running() == 2
    for i in range(5):
        releases[i].set()
        if i + 2 < 5:
            assert wait_until(partial(_arrived, acquired, None, i + 3), timeout=5)
    for thread in threads:
        thread.join(10)
    assert not errors
    assert acquired == [0, 1, 2, 3, 4]
    assert peak[0] <= 2
    assert slots.running() == 0 and slots.waiting() == 0


def test_timeout_refusal_names_the_wait_and_the_load(tmp_path: Path) -> None:
    slots = Slots(tmp_path / "slots", 1, poll_s=0.005)
    with slots.acquire("a", timeout_ms=1000), pytest.raises(QueueTimeout) as info:
        slots.acquire("b", timeout_ms=60)
    error = info.value
    assert error.code == "QUEUE_TIMEOUT" and error.running == 1 and error.cap == 1
    assert 60 <= error.waited_ms < 2000
    assert f"after waiting {error.waited_ms} ms (queueTimeoutMs): 1 of 1 running" in str(error)


def test_zero_timeout_tries_once(tmp_path: Path) -> None:
    slots = Slots(tmp_path / "slots", 1)
    first = slots.acquire("a", timeout_ms=0)
    with pytest.raises(QueueTimeout):
        slots.acquire("b", timeout_ms=0)
    first.release()
    slots.acquire("b", timeout_ms=0).release()


def test_holders_report_task_and_pid(tmp_path: Path) -> None:
    slots = Slots(tmp_path / "slots", 2)
    with slots.acquire("t-1", timeout_ms=100) as slot:
        assert isinstance(slot, Slot) and slot.held
        [holder] = slots.holders()
        assert holder["taskId"] == "t-1" and holder["state"] == "held" and holder["pid"] > 0
    assert slots.holders() == []


def test_another_process_holding_the_slot_blocks_us(tmp_path: Path) -> None:
    with _holder(tmp_path / "slots", 1) as proc:
        _wait_acquired(proc)
        slots = Slots(tmp_path / "slots", 1, poll_s=0.005)
        with pytest.raises(QueueTimeout, match="1 of 1 running"):
            slots.acquire("mine", timeout_ms=50)
        assert proc.stdin is not None
        proc.stdin.close()  # the holder releases
        slots.acquire("mine", timeout_ms=10_000).release()


def test_slot_of_a_killed_holder_is_recovered(tmp_path: Path) -> None:
    with _holder(tmp_path / "slots", 1) as proc:
        _wait_acquired(proc)
        proc.kill()
        proc.wait(10)
    slot = Slots(tmp_path / "slots", 1).acquire("mine", timeout_ms=0)
    assert slot.held
    slot.release()


def test_a_killed_waiter_does_not_block_the_queue(tmp_path: Path) -> None:
    slots = Slots(tmp_path / "slots", 1, poll_s=0.005)
    held = slots.acquire("a", timeout_ms=0)
    with _holder(tmp_path / "slots", 1) as waiter:  # queues behind "a"
        assert wait_until(lambda: slots.waiting() == 1, timeout=10)
        waiter.kill()
        waiter.wait(10)
        held.release()
        slots.acquire("b", timeout_ms=2_000).release()  # not stuck behind the dead ticket


def test_detached_slot_stays_taken_while_its_task_is_active(tmp_path: Path) -> None:
    store = TaskStore(tmp_path / "state")
    record, _ = store.create(kind="pi", cwd="/r")
    slots = Slots(tmp_path / "slots", 1, task_active=store.is_active, poll_s=0.005)
    slots.acquire(record.task_id, timeout_ms=0).detach()  # wait:false returned
    store.update(record.task_id, status="running")
    with pytest.raises(QueueTimeout):
        slots.acquire("next", timeout_ms=20)
    assert slots.holders()[0]["state"] == "detached"
    store.update(record.task_id, status="completed")  # the task ended: the slot frees itself
    slots.acquire("next", timeout_ms=0).release()


def test_release_task_frees_a_detached_slot(tmp_path: Path) -> None:
    slots = Slots(tmp_path / "slots", 1, task_active=lambda _task: True)
    slots.acquire("t-a", timeout_ms=0).detach()
    assert slots.running() == 1
    assert slots.release_task("t-a") is True
    assert slots.running() == 0
    assert slots.release_task("t-a") is False


def test_starting_task_of_a_dead_process_frees_its_detached_slot(tmp_path: Path) -> None:
    store = TaskStore(tmp_path / "state")
    record, _ = store.create(kind="pi", cwd="/r")
    store.update(record.task_id, owner_pid=2**22 + 12345)  # no such process
    slots = Slots(tmp_path / "slots", 1, task_active=store.is_active)
    slots.acquire(record.task_id, timeout_ms=0).detach()
    slots.acquire("next", timeout_ms=0).release()


def test_waiters_arriving_together_with_free_slots_for_all_do_not_wait_a_poll(
    tmp_path: Path,
) -> None:
    """Issue 17: only the oldest ticket could take a slot, so twenty spawns arriving at once
    went in one poll apart even with twenty free slots. A waiter now takes a free slot when
    enough are free for every waiter ahead of it too: with a 30 s poll, five waiters and a
    cap of ten all get in at once (before, every waiter but the first slept a poll)."""
    slots = Slots(tmp_path / "slots", 10, poll_s=30)
    start = threading.Barrier(5)
    taken: list[Slot] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        start.wait()
        slot = slots.acquire(f"task-{i}", timeout_ms=60_000)
        with lock:
            taken.append(slot)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10 * SCALE)
    assert len(taken) == 5, "a waiter slept a poll although a slot was free for it"
    assert sorted(slot.index for slot in taken) == [0, 1, 2, 3, 4]
    for slot in taken:
        slot.release()


def test_a_later_waiter_never_takes_the_slot_an_earlier_one_waits_for(tmp_path: Path) -> None:
    """First come, first served still: one free slot and a waiter ahead means the later
    waiter waits (here until its bounded wait runs out)."""
    slots = Slots(tmp_path / "slots", 2, poll_s=0.01)
    held = slots.acquire("held", timeout_ms=1000)
    queue = slots.queue_dir
    queue.mkdir(exist_ok=True)
    ahead = queue / "00000000000000000001-00000001-000000"  # older than any real ticket
    fd = os.open(ahead, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a live waiter's ticket
    try:
        with pytest.raises(QueueTimeout):
            slots.acquire("later", timeout_ms=100)
    finally:
        os.close(fd)
    later = slots.acquire("later", timeout_ms=1000)  # the earlier waiter left: its turn now
    later.release()
    held.release()


def test_with_nobody_queued_a_free_slot_is_taken_without_a_ticket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty spawns at once each made, scanned and removed a queue ticket (~70 ms apiece on
    2 cores) although a slot was free for every one: a caller that finds the queue empty now
    takes a free slot at once. With a waiter queued it still queues behind it (the test
    above)."""
    slots = Slots(tmp_path / "slots", 3, poll_s=30)
    opened: list[Path] = []
    real_open = Slots._open

    def spy(self: Slots, path: Path) -> int:
        opened.append(path)
        return real_open(self, path)

    monkeypatch.setattr(Slots, "_open", spy)
    taken = [slots.acquire(f"task-{i}", timeout_ms=0) for i in range(3)]
    assert sorted(slot.index for slot in taken) == [0, 1, 2]
    assert not [path for path in opened if path.parent == slots.queue_dir]
    with pytest.raises(QueueTimeout):  # full: the queued path, bounded as before
        slots.acquire("fourth", timeout_ms=0)
    for slot in taken:
        slot.release()
