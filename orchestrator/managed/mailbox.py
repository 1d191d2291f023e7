"""The file mailbox between a controller and one managed pi child (protocol V4).

Why: seed 002 moves every control of a managed agent (the assignment, steering, an
interrupt, the reply to an ``ask_owner`` question) and every answer of the child (its
question, its final result) through a per-agent directory of JSON records, protocol V4 in
the ``mailboxes-v4`` namespace, with control requests injected into pi under the marker
``__PI_HERDSMAN_AGENT_V4__:``. Both sides may crash at any step, and the child is not
trusted, so the mailbox itself guarantees what the tools promise:

* **Complete or absent.** A record is written to a temp file (0600, ``O_EXCL``) in the
  box's own 0700 directory, fsynced, then *linked* to its final name: a reader never sees
  half a record, and a record id is never written twice (the link fails if it exists).
* **Nothing lost, nothing twice.** Reading does not consume. :meth:`Mailbox.consume`
  renames the record into ``processed/`` (one atomic rename, so exactly one caller wins);
  a restart between reading and consuming finds the record still pending and reads it
  again. A consumed id can never be posted again.
* **Bounded as a whole.** At most :data:`MAILBOX_RECORD_LIMIT` records and
  :data:`MAILBOX_BYTE_LIMIT` bytes per mailbox, counted from the directory entries before
  any record is read: past either, reading is a :class:`MailboxError` with nothing loaded,
  and a post that would cross one is refused.
* **Fail closed on tampering.** Records are read with ``O_NOFOLLOW``, regular files only,
  bounded in size (:mod:`orchestrator.client.file_trust.private_files`). A corrupt, truncated,
  oversized or symlinked record is a :class:`MailboxError` of the seed's
  ``internal_failure`` category naming the file; it is left in place (never deleted,
  never skipped), so the mailbox shows as unreadable rather than silently dropping it.
* **The protocol's invariants hold at the source.** One assignment per mailbox (an agent
  never gets a second one), every later record correlated to it, at most one outstanding
  ``ask_owner`` question per assignment, a reply only to that exact pending ask, no
  steer/interrupt while the child waits for a reply, one final result, nothing after it.
  Posting takes an exclusive ``flock`` on the box directory so the controller and the
  child cannot race past these checks.

Layout: ``<root>/mailboxes-v4/<sha256(workspace\\0label)[:32]>/`` holding ``to-child/``,
``to-owner/`` and ``processed/{to-child,to-owner}/``, one ``<id>.json`` per record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from orchestrator.client.file_trust import locks
from orchestrator.client.file_trust.private_files import (
    UnsafeFile,
    ensure_private_dir,
    open_dir,
    publish_new,
    read_bounded,
)
from orchestrator.managed.errors import ManagedAgentError

__all__ = [
    "MAILBOX_BYTE_LIMIT",
    "MAILBOX_RECORD_LIMIT",
    "MARKER",
    "NAMESPACE",
    "PROTOCOL_VERSION",
    "Box",
    "Kind",
    "Mailbox",
    "MailboxError",
    "Message",
    "RecordError",
    "control_marker",
    "parse_control_marker",
]

PROTOCOL_VERSION = 4
NAMESPACE = "mailboxes-v4"
MARKER = "__PI_HERDSMAN_AGENT_V4__:"

#: the fixed protocol ceilings (UTF-8 bytes of one record): requests and asks, results
REQUEST_LIMIT_BYTES = 1 << 20
RESULT_LIMIT_BYTES = 4 << 20
#: the bound of one whole mailbox (every box, pending and consumed): records, and the bytes
#: they hold. Each record is bounded, but a child could post hundreds of them, and every
#: reader loads them all (200 records of 1 MiB took a controller from 78 to 274 MB on one
#: ``agent_list``); past either bound nothing is read and the mailbox is a fault. One
#: assignment's legitimate traffic (a task, its steers and replies, a few asks, one result)
#: stays far below both.
MAILBOX_RECORD_LIMIT = 512
MAILBOX_BYTE_LIMIT = 16 << 20

Category = Literal["internal_failure", "agent_busy", "target_not_found", "invalid_request"]


class Kind(StrEnum):
    """What a record is; the first four go to the child, the last two to the owner."""

    TASK = "task"
    STEER = "steer"
    INTERRUPT = "interrupt"
    REPLY = "reply"
    ASK = "ask"
    RESULT = "result"


class Box(StrEnum):
    """A direction: records the child reads, records the owner reads."""

    TO_CHILD = "to-child"
    TO_OWNER = "to-owner"


def box_of(kind: Kind) -> Box:
    return Box.TO_OWNER if kind in (Kind.ASK, Kind.RESULT) else Box.TO_CHILD


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_RESULT_STATUSES = ("completed", "failed")


class MailboxError(ManagedAgentError):
    """A structured mailbox failure: a :class:`~orchestrator.managed.errors.ManagedAgentError`
    (the seed's error shape) that names the mailbox file in ``details.path``."""

    def __init__(
        self,
        category: Category,
        message: str,
        *,
        operation: str,
        path: str | None = None,
        next_action: str | None = None,
    ) -> None:
        super().__init__(
            category,
            message,
            operation=operation,
            next_action=next_action,
            details={"path": path} if path is not None else None,
        )
        self.path = path


class RecordError(ValueError):
    """A mailbox record that breaks protocol V4 (the text says how)."""


@dataclass(frozen=True)
class Message:
    """One mailbox record. ``assignment_id`` is the id of the task record it belongs to (a
    task's own id); ``seq`` is its place in the mailbox's one total order (1 for the task,
    assigned under the post lock: wall-clock ``created_at`` may tie or step back);
    ``ask_id`` is set on a reply (the ask it answers); ``status`` on a result
    (``completed`` or ``failed``)."""

    kind: Kind
    message_id: str
    assignment_id: str
    text: str
    created_at: float
    seq: int
    ask_id: str | None = None
    status: str | None = None

    def to_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "version": PROTOCOL_VERSION,
            "kind": self.kind.value,
            "id": self.message_id,
            "assignmentId": self.assignment_id,
            "text": self.text,
            "createdAt": self.created_at,
            "seq": self.seq,
        }
        if self.ask_id is not None:
            record["askId"] = self.ask_id
        if self.status is not None:
            record["status"] = self.status
        return record

    def encode(self) -> bytes:
        return json.dumps(self.to_record(), ensure_ascii=False, sort_keys=True).encode("utf-8")

    @staticmethod
    def decode(data: bytes) -> Message:
        """The record in ``data``; ``RecordError`` saying what is wrong otherwise."""
        try:
            raw = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RecordError(f"not a JSON record ({exc})") from None
        if not isinstance(raw, dict):
            raise RecordError("not a JSON object")
        allowed = {"version", "kind", "id", "assignmentId", "text", "createdAt", "seq"}
        allowed |= {"askId", "status"}
        unknown = sorted(set(raw) - allowed)
        if unknown:
            raise RecordError(f"unknown mailbox field(s): {', '.join(unknown)}")
        if raw.get("version") != PROTOCOL_VERSION or isinstance(raw.get("version"), bool):
            raise RecordError(f"protocol version is {raw.get('version')!r}, not {PROTOCOL_VERSION}")
        try:
            kind = Kind(raw.get("kind"))  # type: ignore[arg-type]  # any other type: no member
        except ValueError:
            raise RecordError(f"unknown kind {raw.get('kind')!r}") from None
        for key in ("id", "assignmentId"):
            if not isinstance(raw.get(key), str) or not _UUID.fullmatch(raw[key]):
                raise RecordError(f"{key} is not a UUID")
        if not isinstance(raw.get("text"), str):
            raise RecordError("text is not a string")
        created = raw.get("createdAt")
        if (
            isinstance(created, bool)
            or not isinstance(created, int | float)
            or not math.isfinite(created)
            or created < 0
        ):
            raise RecordError("createdAt is not a finite non-negative number")
        seq = raw.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            raise RecordError("seq is not a positive integer")
        ask_id = raw.get("askId")
        if (kind is Kind.REPLY) != (ask_id is not None):
            raise RecordError("askId is required on a reply and only there")
        if ask_id is not None and (not isinstance(ask_id, str) or not _UUID.fullmatch(ask_id)):
            raise RecordError("askId is not a UUID")
        status = raw.get("status")
        if (kind is Kind.RESULT) != (status is not None):
            raise RecordError("status is required on a result and only there")
        if status is not None and status not in _RESULT_STATUSES:
            raise RecordError(f"status {status!r} is not completed or failed")
        if kind is Kind.TASK and raw["assignmentId"] != raw["id"]:
            raise RecordError("a task's assignmentId must be its own id")
        return Message(
            kind=kind,
            message_id=raw["id"],
            assignment_id=raw["assignmentId"],
            text=raw["text"],
            created_at=float(created),
            seq=seq,
            ask_id=ask_id,
            status=status,
        )


def control_marker(message_id: str) -> str:
    """The text the child's pump injects into pi for a pending control request."""
    return f"{MARKER}{message_id}"


def parse_control_marker(text: str) -> str | None:
    """The request id of a marker input, or ``None`` when ``text`` is not exactly one."""
    if not text.startswith(MARKER):
        return None
    rest = text[len(MARKER) :]
    return rest if _UUID.fullmatch(rest) else None


def mailbox_dir_name(workspace_id: str, label: str) -> str:
    return hashlib.sha256(f"{workspace_id}\0{label}".encode()).hexdigest()[:32]


def _limit(kind: Kind) -> int:
    return RESULT_LIMIT_BYTES if kind is Kind.RESULT else REQUEST_LIMIT_BYTES


class Mailbox:
    """The mailbox of the agent ``label`` in ``workspace_id`` under the data dir ``root``."""

    def __init__(
        self,
        root: Path,
        workspace_id: str,
        label: str,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.namespace = Path(root) / NAMESPACE
        self.path = self.namespace / mailbox_dir_name(workspace_id, label)
        self._clock = clock

    @classmethod
    def at(cls, path: Path | str, *, clock: Callable[[], float] = time.time) -> Mailbox:
        """The mailbox in the exact directory ``path`` (a child knows only that, from
        ``PI_HERDSMAN_MAILBOX``): absolute, ``<…>/mailboxes-v4/<32 hex>``, else
        ``invalid_request``."""
        target = Path(path)
        if (
            not target.is_absolute()
            or ".." in target.parts
            or target.parent.name != NAMESPACE
            or not re.fullmatch(r"[0-9a-f]{32}", target.name)
        ):
            raise MailboxError(
                "invalid_request",
                f"not a mailbox directory (absolute <root>/{NAMESPACE}/<32 hex>): {target}",
                operation="mailbox open",
            )
        box = cls.__new__(cls)
        box.namespace = target.parent
        box.path = target
        box._clock = clock
        return box

    # -- structure -------------------------------------------------------------------

    def _fail(self, message: str, operation: str, path: Path | None = None) -> MailboxError:
        return MailboxError(
            "internal_failure",
            message,
            operation=operation,
            path=str(path) if path is not None else None,
            next_action="inspect or remove the mailbox file; it was left in place",
        )

    @contextlib.contextmanager
    def _box_fd(self, relative: str, operation: str, *, create: bool = True) -> Iterator[int]:
        target = self.path / relative
        try:
            with open_dir(target, create=create) as fd:
                yield fd
        except UnsafeFile as exc:
            raise self._fail(
                f"unsafe mailbox directory: {exc.strerror}", operation, target
            ) from None

    def _ensure(self, operation: str) -> None:
        try:
            ensure_private_dir(self.namespace)
            for relative in (".", *(b.value for b in Box), "processed"):
                with self._box_fd(relative, operation):
                    pass
            for box in Box:
                with self._box_fd(f"processed/{box.value}", operation):
                    pass
        except UnsafeFile as exc:
            raise self._fail(f"unsafe mailbox root: {exc.strerror}", operation) from None

    def ensure(self) -> None:
        """Create the mailbox's directories (0700) when missing; refuse unsafe ones."""
        self._ensure("mailbox open")

    @contextlib.contextmanager
    def _locked(self, operation: str) -> Iterator[None]:
        self._ensure(operation)
        with self._box_fd(".", operation) as fd:
            locks.acquire(fd)  # on the box's descriptor: released when it is closed
            yield

    # -- reading ---------------------------------------------------------------------

    def _read(self, relative: str, operation: str) -> list[Message]:
        """Every record in ``relative``, oldest first; a bad one raises (never skipped)."""
        messages: list[Message] = []
        try:
            with self._box_fd(relative, operation, create=False) as fd:
                names = sorted(os.listdir(fd))  # noqa: PTH208 - listing by descriptor, not path
        except FileNotFoundError:
            return []  # a mailbox nobody posted to yet: reading never creates one
        for name in names:
            if name.startswith("."):
                continue  # a temp file of a writer that has not linked it yet (or crashed)
            path = self.path / relative / name
            if not name.endswith(".json") or not _UUID.fullmatch(name[:-5]):
                raise self._fail(f"unexpected file in mailbox: {name}", operation, path)
            try:
                read = read_bounded(path, RESULT_LIMIT_BYTES + 1)
            except FileNotFoundError:
                continue  # consumed by the other side between listing and reading
            except UnsafeFile as exc:
                raise self._fail(f"unsafe mailbox file: {exc.strerror}", operation, path) from None
            if read.truncated or read.size > RESULT_LIMIT_BYTES:
                raise self._fail(
                    f"mailbox record is {read.size} bytes, over the protocol ceiling",
                    operation,
                    path,
                )
            try:
                message = Message.decode(read.data)
            except ValueError as exc:
                raise self._fail(
                    f"malformed mailbox record {name}: {exc}", operation, path
                ) from None
            if f"{message.message_id}.json" != name:
                raise self._fail(
                    f"mailbox record {name} carries id {message.message_id}", operation, path
                )
            if len(read.data) > _limit(message.kind):
                raise self._fail(
                    f"{message.kind.value} record over its size ceiling", operation, path
                )
            if box_of(message.kind).value != Path(relative).name:
                raise self._fail(f"{message.kind.value} record in the wrong box", operation, path)
            messages.append(message)
        messages.sort(key=lambda m: (m.seq, m.message_id))
        return messages

    def _footprint(self, operation: str) -> tuple[int, int]:
        """``(records, bytes)`` in every box, pending and consumed, from the directory
        entries alone (no record is opened). Counting stops once past the record bound."""
        records = size = 0
        for relative in (*(b.value for b in Box), *(f"processed/{b.value}" for b in Box)):
            try:
                with (
                    self._box_fd(relative, operation, create=False) as fd,
                    os.scandir(fd) as entries,
                ):
                    for entry in entries:
                        if entry.name.startswith("."):
                            continue  # a writer's temp file: never read
                        records += 1
                        if records > MAILBOX_RECORD_LIMIT:
                            return records, size
                        with contextlib.suppress(FileNotFoundError):
                            size += entry.stat(follow_symlinks=False).st_size
            except FileNotFoundError:
                continue
        return records, size

    def _check_bounds(self, operation: str, adding: int = 0) -> None:
        """Refuse a mailbox past its bound (``adding``: the bytes of a record about to be
        posted, which must fit too)."""
        records, size = self._footprint(operation)
        records += 1 if adding else 0
        if records <= MAILBOX_RECORD_LIMIT and size + adding <= MAILBOX_BYTE_LIMIT:
            return
        over = (
            f"more than {MAILBOX_RECORD_LIMIT} records"
            if records > MAILBOX_RECORD_LIMIT
            else f"{size + adding} bytes, over its bound of {MAILBOX_BYTE_LIMIT}"
        )
        if adding:
            raise MailboxError(
                "invalid_request",
                f"The agent's mailbox would hold {over}; the record was not posted",
                operation=operation,
                next_action="Close the agent and delegate a fresh one with the relevant files.",
            )
        raise MailboxError(
            "internal_failure",
            f"mailbox holds {over}; nothing was read",
            operation=operation,
            path=str(self.path),
            next_action="close the agent; inspect or remove its mailbox, which was left in place",
        )

    def pending(self, box: Box) -> list[Message]:
        """Records in ``box`` not yet consumed, oldest first (a restart reads them again).

        A record already in ``processed/`` is consumed even if a crash between the two
        steps of :meth:`consume` left its original behind: it is not returned again."""
        self._check_bounds("mailbox read")
        done = {m.message_id for m in self._read(f"processed/{box.value}", "mailbox read")}
        return [m for m in self._read(box.value, "mailbox read") if m.message_id not in done]

    def history(self) -> list[Message]:
        """Every record ever posted (pending and consumed), oldest first."""
        self._check_bounds("mailbox read")
        by_id: dict[str, Message] = {}
        for box in Box:
            for relative in (box.value, f"processed/{box.value}"):
                for message in self._read(relative, "mailbox read"):
                    by_id[message.message_id] = message  # a half-consumed one counts once
        return sorted(by_id.values(), key=lambda m: (m.seq, m.message_id))

    # -- consuming -------------------------------------------------------------------

    def consume(self, message: Message) -> bool:
        """Mark ``message`` consumed; ``True`` for the one call that did it, ``False`` when
        it was already consumed (by a previous run or the other reader)."""
        box = box_of(message.kind).value
        name = f"{message.message_id}.json"
        operation = "mailbox consume"
        self._ensure(operation)
        with (
            self._box_fd(box, operation) as src,
            self._box_fd(f"processed/{box}", operation) as dst,
        ):
            try:
                # link (fails if present) then unlink: a consumed id is never overwritten
                os.link(name, name, src_dir_fd=src, dst_dir_fd=dst, follow_symlinks=False)
            except FileNotFoundError:
                return False  # consumed already (or never posted): nothing is left to move
            except FileExistsError:
                # consumed before; a crash may have left the original: finish that step
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=src)
                return False
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=src)
            return True

    # -- posting ---------------------------------------------------------------------

    def _publish(self, message: Message, operation: str) -> None:
        payload = message.encode()
        limit = _limit(message.kind)
        if len(payload) > limit:
            raise MailboxError(
                "invalid_request",
                f"Mailbox payload is {len(payload)} bytes; the protocol limit is {limit} bytes",
                operation=operation,
            )
        box = box_of(message.kind).value
        name = f"{message.message_id}.json"
        with self._box_fd(box, operation) as fd:
            try:
                publish_new(fd, name, payload)
            except FileExistsError:
                raise MailboxError(
                    "internal_failure",
                    f"mailbox record {message.message_id} already exists",
                    operation=operation,
                ) from None

    def post(
        self,
        kind: Kind,
        text: str,
        *,
        assignment_id: str | None = None,
        ask_id: str | None = None,
        status: str | None = None,
        message_id: str | None = None,
        settled_only: bool = False,
    ) -> Message:
        """Post one record after checking the protocol's invariants against the whole
        history; returns it. A task starts the (single) assignment; every other kind names
        it in ``assignment_id``.

        ``settled_only`` (the child's result and ask): refuse with ``agent_busy`` while a
        steer, interrupt or reply to the child is still unconsumed, checked under the post
        lock, so a control the owner posts as the child settles is never stranded behind
        a final result."""
        operation = f"mailbox post {kind.value}"
        new_id = message_id if message_id is not None else str(uuid.uuid4())
        if not _UUID.fullmatch(new_id):
            raise MailboxError("invalid_request", "message id is not a UUID", operation=operation)
        if kind is Kind.TASK:
            assignment_id = new_id
        if assignment_id is None:
            raise MailboxError(
                "invalid_request", f"a {kind.value} needs its assignment id", operation=operation
            )
        message = Message(
            kind=kind,
            message_id=new_id,
            assignment_id=assignment_id,
            text=text,
            created_at=self._clock(),
            seq=1,
            ask_id=ask_id,
            status=status,
        )
        try:
            Message.decode(message.encode())  # the same rules a reader applies
        except UnicodeEncodeError:
            raise MailboxError(
                "invalid_request", "text is not valid Unicode", operation=operation
            ) from None
        except RecordError as exc:
            raise MailboxError("invalid_request", str(exc), operation=operation) from None
        with self._locked(operation):
            history = self.history()  # a mailbox already past its bound is a fault: not read
            self._check(message, history, operation)
            if settled_only and any(m.kind is not Kind.TASK for m in self.pending(Box.TO_CHILD)):
                raise MailboxError(
                    "agent_busy",
                    "a control request to the agent is still unconsumed",
                    operation=operation,
                )
            message = replace(message, seq=max((m.seq for m in history), default=0) + 1)
            # the record as published (its seq's digits included) must fit the bound
            self._check_bounds(operation, adding=len(message.encode()))
            self._publish(message, operation)
        return message

    @staticmethod
    def _check(message: Message, history: list[Message], operation: str) -> None:
        if any(m.message_id == message.message_id for m in history):
            raise MailboxError(
                "internal_failure",
                f"mailbox record {message.message_id} was already posted",
                operation=operation,
            )
        tasks = [m for m in history if m.kind is Kind.TASK]
        if message.kind is Kind.TASK:
            if tasks:
                raise MailboxError(
                    "agent_busy",
                    "Agent already has an assignment; an agent cannot receive a second one",
                    operation=operation,
                )
            return
        if not tasks or tasks[0].message_id != message.assignment_id:
            raise MailboxError(
                "target_not_found",
                f"no assignment {message.assignment_id} in this mailbox",
                operation=operation,
            )
        if any(m.kind is Kind.RESULT for m in history):
            raise MailboxError(
                "agent_busy",
                "The assignment already has its final result",
                operation=operation,
            )
        answered = {m.ask_id for m in history if m.kind is Kind.REPLY}
        open_asks = [m for m in history if m.kind is Kind.ASK and m.message_id not in answered]
        if message.kind is Kind.ASK and open_asks:
            raise MailboxError(
                "agent_busy",
                "An ask_owner question is already outstanding for this assignment",
                operation=operation,
            )
        if message.kind in (Kind.STEER, Kind.INTERRUPT) and open_asks:
            raise MailboxError(
                "agent_busy", "Agent is waiting for an owner reply", operation=operation
            )
        if message.kind is Kind.REPLY:
            if not open_asks:
                raise MailboxError(
                    "agent_busy",
                    "Agent has no outstanding ask_owner question",
                    operation=operation,
                )
            if open_asks[0].message_id != message.ask_id:
                raise MailboxError(
                    "target_not_found",
                    f"Agent ask identity mismatch: the pending ask is {open_asks[0].message_id}",
                    operation=operation,
                )

    def pending_ask(self) -> Message | None:
        """The outstanding ``ask_owner`` question (posted, not yet replied to), if any."""
        history = self.history()
        answered = {m.ask_id for m in history if m.kind is Kind.REPLY}
        asks = [m for m in history if m.kind is Kind.ASK and m.message_id not in answered]
        return asks[0] if asks else None
