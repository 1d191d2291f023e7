"""The managed child's ``state.json``: what the child says it is doing, for its controller.

Why: the controller cannot see inside pi. The child writes one small JSON object into its
mailbox directory at start (the controller's readiness proof: the expected ``runId``) and on
every change of its operation or assignment, and the controller projects the agent's state,
``available_tools`` and health from it. Only the child writes it; the controller reads a file
an untrusted party controls, so reading is strict: ``O_NOFOLLOW``, regular files only,
at most 64 KiB, UTF-8 JSON, exactly the known keys of protocol version 4, each of its type,
and the invariants between them (an ``asking`` child has an assignment; an assignment is never
both active and completed). Anything else is a :class:`~orchestrator.managed.mailbox.MailboxError`
of category ``internal_failure`` naming the file. Writes are atomic (a temp file created
``O_EXCL`` 0600 in the same directory, fsynced, renamed over), so a reader never sees half
a state. The TypeScript extension writes the same shape through the bridge
(:mod:`orchestrator.managed.child_cli`), i.e. through :func:`write_state`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from orchestrator.client.file_trust.private_files import UnsafeFile, read_bounded, write_atomic
from orchestrator.managed.labels import is_valid_label
from orchestrator.managed.mailbox import PROTOCOL_VERSION, MailboxError

__all__ = [
    "OPERATIONS",
    "STATE_FILE",
    "STATE_LIMIT_BYTES",
    "ChildState",
    "Operation",
    "read_state",
    "write_state",
]

STATE_FILE = "state.json"
STATE_LIMIT_BYTES = 64 << 10

Operation = Literal["idle", "working", "asking"]
OPERATIONS: tuple[Operation, ...] = ("idle", "working", "asking")

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TOKEN = re.compile(r"[^\s\x00-\x1f\x7f]{1,200}")
_KEYS = (
    "version", "runId", "label", "workspaceId", "paneId", "ownerSessionId", "piSessionId",
    "piSessionFile", "cwd", "pid", "operation", "activeRequestId", "completedRequestId",
    "lastActivityAt", "updatedAt",
)  # fmt: skip
#: optional keys: absent means their default (``sessionRetired``: written only when true)
_OPTIONAL_KEYS = ("sessionRetired",)


class StateError(ValueError):
    """A state that breaks the format (the text says how)."""


def _token(raw: dict[str, Any], key: str) -> str:
    value = raw[key]
    if not isinstance(value, str) or not _TOKEN.fullmatch(value):
        raise StateError(f"{key} is not a non-blank id without whitespace")
    return value


def _path(raw: dict[str, Any], key: str, *, nullable: bool) -> str | None:
    value = raw[key]
    if value is None and nullable:
        return None
    if (
        not isinstance(value, str)
        or not value.startswith("/")
        or "\x00" in value
        or len(value) > 4096
    ):
        raise StateError(f"{key} is not an absolute path")
    return value


def _request(raw: dict[str, Any], key: str) -> str | None:
    value = raw[key]
    if value is not None and (not isinstance(value, str) or not _UUID.fullmatch(value)):
        raise StateError(f"{key} is not a request id (UUID) or null")
    return value if isinstance(value, str) else None


def _time(raw: dict[str, Any], key: str) -> float:
    value = raw[key]
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise StateError(f"{key} is not a finite non-negative number")
    return float(value)


@dataclass(frozen=True)
class ChildState:
    """One ``state.json`` (protocol version 4); times are wall-clock epoch seconds."""

    run_id: str
    label: str
    workspace_id: str
    pane_id: str
    owner_session_id: str
    pi_session_id: str
    pi_session_file: str | None
    cwd: str
    pid: int
    operation: Operation
    active_request_id: str | None
    completed_request_id: str | None
    last_activity_at: float
    updated_at: float
    #: pi compacted this session under context pressure during an assignment while the
    #: controller's ``contextRetirement`` was on: the session is retired (no continuation)
    session_retired: bool = False

    def to_json(self) -> dict[str, Any]:
        """The JSON object, keys in the documented order."""
        retired = {"sessionRetired": True} if self.session_retired else {}
        return {
            "version": PROTOCOL_VERSION,
            "runId": self.run_id,
            "label": self.label,
            "workspaceId": self.workspace_id,
            "paneId": self.pane_id,
            "ownerSessionId": self.owner_session_id,
            "piSessionId": self.pi_session_id,
            "piSessionFile": self.pi_session_file,
            "cwd": self.cwd,
            "pid": self.pid,
            "operation": self.operation,
            "activeRequestId": self.active_request_id,
            "completedRequestId": self.completed_request_id,
            "lastActivityAt": self.last_activity_at,
            "updatedAt": self.updated_at,
            **retired,
        }

    def encode(self) -> bytes:
        return json.dumps(self.to_json(), ensure_ascii=False).encode("utf-8")

    @classmethod
    def from_json(cls, raw: object) -> ChildState:
        """The state in ``raw`` (a decoded JSON value); :class:`StateError` otherwise."""
        if not isinstance(raw, dict):
            raise StateError("not a JSON object")
        unknown = sorted(set(raw) - set(_KEYS) - set(_OPTIONAL_KEYS))
        if unknown:
            raise StateError(f"unknown state field(s): {', '.join(unknown)}")
        missing = [key for key in _KEYS if key not in raw]
        if missing:
            raise StateError(f"missing state field(s): {', '.join(missing)}")
        version = raw["version"]
        if isinstance(version, bool) or version != PROTOCOL_VERSION:
            raise StateError(f"version is {version!r}, not {PROTOCOL_VERSION}")
        run_id = raw["runId"]
        if not isinstance(run_id, str) or not _UUID.fullmatch(run_id):
            raise StateError("runId is not a UUID")
        if not is_valid_label(raw["label"]):
            raise StateError("label breaks the label grammar")
        pid = raw["pid"]
        if isinstance(pid, bool) or not isinstance(pid, int) or pid < 1:
            raise StateError("pid is not a positive integer")
        retired = raw.get("sessionRetired", False)
        if not isinstance(retired, bool):
            raise StateError("sessionRetired is not a boolean")
        operation = raw["operation"]
        if operation not in OPERATIONS:
            raise StateError(f"operation is not one of {', '.join(OPERATIONS)}")
        state = cls(
            run_id=run_id,
            label=raw["label"],
            workspace_id=_token(raw, "workspaceId"),
            pane_id=_token(raw, "paneId"),
            owner_session_id=_token(raw, "ownerSessionId"),
            pi_session_id=_token(raw, "piSessionId"),
            pi_session_file=_path(raw, "piSessionFile", nullable=True),
            cwd=cast("str", _path(raw, "cwd", nullable=False)),
            pid=pid,
            operation=operation,
            active_request_id=_request(raw, "activeRequestId"),
            completed_request_id=_request(raw, "completedRequestId"),
            last_activity_at=_time(raw, "lastActivityAt"),
            updated_at=_time(raw, "updatedAt"),
            session_retired=retired,
        )
        state.check()
        return state

    def check(self) -> None:
        """The invariants between fields; :class:`StateError` when one is broken."""
        if self.operation == "asking" and self.active_request_id is None:
            raise StateError("an asking child has no active assignment")
        if (
            self.active_request_id is not None
            and self.active_request_id == self.completed_request_id
        ):
            raise StateError("an assignment is both active and completed")


def _fail(message: str, path: Path, operation: str) -> MailboxError:
    return MailboxError(
        "internal_failure",
        message,
        operation=operation,
        path=str(path),
        next_action="the child's state file is unreadable; inspect the agent or close it",
    )


def read_state(mailbox_dir: Path | str) -> ChildState | None:
    """The child's state in ``mailbox_dir``, ``None`` when it has not written one yet."""
    path = Path(mailbox_dir) / STATE_FILE
    operation = "child state read"
    try:
        read = read_bounded(path, STATE_LIMIT_BYTES + 1)
    except FileNotFoundError:
        return None
    except UnsafeFile as exc:
        raise _fail(f"unsafe child state file: {exc.strerror}", path, operation) from None
    except OSError as exc:
        raise _fail(f"child state file unreadable: {exc.strerror}", path, operation) from None
    if read.size > STATE_LIMIT_BYTES:
        raise _fail(
            f"child state file is {read.size} bytes, over {STATE_LIMIT_BYTES}", path, operation
        )
    try:
        return ChildState.from_json(json.loads(read.data.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(f"child state file is not UTF-8 JSON ({exc})", path, operation) from None
    except StateError as exc:
        raise _fail(f"malformed child state file: {exc}", path, operation) from None


def write_state(mailbox_dir: Path | str, state: ChildState) -> None:
    """Replace the state in ``mailbox_dir`` atomically (0600); the directory must exist and
    must not be a link. A state that breaks the format is refused before anything is
    written."""
    path = Path(mailbox_dir) / STATE_FILE
    operation = "child state write"
    payload = state.encode()
    try:
        ChildState.from_json(json.loads(payload))  # the reader's rules, before writing
    except StateError as exc:
        raise MailboxError(
            "invalid_request", f"refusing to write a bad child state: {exc}", operation=operation
        ) from None
    if len(payload) > STATE_LIMIT_BYTES:
        raise MailboxError(
            "invalid_request",
            f"child state is {len(payload)} bytes, over {STATE_LIMIT_BYTES}",
            operation=operation,
        )
    try:
        # never create the mailbox: once the controller removed it (cleanup after the
        # result), a late write must not bring back a directory that occupies the label
        write_atomic(path, payload, create_parent=False)
    except FileNotFoundError:
        raise _fail("the mailbox directory is gone", path, operation) from None
    except UnsafeFile as exc:
        raise _fail(f"unsafe mailbox directory: {exc.strerror}", path, operation) from None
    except OSError as exc:
        raise _fail(f"child state not written: {exc}", path, operation) from None
