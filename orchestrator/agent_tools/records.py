"""Task records: one JSON file per task in the state directory, safe across processes.

Why files and not memory: the orchestrator may be an MCP server, a one-shot
``herdr-orchestrator call`` or a process that crashes mid-spawn; every later process must find
the task, its pane, its session file and its error. So a record is created *before* the pane
exists (status ``starting``) and rewritten at each step, always atomically (temp file, fsync,
rename, fsync of the directory), 0600 in a 0700 directory since prompts and paths are private.

Concurrency: updates are read-modify-write under an ``flock`` on ``<id>.lock``, so two
processes never lose each other's changes. ``client_task_id`` idempotency uses an index file
created by ``link(2)``, which fails if the name exists: exactly one creator wins, every other
caller gets the winner's record (the winner writes its record before linking the index, so the
record a loser is pointed at always exists).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

RECORD_VERSION = 1
RecordStatus = Literal[
    "starting", "running", "blocked", "completed", "failed", "gone", "interrupted", "closed"
]
RECORD_STATUSES: tuple[RecordStatus, ...] = (
    "starting",
    "running",
    "blocked",
    "completed",
    "failed",
    "gone",
    "interrupted",
    "closed",
)
#: Statuses of a task that still occupies a concurrency slot (its agent may be working).
ACTIVE_STATUSES: frozenset[str] = frozenset({"starting", "running", "blocked"})
#: Statuses after which nothing more happens to the task's agent.
FINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "gone", "closed"})
_TASK_ID = re.compile(r"t-[0-9a-f]{12}")
PROMPT_PREVIEW_CHARS = 200


class TaskNotFound(LookupError):
    """No record matches a target (task id, agent name, pane id or client task id)."""

    code = "TASK_NOT_FOUND"


def now_iso() -> str:
    """UTC now as ``2026-10-20T09:00:00.123456Z``: sortable, and fine enough that tasks
    created one after the other list in creation order (milliseconds tied on fast
    machines)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_task_id() -> str:
    """``t-`` + 12 random hex digits: unique, path-safe, and a valid git branch component."""
    return "t-" + secrets.token_hex(6)


def is_task_id(text: str) -> bool:
    """Whether ``text`` has the shape of a task id (used to route a ``target``)."""
    return _TASK_ID.fullmatch(text) is not None


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists (EPERM counts: it exists, someone else's)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


@dataclass(frozen=True)
class TaskRecord:
    """One task as stored (JSON keys are the camelCase of these names)."""

    task_id: str
    status: RecordStatus
    created_at: str
    updated_at: str
    kind: str
    cwd: str
    role: str = "worker"
    name: str | None = None
    model: str | None = None
    thinking: str | None = None
    prompt_chars: int = 0
    prompt_preview: str = ""
    client_task_id: str | None = None
    machine: str = "local"
    pane_id: str | None = None
    workspace_id: str | None = None
    tab_id: str | None = None
    #: The terminal id of the pane when the agent started (ownership: :func:`.fleet.same_agent`).
    terminal_id: str | None = None
    session_path: str | None = None
    artifact_dir: str | None = None
    isolated: bool = False
    worktree_path: str | None = None
    base_commit: str | None = None
    branch: str | None = None
    timeout_ms: int | None = None
    agent_args: tuple[str, ...] = ()
    error: Mapping[str, Any] | None = None
    inbox_offset: int = 0
    owner_pid: int = 0
    ended_at: str | None = None
    history: tuple[Mapping[str, str], ...] = ()
    #: Keys written by a newer version, kept verbatim so an older process never drops them.
    extra: Mapping[str, Any] = field(default_factory=dict)

    def artifact_path(self, artifact_root: Path) -> Path:
        """The task's artifact directory: as recorded, else ``<artifactRoot>/<taskId>`` (a
        spawn that stopped before choosing one). The one place this rule lives."""
        return Path(self.artifact_dir) if self.artifact_dir else artifact_root / self.task_id

    def to_dict(self) -> dict[str, Any]:
        """The JSON object stored on disk (and the ``task`` summary's source)."""
        out: dict[str, Any] = {"version": RECORD_VERSION}
        for f in fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = [dict(v) if isinstance(v, Mapping) else v for v in value]
            elif isinstance(value, Mapping):
                value = dict(value)
            out[_camel(f.name)] = value
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskRecord:
        """Parse a stored object; unknown keys go to ``extra``."""
        by_key = {_camel(f.name): f.name for f in fields(cls) if f.name != "extra"}
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key == "version":
                continue
            name = by_key.get(key)
            if name is None:
                extra[key] = value
            elif name in ("agent_args", "history") and isinstance(value, list):
                kwargs[name] = tuple(value)
            else:
                kwargs[name] = value
        return cls(**kwargs, extra=extra)

    @property
    def active(self) -> bool:
        """Whether the task still holds a slot: an active status, and for ``starting`` a live
        creating process (a spawn whose process died stays ``starting`` but frees its slot)."""
        if self.status not in ACTIVE_STATUSES:
            return False
        return self.status != "starting" or pid_alive(self.owner_pid)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) 0700; tighten an existing one we own."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
    return path


def _write_temp(directory: Path, data: bytes) -> Path:
    """A fully written, fsynced 0600 temp file in ``directory`` (hidden: listings skip it)."""
    temp = directory / f".{secrets.token_hex(8)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return temp


def atomic_write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Replace ``path`` with ``data``: readers see the old or the new file, never a torn one."""
    temp = _write_temp(path.parent, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())
    try:
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


class TaskStore:
    """The records of one state directory (``<stateDir>/tasks`` and ``<stateDir>/clients``)."""

    def __init__(self, state_dir: Path | str) -> None:
        self.state_dir = Path(state_dir)
        self.tasks_dir = self.state_dir / "tasks"
        self.clients_dir = self.state_dir / "clients"

    def _ready(self) -> None:
        ensure_private_dir(self.state_dir)
        ensure_private_dir(self.tasks_dir)
        ensure_private_dir(self.clients_dir)

    def path(self, task_id: str) -> Path:
        """The record file of ``task_id`` (refuses anything not shaped like a task id)."""
        if not is_task_id(task_id):
            raise TaskNotFound(f"{task_id!r} is not a task id")
        return self.tasks_dir / f"{task_id}.json"

    @contextlib.contextmanager
    def _locked(self, task_id: str) -> Iterator[None]:
        lock = self.tasks_dir / f"{task_id}.lock"
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    # -- creation -----------------------------------------------------------------------------

    def create(
        self,
        *,
        kind: str,
        cwd: str,
        prompt: str = "",
        client_task_id: str | None = None,
        **fields_: Any,
    ) -> tuple[TaskRecord, bool]:
        """A new ``starting`` record, or the existing one for a repeated ``client_task_id``.

        Returns ``(record, created)``; ``created`` is False when an earlier call (in any
        process) already created the task for this ``client_task_id``.
        """
        self._ready()
        if client_task_id is not None:
            existing = self.by_client_task_id(client_task_id)
            if existing is not None:
                return existing, False
        stamp = now_iso()
        record = TaskRecord(
            task_id=new_task_id(),
            status="starting",
            created_at=stamp,
            updated_at=stamp,
            kind=kind,
            cwd=cwd,
            prompt_chars=len(prompt),
            prompt_preview=prompt[:PROMPT_PREVIEW_CHARS],
            client_task_id=client_task_id,
            owner_pid=os.getpid(),
            history=({"status": "starting", "at": stamp},),
            **fields_,
        )
        path = self.path(record.task_id)
        temp = _write_temp(self.tasks_dir, json.dumps(record.to_dict(), indent=2).encode())
        os.link(temp, path)  # a fresh random id: EEXIST would be a bug, so let it raise
        temp.unlink()
        _fsync_dir(self.tasks_dir)
        if client_task_id is None:
            return record, True
        index = self._client_index(client_task_id)
        entry = {"clientTaskId": client_task_id, "taskId": record.task_id}
        temp = _write_temp(self.clients_dir, json.dumps(entry).encode())
        try:
            os.link(temp, index)
        except FileExistsError:
            # Another caller won the race: drop ours, answer with theirs.
            path.unlink(missing_ok=True)
            winner = self.by_client_task_id(client_task_id)
            if winner is None:  # pragma: no cover - the index always names a written record
                raise
            return winner, False
        finally:
            temp.unlink(missing_ok=True)
        _fsync_dir(self.clients_dir)
        return record, True

    def _client_index(self, client_task_id: str) -> Path:
        digest = hashlib.sha256(client_task_id.encode()).hexdigest()[:40]
        return self.clients_dir / f"{digest}.json"

    # -- reading ------------------------------------------------------------------------------

    def get(self, task_id: str) -> TaskRecord:
        """The record of ``task_id``; raises :class:`TaskNotFound`."""
        try:
            data = json.loads(self.path(task_id).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TaskNotFound(f"no task {task_id}") from None
        return TaskRecord.from_dict(data)

    def list_records(self) -> list[TaskRecord]:
        """Every record, oldest first (temp and lock files are skipped)."""
        if not self.tasks_dir.is_dir():
            return []
        records: list[TaskRecord] = []
        for path in self.tasks_dir.glob("t-*.json"):
            try:
                records.append(TaskRecord.from_dict(json.loads(path.read_text(encoding="utf-8"))))
            except FileNotFoundError:
                continue  # removed between glob and read
        records.sort(key=lambda r: (r.created_at, r.task_id))
        return records

    def by_client_task_id(self, client_task_id: str) -> TaskRecord | None:
        """The task created for ``client_task_id``, if any."""
        try:
            entry = json.loads(self._client_index(client_task_id).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        if entry.get("clientTaskId") != client_task_id:  # pragma: no cover - digest collision
            return None
        try:
            return self.get(str(entry["taskId"]))
        except TaskNotFound:
            return None

    def _best(self, matches: list[TaskRecord]) -> TaskRecord | None:
        # An active task wins over a finished one; then the most recently created.
        if not matches:
            return None
        return max(matches, key=lambda r: (r.status in ACTIVE_STATUSES, r.created_at))

    def by_name(self, name: str) -> TaskRecord | None:
        """The task whose agent is called ``name`` (the active or newest one)."""
        return self._best([r for r in self.list_records() if r.name == name])

    def by_pane(self, pane_id: str) -> TaskRecord | None:
        """The task running in ``pane_id`` (the active or newest one: Herdr reuses no pane id
        while it lives, but a closed task's pane id may come back in a later session)."""
        return self._best([r for r in self.list_records() if r.pane_id == pane_id])

    def find(self, target: str) -> TaskRecord:
        """Resolve a tool ``target``: task id, then agent name, then pane id."""
        if is_task_id(target):
            return self.get(target)
        record = self.by_name(target) or self.by_pane(target)
        if record is None:
            raise TaskNotFound(f"no task, agent name or pane {target!r} in the task registry")
        return record

    def is_active(self, task_id: str) -> bool:
        """Whether ``task_id`` still holds a concurrency slot (see :attr:`TaskRecord.active`)."""
        try:
            return self.get(task_id).active
        except TaskNotFound:
            return False

    # -- updates ------------------------------------------------------------------------------

    def update(self, task_id: str, **changes: Any) -> TaskRecord:
        """Apply ``changes`` under the task's lock and write the record atomically.

        A status change is appended to ``history``; a final status sets ``ended_at``.
        """
        return self.modify(task_id, lambda _current: changes)

    def modify(self, task_id: str, change: Callable[[TaskRecord], Mapping[str, Any]]) -> TaskRecord:
        """Read-modify-write under the task's lock: ``change(current)`` returns the changes.

        Use it when the new value depends on the stored one (an inbox offset advanced by the
        messages just consumed), so two processes never overwrite each other's step.
        """
        with self._locked(task_id):
            current = self.get(task_id)
            changes = dict(change(current))
            unknown = set(changes) - {f.name for f in fields(TaskRecord)}
            if unknown:
                raise TypeError(f"unknown record fields: {', '.join(sorted(unknown))}")
            status = changes.get("status")
            if status is not None and status not in RECORD_STATUSES:
                raise ValueError(f"unknown record status {status!r}")
            stamp = now_iso()
            if "agent_args" in changes:
                changes["agent_args"] = tuple(changes["agent_args"])
            if status is not None and status != current.status:
                changes["history"] = (*current.history, {"status": status, "at": stamp})
                if status in FINAL_STATUSES and current.ended_at is None:
                    changes.setdefault("ended_at", stamp)
            updated = replace(current, updated_at=stamp, **changes)
            atomic_write_json(self.path(task_id), updated.to_dict())
            return updated

    def remove(self, task_id: str) -> None:
        """Forget a task (its client index too); used by tests and explicit cleanup only."""
        record = self.get(task_id)
        with self._locked(task_id):
            self.path(task_id).unlink(missing_ok=True)
        if record.client_task_id is not None:
            with contextlib.suppress(OSError):
                index = self._client_index(record.client_task_id)
                if json.loads(index.read_text()).get("taskId") == task_id:
                    index.unlink()
        with contextlib.suppress(OSError):
            (self.tasks_dir / f"{task_id}.lock").unlink()


__all__ = [
    "ACTIVE_STATUSES",
    "FINAL_STATUSES",
    "RECORD_STATUSES",
    "TaskNotFound",
    "TaskRecord",
    "TaskStore",
    "atomic_write_json",
    "ensure_private_dir",
    "is_task_id",
    "new_task_id",
    "now_iso",
]
