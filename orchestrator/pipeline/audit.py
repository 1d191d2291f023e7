"""The audit log: one JSON line per tool call that can change something (every call not R0).

Why: a server that types into terminals and starts agents on a model's say-so must leave a
record a human can read afterwards — what was called, on what, by whom, and how it ended —
and that record must not become a second copy of the prompts, commands and keys it was given.
So a line holds (:func:`entry`):

* ``time`` (UTC, ISO 8601), ``tool``, ``risk``, ``caller`` (``cli`` or ``mcp:<client>/<version>``,
  :class:`~orchestrator.core.caller.Caller`), ``outcome`` (``ok``, ``failed`` — the tool's own
  rule, :func:`~orchestrator.pipeline.outcome.call_failed` — or ``refused`` before the tool ran:
  the policy, a busy target), ``errorCode`` and ``durationMs``;
* ``targets``: the ``workspace``, ``tab``, ``pane``, ``agent``, ``target`` and ``name``
  arguments. An id of Herdr's shape (``w1``, ``w1:t2``, ``w1:p3``, ``p_1_2``) or a task id
  (``t-…``) is written as is; anything else — agent names too — as ``{"sha256", "len"}``;
* ``args``: the other arguments: booleans, numbers and a value of the schema's ``enum`` as
  they are; every other value (prompts, commands, text, lists, objects) as ``{"sha256",
  "len"}`` of its JSON. Argument names the schema does not know are only counted
  (``unknownArgs``): a name can carry text too.

The file is ``audit.jsonl`` in the state directory (made 0700), created 0600 and opened with
``O_NOFOLLOW`` (a link planted in its place is refused, never followed), appended to with one
``write`` under an exclusive lock, and rotated by size: past ``auditMaxBytes`` it becomes
``audit.jsonl.1`` (older ones shift up to ``.3``; the oldest is dropped). ``herdr-orchestrator
audit`` prints and follows it. A write that fails is logged (never the line) and does not
change the call's result: the call has already happened.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.client.file_trust import locks
from orchestrator.client.file_trust.ownership import open_own_append
from orchestrator.client.file_trust.private_files import (
    UnsafeFile,
    ensure_private_dir,
    open_regular,
    write_all,
)

if TYPE_CHECKING:
    from orchestrator.core.tool import Tool

AUDIT_FILE = "audit.jsonl"
_LOCK_FILE = ".audit.lock"
#: rotated generations kept (``audit.jsonl.1`` … ``.3``)
KEEP = 3
#: arguments that name what a call acts on
TARGET_PARAMS = ("workspace", "tab", "pane", "agent", "target", "name")
#: Herdr's ids and ours: written as they are (nothing else is)
_ID = re.compile(r"w[0-9]{1,9}(:[tp][0-9]{1,9})?|[pt]_[0-9]{1,9}_[0-9]{1,9}|t-[0-9a-f]{12}")
_CODE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")


def digest(value: object) -> dict[str, Any]:
    """``{"sha256": …, "len": …}`` of a string, or of any other value's JSON."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    data = text.encode("utf-8", "surrogatepass")
    return {"sha256": hashlib.sha256(data).hexdigest(), "len": len(text)}


def _target(value: object) -> object:
    if isinstance(value, str) and _ID.fullmatch(value):
        return value
    return digest(value)


def _arg(schema: object, value: object) -> object:
    if value is None or isinstance(value, bool | int | float):
        return value
    enum = schema.get("enum") if isinstance(schema, Mapping) else None
    if isinstance(value, str) and isinstance(enum, list) and value in enum:
        return value
    return digest(value)


def _error_code(result: Mapping[str, Any]) -> str | None:
    """The failure's code in each family's place: ``errorCode`` (low-level), ``error.code``
    (agent tools), the runner's ``error.details.code`` or else the structured error's
    ``category`` (managed-agent tools)."""
    code = result.get("errorCode")
    error = result.get("error")
    if code is None and isinstance(error, Mapping):
        details = error.get("details")
        code = error.get("code")
        if code is None and isinstance(details, Mapping):
            code = details.get("code")
        if code is None:
            code = error.get("category")
    if code is None:
        return None
    text = str(code)
    return text if _CODE.fullmatch(text) else "sha256:" + digest(text)["sha256"][:12]


def entry(
    tool: Tool,
    arguments: object,
    *,
    caller: str,
    outcome: str,
    result: Mapping[str, Any],
    duration_s: float,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """The audit line of one call (see the module docstring for what is kept and how)."""
    props = tool.input_schema.get("properties")
    known: Mapping[str, Any] = props if isinstance(props, Mapping) else {}
    given: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
    targets = {k: _target(v) for k, v in given.items() if k in TARGET_PARAMS and k in known}
    args = {k: _arg(known[k], v) for k, v in given.items() if k in known and k not in TARGET_PARAMS}
    line: dict[str, Any] = {
        "time": (now or dt.datetime.now(dt.UTC)).isoformat(timespec="milliseconds"),
        "tool": tool.name,
        "risk": tool.risk,
        "caller": caller,
        "outcome": outcome,
        "errorCode": _error_code(result),
        "durationMs": round(duration_s * 1000),
        "targets": targets,
        "args": args,
    }
    unknown = sum(1 for k in given if k not in known)
    if unknown:
        line["unknownArgs"] = unknown
    if not isinstance(arguments, Mapping):
        line["argumentsNotObject"] = True
    return line


def _open_append(path: Path) -> int:
    """``path`` opened for appending: created 0600, never through a link, a regular file of
    ours (another mode is set to 0600):
    :func:`orchestrator.client.file_trust.ownership.open_own_append`."""
    try:
        return open_own_append(path, lambda _problem, _info: _not_ours(path))
    except UnsafeFile:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP or path.is_symlink():  # a link in its place
            raise UnsafeFile(f"{path}: is a symbolic link; refusing to follow it") from None
        raise


def _not_ours(path: Path) -> UnsafeFile:
    return UnsafeFile(f"{path}: not a regular file of ours; refusing to write to it")


def _rotate(path: Path) -> None:
    for n in range(KEEP - 1, 0, -1):
        older = path.with_name(f"{path.name}.{n}")
        if older.exists() or older.is_symlink():
            older.replace(path.with_name(f"{path.name}.{n + 1}"))
    path.replace(path.with_name(f"{path.name}.1"))


@contextlib.contextmanager
def _locked(state_dir: Path) -> Iterator[None]:
    with locks.held(state_dir / _LOCK_FILE):
        yield


def audit_path(state_dir: Path) -> Path:
    """Where the audit log of ``state_dir`` is."""
    return state_dir / AUDIT_FILE


def append(state_dir: Path, line: Mapping[str, Any], max_bytes: int) -> None:
    """Append ``line`` to the audit log of ``state_dir``, rotating it first when the line
    would take it past ``max_bytes``."""
    ensure_private_dir(state_dir)
    data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    path = audit_path(state_dir)
    with _locked(state_dir):
        fd = _open_append(path)
        try:
            size = os.fstat(fd).st_size
            if size and size + len(data) > max_bytes:
                os.close(fd)
                fd = -1
                _rotate(path)
                fd = _open_append(path)
            write_all(fd, data)
        finally:
            if fd >= 0:
                os.close(fd)


# -- reading (``herdr-orchestrator audit``) ---------------------------------------------------


def _open_read(path: Path) -> int | None:
    """``path`` opened for reading, never through a link, a regular file only (None: absent)."""
    try:
        return open_regular(path)
    except FileNotFoundError:
        return None


def size_of(path: Path) -> int:
    """The log's size now (0 when it does not exist): where a follow starts."""
    try:
        return path.lstat().st_size
    except FileNotFoundError:
        return 0


def last_lines(
    path: Path, count: int, *, end: int | None = None, chunk: int = 64 * 1024
) -> list[str]:
    """The last ``count`` lines of the audit log at ``path`` before byte ``end`` (default:
    its end; none when it does not exist), read from the end: a large log is not loaded."""
    fd = _open_read(path)
    if fd is None or count <= 0:
        if fd is not None:
            os.close(fd)
        return []
    try:
        size = os.fstat(fd).st_size
        end = size if end is None else min(end, size)
        data = b""
        while end > 0 and data.count(b"\n") <= count:
            start = max(0, end - chunk)
            data = os.pread(fd, end - start, start) + data
            end = start
    finally:
        os.close(fd)
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[-count:]


def follow(
    path: Path,
    emit: Callable[[str], None],
    *,
    keep_going: Callable[[], bool],
    since: int | None = None,
    poll_s: float = 0.2,
) -> None:
    """Emit every line appended to ``path`` after byte ``since`` (default: its end now) while
    ``keep_going()``; a rotated log (a new file at ``path``) is followed from its first line."""
    fd = _open_read(path)
    offset = since if since is not None else (os.fstat(fd).st_size if fd is not None else 0)
    pending = b""
    try:
        while keep_going():
            if fd is None:
                fd, offset = _open_read(path), 0
            if fd is not None:
                chunk = os.pread(fd, 64 * 1024, offset)
                offset += len(chunk)
                pending += chunk
                *whole, pending = pending.split(b"\n")
                for line in whole:
                    emit(line.decode("utf-8", "replace"))
                if chunk:
                    continue
                try:
                    rotated = path.lstat().st_ino != os.fstat(fd).st_ino
                except FileNotFoundError:
                    rotated = True
                if rotated:
                    os.close(fd)
                    fd, pending = None, b""
                    continue
            time.sleep(poll_s)
    finally:
        if fd is not None:
            os.close(fd)


__all__ = [
    "AUDIT_FILE",
    "KEEP",
    "TARGET_PARAMS",
    "append",
    "audit_path",
    "digest",
    "entry",
    "follow",
    "last_lines",
    "size_of",
]
