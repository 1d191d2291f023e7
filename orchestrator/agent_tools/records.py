"""Task records: one JSON file per task in the state directory, safe across processes.

Why files and not memory: the orchestrator may be an MCP server, a one-shot
``herdr-orchestrator call`` or a process that crashes mid-spawn; every later process must find
the task, its pane, its session file and its error. So a record is created *before* the pane
exists (status ``starting``) and rewritten at each step, always atomically (temp file, fsync,
rename), 0600 in a 0700 directory since prompts and paths are private. A new record's (and a
client index entry's) directory is fsynced too, so the task's existence survives a power cut;
an update is not (issue 17: six updates per spawn paid a directory fsync each, 20-100 ms under
twenty spawns at once): the rename replaces one complete, fsynced file with another, so a
power cut leaves the previous complete record, never a torn one.
A temp file is written completely (a short write on a full disk raises and the temp file is
removed) before it replaces anything, so a good record is never replaced by a truncated one.

**An unreadable record stays one task's problem.** A record that is empty, not UTF-8, not JSON,
too large or of the wrong shape (:func:`parse_record`) is skipped by every listing and lookup
by name or pane, and remembered by path in :attr:`TaskStore.unreadable` so tools can report it
(``warnings``) and ``herdr_doctor`` can flag it; only reading that task by its id fails
(:class:`UnreadableRecord`, a :class:`TaskNotFound` naming the file and the reason).

A record stays ``starting`` until its task prompt was delivered (``delivery``): only then did
the agent get any work, so only then can its idle state mean the work is done
(``completion.py`` and result-contract.md).

Concurrency: updates are read-modify-write under an ``flock`` on ``<id>.lock``, so two
processes never lose each other's changes. ``client_task_id`` idempotency uses an index file
created by ``link(2)``, which fails if the name exists: exactly one creator wins, every other
caller gets the winner's record (the winner writes its record before linking the index, so the
record a loser is pointed at always exists).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import secrets
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from orchestrator.client.file_trust import locks
from orchestrator.client.file_trust.private_files import (
    ensure_private_dir,
    publish_new,
    read_bounded,
    write_atomic,
)
from orchestrator.core.text_rules import is_task_id

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
PROMPT_PREVIEW_CHARS = 200


#: A record larger than this is not one we wrote (history and previews are small).
MAX_RECORD_BYTES = 1 << 20


class TaskNotFound(LookupError):
    """No record matches a target (task id, agent name, pane id or client task id)."""

    code = "TASK_NOT_FOUND"


class UnreadableRecord(TaskNotFound):
    """A record file exists but cannot be used (garbage, empty, wrong types, bad UTF-8)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"the task record {path} is unreadable ({reason}); move or delete it")
        self.path = path
        self.reason = reason


def now_iso() -> str:
    """UTC now as ``2026-10-20T09:00:00.123456Z``: sortable, and fine enough that tasks
    created one after the other list in creation order (milliseconds tied on fast
    machines)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_task_id() -> str:
    """``t-`` + 12 random hex digits: unique, path-safe, and a valid git branch component."""
    return "t-" + secrets.token_hex(6)


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


def process_start(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (Linux ``/proc``), or None."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    try:  # the fields after "(comm)": starttime is field 22, the 20th after the name
        return int(data[data.rindex(b")") + 2 :].split()[19])
    except (ValueError, IndexError):
        return None


def owner_alive(pid: int, started: int | None) -> bool:
    """Whether the process that owns a record still runs: ``pid`` exists and, when its start
    time was recorded, is the same process (not a later one that reused the pid)."""
    if not pid_alive(pid):
        return False
    if started is None:
        return True
    now = process_start(pid)
    return now is None or now == started


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
    #: the owner's start time (:func:`process_start`): a reused pid is not the owner
    owner_start: int | None = None
    ended_at: str | None = None
    history: tuple[Mapping[str, str], ...] = ()
    #: How the task prompt reached the agent (``completion.Delivery``): written just before
    #: ``agent prompt`` and again once Herdr accepted it. None: the prompt was never sent.
    delivery: Mapping[str, Any] | None = None
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
        return self.status != "starting" or self.owner_alive

    @property
    def owner_alive(self) -> bool:
        """Whether the process that created the record still runs (see :func:`owner_alive`)."""
        return owner_alive(self.owner_pid, self.owner_start)


def _type_ok(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits a :class:`TaskRecord` field's annotation."""
    origin = get_origin(hint)
    if hint is Any:
        return True
    if origin is Literal:
        return value in get_args(hint)
    if origin is tuple:
        item = get_args(hint)[0]
        return isinstance(value, list | tuple) and all(_type_ok(v, item) for v in value)
    if origin is Union or origin is types.UnionType:
        return any(_type_ok(value, option) for option in get_args(hint))
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        return isinstance(value, Mapping)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True  # pragma: no cover - every field's annotation is handled above


@functools.cache
def _record_fields() -> tuple[dict[str, Any], dict[str, Field[Any]]]:
    """:class:`TaskRecord`'s field types and its fields by stored key, worked out once (every
    record read checks against them; ``get_type_hints`` alone costs ~0.3 ms)."""
    by_key = {_camel(f.name): f for f in fields(TaskRecord) if f.name != "extra"}
    return get_type_hints(TaskRecord), by_key


def parse_record(raw: bytes) -> TaskRecord:
    """A stored record from its file's bytes; ``ValueError``/``TypeError`` says what is
    wrong with it."""
    if not raw.strip():
        raise ValueError("empty file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise TypeError(f"not a JSON object but {type(data).__name__}")
    hints, by_key = _record_fields()
    for key, f in by_key.items():
        if key not in data:
            if f.default is MISSING and f.default_factory is MISSING:
                raise ValueError(f"no {key!r}")
            continue
        if not _type_ok(data[key], hints[f.name]):
            raise ValueError(f"{key!r} has the wrong type or value: {data[key]!r:.60}")
    if not is_task_id(data["taskId"]):
        raise ValueError(f"'taskId' is not a task id: {data['taskId']!r:.60}")
    return TaskRecord.from_dict(data)


def atomic_write_json(path: Path, data: Mapping[str, Any], *, durable_name: bool = True) -> None:
    """Replace ``path`` with ``data``: readers see the old or the new file, never a torn one.

    ``durable_name=False`` skips the directory fsync: for replacing a file that exists, where
    a power cut may keep the old complete version (see the module docstring)."""
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    write_atomic(path, text, create_parent=False, sync_dir=durable_name)


class TaskStore:
    """The records of one state directory (``<stateDir>/tasks`` and ``<stateDir>/clients``)."""

    def __init__(self, state_dir: Path | str) -> None:
        self.state_dir = Path(state_dir)
        self.tasks_dir = self.state_dir / "tasks"
        self.clients_dir = self.state_dir / "clients"
        #: Record files the last listing skipped, by path, with the reason.
        self.unreadable: dict[Path, str] = {}

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
        with locks.held(self.tasks_dir / f"{task_id}.lock"):
            yield

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
            owner_start=process_start(os.getpid()),
            history=({"status": "starting", "at": stamp},),
            **fields_,
        )
        path = self.path(record.task_id)
        # a fresh random id: EEXIST would be a bug, so let it raise
        publish_new(self.tasks_dir, path.name, json.dumps(record.to_dict(), indent=2).encode())
        if client_task_id is None:
            return record, True
        index = self._client_index(client_task_id)
        entry = {"clientTaskId": client_task_id, "taskId": record.task_id}
        try:
            publish_new(self.clients_dir, index.name, json.dumps(entry).encode())
        except FileExistsError:
            # Another caller won the race: drop ours, answer with theirs.
            path.unlink(missing_ok=True)
            winner = self.by_client_task_id(client_task_id)
            if winner is None:  # pragma: no cover - the index always names a written record
                raise
            return winner, False
        return record, True

    def _client_index(self, client_task_id: str) -> Path:
        digest = hashlib.sha256(client_task_id.encode()).hexdigest()[:40]
        return self.clients_dir / f"{digest}.json"

    # -- reading ------------------------------------------------------------------------------

    @staticmethod
    def _load(path: Path) -> TaskRecord:
        """The record in ``path``: ``FileNotFoundError`` when it is gone,
        :class:`UnreadableRecord` when it cannot be used."""
        try:
            read = read_bounded(path, MAX_RECORD_BYTES)
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise UnreadableRecord(path, exc.strerror or str(exc)) from None
        if read.truncated:
            raise UnreadableRecord(path, f"larger than {MAX_RECORD_BYTES} bytes")
        try:
            record = parse_record(read.data)
        except (ValueError, TypeError) as exc:
            raise UnreadableRecord(path, str(exc)) from None
        if path.name != f"{record.task_id}.json":
            raise UnreadableRecord(path, f"it holds task {record.task_id}, not {path.stem}")
        return record

    def get(self, task_id: str) -> TaskRecord:
        """The record of ``task_id``; raises :class:`TaskNotFound` (:class:`UnreadableRecord`
        when its file exists but cannot be used)."""
        try:
            return self._load(self.path(task_id))
        except FileNotFoundError:
            raise TaskNotFound(f"no task {task_id}") from None

    def list_records(self) -> list[TaskRecord]:
        """Every readable record, oldest first (temp and lock files are skipped).

        Unreadable records are skipped and listed in :attr:`unreadable` (path → reason), so
        one bad file never hides every other task."""
        self.unreadable = {}
        if not self.tasks_dir.is_dir():
            return []
        records: list[TaskRecord] = []
        for path in sorted(self.tasks_dir.glob("t-*.json")):
            try:
                records.append(self._load(path))
            except FileNotFoundError:
                continue  # removed between glob and read
            except UnreadableRecord as exc:
                self.unreadable[path] = exc.reason
        records.sort(key=lambda r: (r.created_at, r.task_id))
        return records

    def unreadable_warnings(self) -> list[str]:
        """One warning per record the last listing skipped (for a tool's ``warnings``)."""
        return [
            f"skipped the unreadable task record {path} ({reason}); herdr_doctor lists it"
            for path, reason in sorted(self.unreadable.items())
        ]

    def by_client_task_id(self, client_task_id: str) -> TaskRecord | None:
        """The task created for ``client_task_id``, if any."""
        index = self._client_index(client_task_id)
        try:
            read = read_bounded(index, MAX_RECORD_BYTES)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise UnreadableRecord(index, exc.strerror or str(exc)) from None
        try:
            entry = json.loads(read.data)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise UnreadableRecord(index, "not a JSON client index") from None
        if not isinstance(entry, dict):
            raise UnreadableRecord(index, "not a JSON object")
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

    def by_name(self, name: str, machine: str | None = None) -> TaskRecord | None:
        """The task whose agent is called ``name`` (the active or newest one), on ``machine``
        when given, else on any machine."""
        return self._best(
            [
                r
                for r in self.list_records()
                if r.name == name and (machine is None or r.machine == machine)
            ]
        )

    def by_pane(self, pane_id: str, machine: str = "local") -> TaskRecord | None:
        """The task running in ``pane_id`` on ``machine`` (the active or newest one: Herdr
        reuses no pane id while it lives, but a closed task's pane id may come back in a later
        session). Pane ids are unique per server only: ``w1:p1`` exists on every machine."""
        return self._best(
            [r for r in self.list_records() if r.pane_id == pane_id and r.machine == machine]
        )

    def find(self, target: str, machine: str | None = None) -> TaskRecord:
        """Resolve a tool ``target``: task id, then agent name, then pane id. A name or pane
        id is looked up on ``machine`` when given; without it a name matches on any machine
        (an owned task remembers its machine) and a pane id only on the local one."""
        if is_task_id(target):
            return self.get(target)
        record = self.by_name(target, machine) or self.by_pane(target, machine or "local")
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
            if not changes:
                return current  # nothing to change: nothing written (updatedAt stays)
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
            atomic_write_json(self.path(task_id), updated.to_dict(), durable_name=False)
            return updated

    def remove(self, task_id: str) -> None:
        """Forget a task (its client index too); used by tests and explicit cleanup only."""
        record = self.get(task_id)
        with self._locked(task_id):
            self.path(task_id).unlink(missing_ok=True)
        if record.client_task_id is not None:
            with contextlib.suppress(OSError, ValueError):
                index = self._client_index(record.client_task_id)
                if json.loads(read_bounded(index, MAX_RECORD_BYTES).data).get("taskId") == task_id:
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
    "UnreadableRecord",
    "atomic_write_json",
    "ensure_private_dir",
    "is_task_id",
    "new_task_id",
    "now_iso",
    "owner_alive",
    "parse_record",
    "pid_alive",
    "process_start",
]
