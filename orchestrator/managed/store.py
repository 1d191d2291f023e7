"""The controller's durable state: its identity and one record per agent generation.

Why durable: seed 002 promises that a restarted server recovers the agents it owns and
delivers nothing twice. So everything the controller knows about an agent is written before
it acts on it (a record exists before the pane; the pane id is recorded before the child is
started; delivery is recorded when it happened), and a new process reads it all back.

Layout under ``<config.state_dir>/managed/`` (0700, refused when not ours:
:func:`orchestrator.client.file_trust.private_files.ensure_private_dir`):

* ``controller.json`` — ``{controllerId, createdAt}``, created once (``O_EXCL``, 0600) and
  never rewritten; a file that is a link, not regular, oversized or malformed is refused
  (``internal_failure``), never replaced by a fresh identity (which would orphan the agents).
  The lead controller's ``owner_session_id`` is its ``controllerId``.
* ``generations/<runId>.json`` — one :class:`Generation` per agent generation, replaced
  atomically (temp, fsync, rename; 0600). Unknown keys are refused on read: a record this
  build cannot fully understand is shown as ``unknown``, never half-trusted.
* ``controller.lock`` — the lifecycle lock (``flock``): every mutation of agents and every
  reconcile runs under it, so two server processes (or threads) cannot both deliver one
  result or both claim one label. It is re-entrant within a process.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, get_args

from orchestrator.client.file_trust import locks
from orchestrator.client.file_trust.private_files import (
    UnsafeFile,
    ensure_private_dir,
    publish_new,
    read_bounded,
    write_atomic,
)
from orchestrator.client.poll import Deadline
from orchestrator.managed.errors import ManagedAgentError

__all__ = [
    "ACTIVE_STATUSES",
    "ControllerIdentity",
    "Generation",
    "GenerationStatus",
    "LockBusy",
    "ManagedStore",
    "managed_root",
]

MANAGED_DIR = "managed"
CONTROLLER_FILE = "controller.json"
GENERATIONS_DIR = "generations"
LOCK_FILE = "controller.lock"
_RECORD_LIMIT = 256 * 1024

#: ``starting``: recorded, launch in progress (or interrupted); ``live``: the task was posted;
#: ``delivered``: the result was delivered and the agent cleaned up (the session is kept for
#: ``agent_continue``); ``closed``: closed by its owner; ``failed``: the launch was rolled back.
GenerationStatus = Literal["starting", "live", "delivered", "closed", "failed"]
GENERATION_STATUSES: frozenset[str] = frozenset(get_args(GenerationStatus))
#: The statuses of a generation that still occupies its label and shows in ``agent_list``.
ACTIVE_STATUSES: frozenset[str] = frozenset({"starting", "live"})


def managed_root(state_dir: Path) -> Path:
    """``<state_dir>/managed``, created 0700 or refused when not private."""
    ensure_private_dir(state_dir)
    return ensure_private_dir(Path(state_dir) / MANAGED_DIR)


def _corrupt(path: Path, why: str, operation: str) -> ManagedAgentError:
    return ManagedAgentError(
        "internal_failure",
        f"{path}: {why}",
        operation=operation,
        details={"path": str(path)},
        next_action="Inspect the file; it was left in place.",
    )


def _read_json(path: Path, operation: str) -> dict[str, Any]:
    try:
        read = read_bounded(path, _RECORD_LIMIT + 1)
    except UnsafeFile as exc:
        raise _corrupt(path, exc.strerror or "unsafe file", operation) from None
    if read.truncated or read.size > _RECORD_LIMIT:
        raise _corrupt(path, f"{read.size} bytes, over {_RECORD_LIMIT}", operation)
    try:
        raw = json.loads(read.data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _corrupt(path, f"not a JSON record ({exc})", operation) from None
    if not isinstance(raw, dict):
        raise _corrupt(path, "not a JSON object", operation)
    return raw


@dataclass(frozen=True)
class ControllerIdentity:
    """The durable identity of the lead controller (its ``owner_session_id``)."""

    controller_id: str
    created_at: float


@dataclass(frozen=True)
class Generation:
    """One agent generation: one label, one pi session, one assignment.

    ``request_id`` is the id of the task record (the assignment id). ``delivered_asks`` are
    the ask ids already delivered to the owner (each exactly once). ``result_request_id``
    is set once the result was persisted as an artifact, ``result_ref`` with it, and
    ``result_delivered`` once it reached the owner.
    """

    run_id: str
    label: str
    definition: str
    owner_session_id: str
    workspace_id: str
    cwd: str
    mailbox: str
    status: GenerationStatus
    created_at: float
    updated_at: float
    agent_name: str
    pane_id: str | None = None
    tab_id: str | None = None
    tab_label: str | None = None
    request_id: str | None = None
    pi_session_id: str | None = None
    pi_session_file: str | None = None
    parent_label: str | None = None
    continued_from: str | None = None
    result_ref: str | None = None
    result_request_id: str | None = None
    result_status: str | None = None
    result_delivered: bool = False
    result_error: dict[str, Any] | None = None
    delivered_asks: tuple[str, ...] = ()
    cleanup_error: str | None = None
    diagnostic: str | None = None
    closed_reason: str | None = None
    model: str | None = None
    thinking: str | None = None
    #: the definitions the child may delegate to, as its controller launched it (``()``: a
    #: leaf; None: recorded before rosters were recorded, never trusted to delegate)
    allowed_definitions: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        """Still occupies its label and shows in ``agent_list``."""
        return self.status in ACTIVE_STATUSES

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["delivered_asks"] = list(self.delivered_asks)
        if self.allowed_definitions is not None:
            out["allowed_definitions"] = list(self.allowed_definitions)
        out["version"] = 1
        return out

    @staticmethod
    def from_json(raw: dict[str, Any], path: Path) -> Generation:
        operation = "generation read"
        known = {f.name for f in fields(Generation)} | {"version"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise _corrupt(path, f"unknown field(s): {', '.join(unknown)}", operation)
        if raw.get("version") != 1:
            raise _corrupt(path, f"record version {raw.get('version')!r} is not 1", operation)
        body = {k: v for k, v in raw.items() if k != "version"}
        for name in ("run_id", "label", "definition", "owner_session_id", "workspace_id"):
            if not isinstance(body.get(name), str) or not body[name]:
                raise _corrupt(path, f"{name} is not a non-empty string", operation)
        if body.get("status") not in GENERATION_STATUSES:
            raise _corrupt(path, f"status {body.get('status')!r} is unknown", operation)
        for name in ("created_at", "updated_at"):
            value = body.get(name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise _corrupt(path, f"{name} is not a number", operation)
            if not math.isfinite(value):
                raise _corrupt(path, f"{name} is not finite", operation)
        asks = body.get("delivered_asks", [])
        if not isinstance(asks, list) or not all(isinstance(a, str) for a in asks):
            raise _corrupt(path, "delivered_asks is not a list of strings", operation)
        body["delivered_asks"] = tuple(asks)
        allowed = body.get("allowed_definitions")
        if allowed is not None:
            if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
                raise _corrupt(path, "allowed_definitions is not a list of strings", operation)
            body["allowed_definitions"] = tuple(allowed)
        if f"{body['run_id']}.json" != path.name:
            raise _corrupt(path, f"record carries run id {body['run_id']}", operation)
        try:
            return Generation(**body)
        except TypeError as exc:
            raise _corrupt(path, str(exc), operation) from None


class LockBusy(Exception):
    """The lifecycle lock is held by another process or thread."""


class _ReentrantFlock:
    """A process-wide re-entrant lock backed by ``flock`` on one file.

    ``flock`` locks belong to an open file description, so two descriptors of one process
    exclude each other; the thread lock in front makes nested use in one thread (an
    operation that reconciles first) re-entrant and keeps other threads waiting.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextlib.contextmanager
    def hold(self, *, timeout: float | None) -> Iterator[None]:
        deadline = Deadline(timeout)
        if not self._thread.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            raise LockBusy(str(self.path))
        try:
            if self._depth == 0:
                fd = locks.open_lock_file(self.path)
                try:
                    if not locks.acquire(fd, deadline.remaining()):
                        raise LockBusy(str(self.path))
                except BaseException:
                    os.close(fd)
                    raise
                self._fd = fd
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    fd, self._fd = self._fd, None
                    os.close(fd)  # releases the lock
        finally:
            self._thread.release()


_LOCKS: dict[str, _ReentrantFlock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(path: Path) -> _ReentrantFlock:
    key = os.path.realpath(path)
    with _LOCKS_GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = _ReentrantFlock(path)
        return lock


class ManagedStore:
    """The managed state root: controller identity, generation records, the lifecycle lock."""

    def __init__(self, state_dir: Path) -> None:
        self.root = managed_root(Path(state_dir))
        self.generations_dir = ensure_private_dir(self.root / GENERATIONS_DIR)
        self._lock = _lock_for(self.root / LOCK_FILE)

    # -- identity ------------------------------------------------------------------

    def controller(self) -> ControllerIdentity:
        """The durable controller identity, created on first use."""
        path = self.root / CONTROLLER_FILE
        operation = "controller identity"
        try:
            raw = _read_json(path, operation)
        except FileNotFoundError:
            identity = ControllerIdentity(str(uuid.uuid4()), time.time())
            payload = json.dumps(
                {"controllerId": identity.controller_id, "createdAt": identity.created_at}
            ).encode()
            # complete or absent (the link fails if a concurrent first use linked first), so
            # a concurrent reader never sees a half-written identity
            try:
                publish_new(path.parent, path.name, payload)
            except FileExistsError:
                raw = _read_json(path, operation)  # a concurrent first use won: use theirs
            else:
                return identity
        if set(raw) != {"controllerId", "createdAt"}:
            raise _corrupt(path, "not a controller identity record", operation)
        cid, created = raw["controllerId"], raw["createdAt"]
        try:
            valid = isinstance(cid, str) and str(uuid.UUID(cid)) == cid
        except ValueError:
            valid = False
        if not valid or isinstance(created, bool) or not isinstance(created, int | float):
            raise _corrupt(path, "not a controller identity record", operation)
        return ControllerIdentity(cid, float(created))

    # -- generations ---------------------------------------------------------------

    def _path(self, run_id: str) -> Path:
        try:
            checked = str(uuid.UUID(run_id))
        except ValueError:
            raise ManagedAgentError(
                "invalid_request", f"{run_id!r} is not a run id", operation="generation"
            ) from None
        if checked != run_id:
            raise ManagedAgentError(
                "invalid_request", f"{run_id!r} is not a run id", operation="generation"
            )
        return self.generations_dir / f"{run_id}.json"

    def save(self, generation: Generation) -> Generation:
        """Write ``generation`` atomically (0600); returns it with ``updated_at`` now."""
        stamped = replace(generation, updated_at=time.time())
        data = json.dumps(stamped.to_json(), ensure_ascii=False, sort_keys=True)
        write_atomic(self._path(stamped.run_id), data)
        return stamped

    def update(self, generation: Generation, **changes: Any) -> Generation:
        return self.save(replace(generation, **changes))

    def load(self, run_id: str) -> Generation:
        path = self._path(run_id)
        return Generation.from_json(_read_json(path, "generation read"), path)

    def scan(self) -> tuple[list[Generation], list[ManagedAgentError]]:
        """Every readable generation (oldest first) and one error per unreadable record
        (left in place; shown as ``unknown`` evidence, never silently dropped)."""
        found: list[Generation] = []
        problems: list[ManagedAgentError] = []
        try:
            names = sorted(p.name for p in self.generations_dir.iterdir())
        except OSError as exc:
            if exc.errno == errno.ENOENT:
                return [], []
            raise
        for name in names:
            if name.startswith(".") or not name.endswith(".json"):
                continue
            path = self.generations_dir / name
            try:
                found.append(Generation.from_json(_read_json(path, "generation read"), path))
            except FileNotFoundError:
                continue
            except ManagedAgentError as exc:
                problems.append(exc)
        found.sort(key=lambda g: (g.created_at, g.run_id))
        return found, problems

    # -- the lifecycle lock -------------------------------------------------------

    @contextlib.contextmanager
    def locked(self, *, timeout: float | None = 60.0) -> Iterator[None]:
        """Hold the lifecycle lock (re-entrant in a thread); :class:`LockBusy` past
        ``timeout`` seconds (``0``: try once)."""
        with self._lock.hold(timeout=timeout):
            yield
