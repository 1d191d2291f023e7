"""Reading a task's ``<artifactDir>/inbox.ndjson`` (``herdr_inbox``): child → DSH messages.

The task envelope asks the child to append one JSON object per line,
``{"ts": "<ISO time>", "type": "<TYPE>", "text": "…"}``. The orchestrator never rewrites the
file; it remembers a byte offset per task (in the task record) and reads forward from it.

Rules, and why:

* **Offsets, not line numbers.** A byte offset survives restarts and needs no re-scan of what
  was already read. :func:`read_inbox` returns ``nextOffset``: a consuming read stores it, a
  peek does not, so consumed messages are never replayed and peeks repeat.
* **A torn last line is not consumed.** The child may be mid-write; bytes after the last
  newline stay unread unless they already form a complete JSON object (a child that forgets
  the final newline would otherwise lose its last message until it writes another; a JSON
  object cannot be a prefix of a longer line that is still valid, so accepting it is safe —
  the newline that follows later is just an empty line).
* **Malformed lines are reported once and skipped**, so one bad line never blocks the inbox
  and is never replayed to a consuming reader.
* **Unknown types become ``NOTE``**, keeping what the child wrote in ``originalType``; the
  vocabulary is small on purpose (seed 000 protocol headers).
* **The file is the child's, so it is read defensively** (``core.safe_fs``): a symbolic link,
  a FIFO or anything but a regular file is not read (``error`` says why; the tool reports it
  as a warning), and one read takes at most :data:`MAX_READ_BYTES` from the offset (``more``
  says there is more). A single line longer than that is reported malformed and skipped to
  its end, so a huge or sparse file costs bounded memory and never wedges the offset.
* **Long-poll without inotify.** The standard library has no file-change notification, so
  :func:`wait_for_messages` polls the file's size — one ``stat`` per tick, the interval
  growing from 20 ms to 250 ms while nothing changes (low latency right after a write is
  expected, little work during a long quiet wait) — and re-reads only when the size changed.
  A caller can pass ``wake`` (a :class:`threading.Event`, e.g. set by a Herdr event
  subscription when the pane closes) or ``stop`` (a predicate) to end the wait early.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from orchestrator.agent_tools.remote_files import LocalFiles, RemoteFiles

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "MAX_READ_BYTES",
    "MESSAGE_TYPES",
    "InboxMessage",
    "InboxRead",
    "Malformed",
    "inbox_path",
    "normalize_type",
    "read_inbox",
    "wait_for_messages",
]

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
INBOX_FILE = "inbox.ndjson"
MESSAGE_TYPES = ("BLOCKED", "REVIEW_REQUEST", "COMPLETE", "NOTE", "ACCEPT", "REJECT")
PREVIEW_CHARS = 200
#: The most one read takes from the file (and the longest line it accepts).
MAX_READ_BYTES = 1 << 20
_FIRST_POLL = 0.02
_MAX_POLL = 0.25

MessageType = Literal["BLOCKED", "REVIEW_REQUEST", "COMPLETE", "NOTE", "ACCEPT", "REJECT"]


class InboxMessage(TypedDict):
    """One message the child appended."""

    type: MessageType
    text: str
    ts: str | None
    offset: int
    """Byte offset of the line in the file (a stable message id within the task)."""
    originalType: NotRequired[str | None]
    """Present when ``type`` was normalized to ``NOTE``: what the child wrote (None if absent)."""
    path: NotRequired[str]
    """``COMPLETE``: the ``result.md`` path, from a ``path`` field or ``COMPLETE <path>`` text."""


class Malformed(TypedDict):
    """A line that is not a JSON object: where it is and what it starts with."""

    offset: int
    error: str
    preview: str


@dataclass
class InboxRead:
    """What one read found. ``offset`` is where it started, ``next_offset`` where it ended."""

    messages: list[InboxMessage] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    offset: int = 0
    next_offset: int = 0
    size: int = 0
    partial: bool = False
    """Bytes after ``next_offset`` that are not yet a complete line (a write in progress)."""
    more: bool = False
    """``limit`` (or :data:`MAX_READ_BYTES`) stopped the read before the end of the lines."""
    error: str | None = None
    """Why the file was not read at all (a link, a FIFO, ...); nothing was consumed."""

    def to_json(self) -> dict[str, Any]:
        """The read as a tool returns it."""
        return {
            "messages": list(self.messages),
            "malformed": list(self.malformed),
            "offset": self.offset,
            "nextOffset": self.next_offset,
            "partial": self.partial,
            "more": self.more,
        }


def inbox_path(artifact_dir: str | Path) -> Path:
    """Where the task envelope tells the child to append its messages."""
    return Path(artifact_dir) / INBOX_FILE


def normalize_type(value: Any) -> tuple[MessageType, bool]:
    """The protocol type for what the child wrote, and whether it was recognised.

    Case and surrounding blanks are forgiven (``" complete"`` is ``COMPLETE``); a header
    written with its argument (``"COMPLETE /x/result.md"``) counts by its first word.
    """
    if isinstance(value, str) and value.strip():
        head = value.strip().split()[0].upper()
        for known in MESSAGE_TYPES:
            if head == known:
                return known, True  # type: ignore[return-value]
    return "NOTE", False


def _message(data: dict[str, Any], offset: int) -> InboxMessage:
    raw_type = data.get("type")
    kind, known = normalize_type(raw_type)
    text = data.get("text", "")
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    ts = data.get("ts")
    message: InboxMessage = {
        "type": kind,
        "text": text,
        "ts": ts if isinstance(ts, str) else None,
        "offset": offset,
    }
    if not known:
        message["originalType"] = raw_type if isinstance(raw_type, str) else None
    if kind == "COMPLETE":
        path = data.get("path")
        if not isinstance(path, str) or not path:
            words = raw_type.split() if isinstance(raw_type, str) else []
            path = words[1] if len(words) > 1 else ""
        if not path and text.strip():
            path = text.strip().split()[0]
            if "/" not in path and not path.endswith(".md"):
                path = ""
        if path:
            message["path"] = path
    return message


def _parse(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except json.JSONDecodeError as exc:
        return None, f"not JSON: {exc.msg}"
    if not isinstance(data, dict):
        return None, f"not a JSON object: {type(data).__name__}"
    return data, ""


def _has_more(rest: bytes) -> bool:
    """Is there a line left that a next read would report?"""
    *complete, tail = rest.split(b"\n")
    if any(line.strip() for line in complete):
        return True
    return bool(tail.strip()) and _parse(tail)[0] is not None


def read_inbox(
    path: str | Path,
    offset: int = 0,
    limit: int = DEFAULT_LIMIT,
    *,
    files: RemoteFiles | None = None,
) -> InboxRead:
    """Messages from byte ``offset`` on, at most ``limit`` (clamped to ``1..MAX_LIMIT``), read
    where the task runs (``files``: this host by default, or a machine over SSH).

    A missing file is an empty inbox (the child has not written yet). An offset past the end
    of the file (the file was truncated or replaced) restarts at 0 rather than waiting
    forever for bytes that will never come. Malformed lines do not count towards ``limit``.
    """
    limit = max(1, min(int(limit), MAX_LIMIT))
    offset = max(0, int(offset))
    fs = files or LocalFiles()
    try:
        chunk = fs.read_bounded(str(path), MAX_READ_BYTES, offset=offset)
        if offset > chunk.size:
            offset = 0
            chunk = fs.read_bounded(str(path), MAX_READ_BYTES, offset=0)
    except FileNotFoundError:
        return InboxRead(offset=offset, next_offset=offset)
    except OSError as exc:
        return InboxRead(offset=offset, next_offset=offset, error=exc.strerror or str(exc))
    data = chunk.data
    result = InboxRead(offset=offset, next_offset=offset, size=chunk.size)
    position = 0
    while position < len(data):
        end = data.find(b"\n", position)
        complete = end >= 0
        line = data[position:end] if complete else data[position:]
        after = end + 1 if complete else len(data)
        if len(result.messages) >= limit:
            result.more = chunk.truncated or _has_more(data[position:])
            break
        if not line.strip():
            if complete:
                position = after
                result.next_offset = offset + position
                continue
            break  # only blanks after the last newline: nothing to consume yet
        if not complete and chunk.truncated:
            # cut by our bound, not by the writer: read on next time (or skip a huge line)
            if position == 0:
                _skip_huge_line(path, result, line, fs)
            else:
                result.more = True
            break
        parsed, error = _parse(line)
        if parsed is None and not complete:
            result.partial = True
            break
        if parsed is None:
            preview = line[:PREVIEW_CHARS].decode("utf-8", "replace")
            result.malformed.append(
                {"offset": offset + position, "error": error, "preview": preview}
            )
        else:
            result.messages.append(_message(parsed, offset + position))
        position = after
        result.next_offset = offset + position
    return result


def _skip_huge_line(path: str | Path, result: InboxRead, head: bytes, fs: RemoteFiles) -> None:
    """Report a line longer than :data:`MAX_READ_BYTES` as malformed and move past it: scan
    on, one bounded read at a time, to its newline (or to the end of the file)."""
    start = result.offset
    result.malformed.append(
        {
            "offset": start,
            "error": f"line longer than {MAX_READ_BYTES} bytes: skipped",
            "preview": head[:PREVIEW_CHARS].decode("utf-8", "replace"),
        }
    )
    position = start + len(head)
    while True:
        try:
            chunk = fs.read_bounded(str(path), MAX_READ_BYTES, offset=position)
        except OSError:
            break
        end = chunk.data.find(b"\n")
        if end >= 0:
            position += end + 1
            break
        position += len(chunk.data)
        if not chunk.truncated:
            break
    result.next_offset = position
    result.more = position < result.size


def _size(path: str | Path, files: RemoteFiles | None) -> int:
    """The inbox's size (-1: missing, -2: not readable now); a link is never followed."""
    if files is None or isinstance(files, LocalFiles):
        try:
            return Path(path).lstat().st_size  # the link itself: never followed
        except FileNotFoundError:
            return -1
    try:
        return files.read_bounded(str(path), 0).size
    except FileNotFoundError:
        return -1
    except OSError:  # a link, or the machine cannot be reached: read_inbox says which
        return -2


def wait_for_messages(
    sources: Sequence[tuple[str | Path, int]],
    timeout: float,
    *,
    limit: int = DEFAULT_LIMIT,
    wake: threading.Event | None = None,
    stop: Callable[[], bool] | None = None,
    clock: Callable[[], float] = time.monotonic,
    files: Sequence[RemoteFiles] | None = None,
) -> list[InboxRead]:
    """Long-poll several inboxes (``(path, offset)`` pairs) until one has something to report.
    ``files``: where each inbox is (one per source; this host by default; over SSH each look
    at a file's size is one SSH call, at the growing poll interval).

    Returns one :class:`InboxRead` per source, in order, as soon as any source has a message
    or a malformed line, or when ``timeout`` seconds pass, ``wake`` is set or ``stop()`` is
    true (then the reads are whatever is there, possibly empty). Never spins: each quiet tick
    sleeps (on ``wake`` when given), and a file is re-read only when its size changed.
    """
    deadline = clock() + max(0.0, timeout)
    sizes: list[int | None] = [None] * len(sources)
    reads = [InboxRead(offset=o, next_offset=o) for _, o in sources]
    interval = _FIRST_POLL
    event = wake if wake is not None else threading.Event()
    while True:
        for i, (path, offset) in enumerate(sources):
            fs = files[i] if files is not None else None
            size = _size(path, fs)
            if size != sizes[i]:
                sizes[i] = size
                reads[i] = read_inbox(path, offset, limit, files=fs)
                interval = _FIRST_POLL  # activity: look again soon
        if any(r.messages or r.malformed for r in reads):
            return reads
        remaining = deadline - clock()
        if remaining <= 0 or event.is_set() or (stop is not None and stop()):
            return reads
        event.wait(min(interval, remaining))
        interval = min(interval * 2, _MAX_POLL)
