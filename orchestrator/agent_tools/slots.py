"""The concurrency cap: at most ``maxConcurrent`` tasks run, the rest queue in arrival order.

Why files and ``flock``: spawns come from several processes (an MCP server, one-shot CLI calls)
that share one state directory, and a process that dies must not keep its slot. A slot is a
file ``slot-<n>`` locked with ``flock``; the kernel drops the lock when its holder dies, so a
crashed holder frees its slot without any cleanup code.

A slot can also outlive its process: ``spawn`` with ``wait: false`` returns while the agent
works. :meth:`Slot.detach` then leaves the task id in the slot file and closes the lock; the
slot stays taken while ``task_active(task_id)`` says so (normally
:func:`~orchestrator.agent_tools.completion.holds_slot`: the record is active and Herdr shows
its agent alive and not finished — a record alone would keep the slot of a task nobody
harvests forever). When the task ends, :meth:`Slots.release_task` frees it, and a slot whose
task is no longer active is reclaimed by the next acquirer anyway.

Order: each waiter holds a locked ticket file in ``queue/``, named by arrival time; a waiter
takes a free slot only when enough are free for every live ticket ahead of it too (the oldest
needs one, the next two, …), so waiters are served first come, first served — no later waiter
takes a slot an earlier one is waiting for — and a dead waiter's ticket (its lock gone) is
removed by whoever finds it. A caller that finds the queue empty takes a free slot at once,
without a ticket (nobody is ahead of it to be served first). Waiting polls every
``poll_s`` (25 ms by default), bounded by ``queueTimeoutMs``. (Before issue 17 only the
oldest ticket could take a slot: twenty spawns arriving at once with twenty free slots went
in one poll apart, the last ~0.5 s late.)
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from orchestrator.agent_tools.records import ensure_private_dir, now_iso
from orchestrator.client.file_trust import locks

_counter = itertools.count()


class QueueTimeout(TimeoutError):
    """No slot freed within ``queueTimeoutMs``; the message names the wait and the load."""

    code = "QUEUE_TIMEOUT"

    def __init__(self, waited_ms: int, running: int, cap: int, ahead: int) -> None:
        self.waited_ms = waited_ms
        self.running = running
        self.cap = cap
        self.ahead = ahead
        queue = f", {ahead} queued ahead" if ahead else ""
        super().__init__(
            f"no agent slot free after waiting {waited_ms} ms (queueTimeoutMs): "
            f"{running} of {cap} running{queue}; retry later or raise maxConcurrent"
        )


def _read_json(fd: int) -> dict[str, Any]:
    os.lseek(fd, 0, os.SEEK_SET)
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    if not data.strip():
        return {}
    try:
        value = json.loads(data)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _write_json(fd: int, value: dict[str, Any]) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    if value:
        os.write(fd, json.dumps(value).encode())
    os.fsync(fd)


@dataclass
class Slot:
    """A held slot: release it (or use ``with``) when the task ends, or :meth:`detach` it."""

    slots: Slots
    index: int
    task_id: str | None
    waited_ms: int
    _fd: int | None

    @property
    def held(self) -> bool:
        """Whether this process still holds the slot's lock."""
        return self._fd is not None

    def release(self) -> None:
        """Free the slot (idempotent)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            _write_json(fd, {})
        finally:
            os.close(fd)

    def detach(self) -> None:
        """Keep the slot for ``task_id`` after this process lets go (``wait: false``)."""
        if self.task_id is None:
            raise ValueError("only a slot acquired for a task id can be detached")
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


class Slots:
    """The cap of one state directory (``<stateDir>/slots``)."""

    def __init__(
        self,
        directory: Path | str,
        cap: int,
        *,
        task_active: Callable[[str], bool] | None = None,
        poll_s: float = 0.025,
    ) -> None:
        if cap < 1:
            raise ValueError("the concurrency cap must be at least 1")
        self.directory = Path(directory)
        self.queue_dir = self.directory / "queue"
        self.cap = cap
        self.task_active = task_active or (lambda _task_id: False)
        self.poll_s = poll_s

    def _ready(self) -> None:
        ensure_private_dir(self.directory)
        ensure_private_dir(self.queue_dir)

    def _slot_path(self, index: int) -> Path:
        return self.directory / f"slot-{index}"

    def _open(self, path: Path) -> int:
        return locks.open_lock_file(path)

    # -- inspection ---------------------------------------------------------------------------

    def _slot_state(self, index: int) -> tuple[str, dict[str, Any]]:
        """``("held"|"detached"|"free", content)`` of one slot, without keeping it."""
        fd = self._open(self._slot_path(index))
        try:
            if not locks.try_lock(fd):
                return "held", _read_json(fd)
            content = _read_json(fd)
            task_id = content.get("taskId")
            if isinstance(task_id, str) and self.task_active(task_id):
                return "detached", content
            return "free", content
        finally:
            os.close(fd)

    def holders(self) -> list[dict[str, Any]]:
        """The occupied slots: ``{slot, state, taskId, pid, since}`` each."""
        self._ready()
        out: list[dict[str, Any]] = []
        for index in range(self.cap):
            state, content = self._slot_state(index)
            if state != "free":
                out.append({"slot": index, "state": state, **content})
        return out

    def running(self) -> int:
        """How many slots are occupied now."""
        return len(self.holders())

    def waiting(self) -> int:
        """How many live waiters are queued now."""
        self._ready()
        return sum(1 for path in self._tickets() if self._ticket_alive(path))

    # -- the queue ----------------------------------------------------------------------------

    def _tickets(self) -> list[Path]:
        """The queue's tickets, oldest first (hidden ones are still being made)."""
        return sorted(p for p in self.queue_dir.iterdir() if not p.name.startswith("."))

    def _ticket_alive(self, path: Path) -> bool:
        """Whether the ticket's waiter still holds it; a dead waiter's ticket is removed."""
        try:
            fd = locks.open_lock_file(path, create=False)
        except FileNotFoundError:
            return False
        try:
            if locks.try_lock(fd):
                path.unlink(missing_ok=True)
                return False
            return True
        finally:
            os.close(fd)

    def _is_head(self, mine: Path) -> tuple[bool, int]:
        """Whether ``mine`` is the oldest live ticket, and how many live ones are ahead."""
        ahead = 0
        for path in self._tickets():
            if path.name >= mine.name:
                break
            if self._ticket_alive(path):
                ahead += 1
        return ahead == 0, ahead

    def _free_at_least(self, count: int) -> bool:
        """Whether at least ``count`` slots are free now (none is kept)."""
        free = 0
        for index in range(self.cap):
            if self._slot_state(index)[0] == "free":
                free += 1
                if free >= count:
                    return True
        return False

    def _take_free(self, task_id: str | None, waited_ms: int) -> Slot | None:
        for index in range(self.cap):
            fd = self._open(self._slot_path(index))
            if not locks.try_lock(fd):
                os.close(fd)
                continue
            content = _read_json(fd)
            previous = content.get("taskId")
            if isinstance(previous, str) and self.task_active(previous):
                os.close(fd)  # detached: its task still runs
                continue
            _write_json(fd, {"taskId": task_id, "pid": os.getpid(), "since": now_iso()})
            return Slot(self, index, task_id, waited_ms, fd)
        return None

    def acquire(self, task_id: str | None = None, *, timeout_ms: int) -> Slot:
        """Wait up to ``timeout_ms`` for a slot, first come first served.

        Raises :class:`QueueTimeout` naming how long it waited and how many were running.
        """
        self._ready()
        if not self._tickets():
            # nobody is queued: a free slot is this caller's without a ticket (twenty spawns
            # at once each made, scanned and removed a ticket: ~70 ms apiece on 2 cores)
            slot = self._take_free(task_id, 0)
            if slot is not None:
                return slot
        start = time.monotonic()
        deadline = start + timeout_ms / 1000
        name = f"{time.time_ns():020d}-{os.getpid():08d}-{next(_counter):06d}"
        ticket = self.queue_dir / name
        # The ticket appears in the queue already locked (made under a hidden name, locked,
        # then renamed in): a ticket seen unlocked counts as a dead waiter's and is removed.
        fresh = self.queue_dir / f".{name}"
        fd = self._open(fresh)
        locks.acquire(fd)  # a fresh file: never contended
        fresh.rename(ticket)
        try:
            while True:
                waited_ms = int((time.monotonic() - start) * 1000)
                head, ahead = self._is_head(ticket)
                if head or self._free_at_least(ahead + 1):
                    slot = self._take_free(task_id, waited_ms)
                    if slot is not None:
                        return slot
                if time.monotonic() >= deadline:
                    raise QueueTimeout(waited_ms, self.running(), self.cap, ahead)
                time.sleep(min(self.poll_s, max(0.0, deadline - time.monotonic())))
        finally:
            ticket.unlink(missing_ok=True)
            os.close(fd)

    def release_task(self, task_id: str) -> bool:
        """Free the detached slot of ``task_id`` (its task ended); True if one was found."""
        self._ready()
        for index in range(self.cap):
            fd = self._open(self._slot_path(index))
            try:
                if not locks.try_lock(fd):
                    continue
                if _read_json(fd).get("taskId") == task_id:
                    _write_json(fd, {})
                    return True
            finally:
                os.close(fd)
        return False


__all__ = ["QueueTimeout", "Slot", "Slots"]
