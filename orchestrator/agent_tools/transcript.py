"""Pages of a pi session transcript (``herdr_read_agent``) and the final assistant message.

pi writes one version-3 JSONL session file per session (reference ``pi-agent.md``): a
``session`` header, then tree entries linked by ``parentId``. This module turns the file
into the flat list of messages a model can page through.

**What a "turn" is.** The seed pages by "turn" (``from`` = first turn index, ``limit`` =
turns per page). Here a turn is ONE transcript message: a user prompt, one assistant message
(with the tool calls it made), one tool result, or one system note. The other reading — a
user prompt plus everything that followed — makes a page's size unbounded (one prompt can
drive hundreds of tool calls), so ``limit`` would bound nothing and a single "turn" could
blow the caller's context. With one message per turn a page is at most ``limit`` messages
of at most :data:`MAX_MESSAGE_CHARS` characters each, indices are stable while the file
grows (messages are only ever appended), and ``prompt`` on every message still says which
user prompt it belongs to.

Reading rules (all from pi's own behaviour): only the active branch counts (the path from
the newest entry back to the root, so abandoned branches after ``/tree`` navigation are not
shown); a torn last line is ignored, because pi may be appending while we read; pi creates
the file lazily, so a missing or empty file means "no transcript yet"
(:class:`NoTranscript`); thinking blocks are omitted (they are the model's scratch work and
can be huge); images become ``[image]``.

**The file is not trusted.** Its path comes from Herdr and the agent, so it is read like a
child's artifact (``core.safe_fs``): a symbolic link, a FIFO or anything but a regular file is
not read (no transcript; the reason is said), and at most :data:`MAX_SESSION_BYTES` are read —
of a larger file its last part, from the first whole line (older messages are then not in the
pages, and the page's indices count from there).
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from orchestrator.agent_tools.remote_files import LocalFiles, RemoteFiles

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "MAX_MESSAGE_CHARS",
    "MAX_SESSION_BYTES",
    "NO_TRANSCRIPT",
    "LastAssistant",
    "NoTranscript",
    "PromptAnswer",
    "ToolCall",
    "TranscriptMessage",
    "TranscriptPage",
    "answer_after",
    "answer_to",
    "last_assistant_message",
    "load_messages",
    "read_entries",
    "read_transcript",
    "tool_detail",
    "user_count",
]

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_MESSAGE_CHARS = 6000
DETAIL_CHARS = 160
NO_TRANSCRIPT = "NO_TRANSCRIPT"
#: The most of a session file one read takes (its tail when the file is larger).
MAX_SESSION_BYTES = 64 << 20

Role = Literal["user", "assistant", "tool", "system"]


class ToolCall(TypedDict):
    """One tool call an assistant message made: the tool and a one-line argument preview."""

    name: str
    detail: str


class TranscriptMessage(TypedDict):
    """One turn of the transcript, as ``herdr_read_agent`` returns it."""

    index: int
    role: Role
    text: str
    toolCalls: list[ToolCall]
    prompt: int
    """Index (0-based) of the user prompt this message belongs to; -1 before the first."""
    timestamp: str | None
    truncated: NotRequired[bool]
    chars: NotRequired[int]
    """The untruncated length of ``text``, present only when ``truncated``."""
    toolName: NotRequired[str]
    isError: NotRequired[bool]
    durationMs: NotRequired[int | None]
    stopReason: NotRequired[str]
    errorMessage: NotRequired[str]


TranscriptPage = TypedDict(
    "TranscriptPage",
    {
        "sessionPath": str,
        "total": int,
        "from": int,
        "limit": int,
        "messages": list[TranscriptMessage],
        "nextFrom": int | None,
        "prevFrom": int | None,
    },
)
"""A page of messages plus the cursors to the neighbouring pages (``from`` is a keyword)."""


class NoTranscript(Exception):
    """There is no session file to read (``NO_TRANSCRIPT``), with the task's recorded error."""

    code = NO_TRANSCRIPT

    def __init__(self, message: str, *, path: str | None, task_error: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.task_error = task_error

    def to_json(self) -> dict[str, Any]:
        """The error as a tool returns it."""
        return {
            "code": self.code,
            "message": self.message,
            "sessionPath": self.path,
            "taskError": self.task_error,
        }


@dataclass(frozen=True)
class LastAssistant:
    """The newest assistant message of a session: what result harvesting reports.

    ``final`` is false while the agent is between a tool call and its result
    (``stopReason == "toolUse"``): the text is then interim, not the answer.
    """

    text: str
    stop_reason: str | None
    error: str | None
    timestamp: str | None
    entry_id: str | None

    @property
    def final(self) -> bool:
        """The turn ended here (stop, length, error or aborted), not at a tool call."""
        return self.stop_reason != "toolUse"

    @property
    def failed(self) -> bool:
        """pi marks a failed turn with ``stopReason: "error"``."""
        return self.stop_reason == "error"


# -- reading the file ---------------------------------------------------------------------


def read_entries(path: str | Path, *, files: RemoteFiles | None = None) -> list[dict[str, Any]]:
    """Every JSON object line of the file after the header, in file order.

    One ``read`` of the whole file gives a consistent prefix even while pi appends; a last
    line without its newline is used only if it parses (pi writes each line in one call, so
    a torn line simply fails to parse). Lines that are not JSON objects are skipped. Raises
    ``FileNotFoundError``, or ``UnsafeFile`` for anything but a regular file.
    ``files``: where the session file is (this host by default, or a machine over SSH).
    """
    read = (files or LocalFiles()).read_bounded(str(path), MAX_SESSION_BYTES, tail=True)
    data = read.data
    if read.offset > 0:
        data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""  # from a whole line
    entries: list[dict[str, Any]] = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(entry, dict) and entry.get("type") != "session":
            entries.append(entry)
    return entries


def _active_branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The path from the newest entry back to the root, oldest first.

    pi appends every entry under the current leaf, so the newest entry is the leaf of the
    branch the user is on. If the chain is broken (an entry without an ``id``, a parent that
    is not in the file) the file order is the best answer left.
    """
    by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}
    if not entries or len(by_id) != len(entries):
        return entries
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    node: dict[str, Any] | None = entries[-1]
    while node is not None:
        node_id = node["id"]
        if node_id in seen:
            return entries  # a cycle: not a tree pi wrote
        seen.add(node_id)
        path.append(node)
        parent = node.get("parentId")
        if parent is None:
            break
        node = by_id.get(parent)
        if node is None:
            return entries
    path.reverse()
    return path


# -- rendering ----------------------------------------------------------------------------

_SPACE = re.compile(r"\s+")


def _one_line(text: str, limit: int = DETAIL_CHARS) -> str:
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_DETAIL_KEYS = ("command", "path", "file_path", "filePath", "pattern", "query", "url", "glob")


def tool_detail(name: str, arguments: Any) -> str:
    """A one-line preview of a tool call's arguments.

    The bash command for ``bash``, the path for file tools (``read``, ``edit``, ``write``),
    the pattern (and path) for search tools; otherwise the first string argument, else the
    compact JSON of the arguments.
    """
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return _one_line(arguments)
    if not isinstance(arguments, Mapping):
        return "" if arguments is None else _one_line(json.dumps(arguments))
    if name == "bash" and isinstance(arguments.get("command"), str):
        return _one_line(arguments["command"])
    pattern = arguments.get("pattern")
    where = arguments.get("path")
    if isinstance(pattern, str) and isinstance(where, str):
        return _one_line(f"{pattern} in {where}")
    for key in _DETAIL_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return _one_line(value)
    for value in arguments.values():
        if isinstance(value, str) and value:
            return _one_line(value)
    return _one_line(json.dumps(arguments, ensure_ascii=False, sort_keys=True))


def _content_text(content: Any) -> str:
    """Text of a message's content: a string, or text blocks joined with newlines."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, Sequence):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind == "image":
                parts.append("[image]")
    return "\n".join(parts)


def _tool_calls(content: Any) -> list[ToolCall]:
    calls: list[ToolCall] = []
    if isinstance(content, Sequence) and not isinstance(content, str):
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "toolCall":
                name = str(block.get("name") or "?")
                calls.append({"name": name, "detail": tool_detail(name, block.get("arguments"))})
    return calls


def _system_text(message: Mapping[str, Any]) -> str:
    """pi 1.6's system-prompt message: say which sections it has; show an appended one."""
    text = _content_text(message.get("content"))
    sections = message.get("sections")
    if text or not isinstance(sections, Mapping):
        return text
    names = ", ".join(str(k) for k in sections)
    rendered = f"System prompt (sections: {names})"
    appended = sections.get("append")
    if isinstance(appended, str) and appended:
        rendered += "\nAppended:\n" + appended
    return rendered


def _truncate(message: TranscriptMessage) -> TranscriptMessage:
    text = message["text"]
    if len(text) <= MAX_MESSAGE_CHARS:
        return message
    marker = f"\n[… truncated: {len(text)} characters, showing the first {{}}]"
    keep = MAX_MESSAGE_CHARS - len(marker.format(MAX_MESSAGE_CHARS))
    message["text"] = text[:keep] + marker.format(keep)
    message["truncated"] = True
    message["chars"] = len(text)
    return message


def _message_of(entry: Mapping[str, Any]) -> tuple[Role, dict[str, Any]] | None:
    """The role and the extra fields of one entry, or ``None`` if it is not a message."""
    kind = entry.get("type")
    if kind == "compaction":
        summary = str(entry.get("summary") or "")
        return "system", {"text": "Earlier messages were compacted. Summary:\n" + summary}
    if kind == "branch_summary":
        return "system", {"text": "Summary of an abandoned branch:\n" + str(entry.get("summary"))}
    if kind == "custom_message":
        if entry.get("display") is False:
            return None
        return "system", {"text": _content_text(entry.get("content"))}
    if kind != "message" or not isinstance(entry.get("message"), Mapping):
        return None
    message: Mapping[str, Any] = entry["message"]
    role = message.get("role")
    if role == "user":
        return "user", {"text": _content_text(message.get("content"))}
    if role == "assistant":
        content = message.get("content")
        extra: dict[str, Any] = {"text": _content_text(content), "toolCalls": _tool_calls(content)}
        if isinstance(message.get("stopReason"), str):
            extra["stopReason"] = message["stopReason"]
        if isinstance(message.get("errorMessage"), str):
            extra["errorMessage"] = message["errorMessage"]
        return "assistant", extra
    if role == "toolResult":
        duration = message.get("durationMs")
        return "tool", {
            "text": _content_text(message.get("content")),
            "toolName": str(message.get("toolName") or "?"),
            "isError": bool(message.get("isError")),
            "durationMs": duration if isinstance(duration, int) else None,
        }
    if role == "bashExecution":  # the user's own `!command` in pi
        code = message.get("exitCode")
        command = str(message.get("command") or "")
        return "tool", {
            "text": f"$ {command}\n{message.get('output') or ''}",
            "toolName": "bash",
            "isError": bool(message.get("cancelled")) or (isinstance(code, int) and code != 0),
            "durationMs": None,
        }
    if role == "system":
        return "system", {"text": _system_text(message)}
    if role in ("custom", "branchSummary", "compactionSummary"):
        text = message.get("summary") if role != "custom" else None
        return "system", {"text": str(text) if text else _content_text(message.get("content"))}
    return None


def load_messages(path: str | Path, *, files: RemoteFiles | None = None) -> list[TranscriptMessage]:
    """All messages of the active branch, indexed from 0 (untruncated text)."""
    messages: list[TranscriptMessage] = []
    prompt = -1
    for entry in _active_branch(read_entries(path, files=files)):
        found = _message_of(entry)
        if found is None:
            continue
        role, extra = found
        if role == "user":
            prompt += 1
        stamp = entry.get("timestamp")
        message: TranscriptMessage = {
            "index": len(messages),
            "role": role,
            "text": "",
            "toolCalls": [],
            "prompt": prompt,
            "timestamp": stamp if isinstance(stamp, str) else None,
        }
        message.update(extra)  # type: ignore[typeddict-item]
        messages.append(message)
    return messages


# -- the two public reads ------------------------------------------------------------------


def _remote_size(file: Path, files: RemoteFiles, task_error: str | None) -> int:
    """The session's size on a machine over SSH (-1: missing)."""
    try:
        return files.read_bounded(str(file), 0).size
    except FileNotFoundError:
        return -1
    except OSError as exc:  # a link or FIFO there, or the machine cannot be reached
        raise NoTranscript(
            f"the pi session file {file} on {files.machine} could not be read: "
            f"{exc.strerror or exc}",
            path=str(file),
            task_error=task_error,
        ) from None


def _require_file(
    path: str | Path | None, task_error: str | None, files: RemoteFiles | None = None
) -> Path:
    if path is None:
        raise NoTranscript(
            "this task has no pi session file"
            + (f"; the task failed: {task_error}" if task_error else ""),
            path=None,
            task_error=task_error,
        )
    file = Path(path)
    if files is not None and not isinstance(files, LocalFiles):
        size = _remote_size(file, files, task_error)
    else:
        size = _local_size(file, task_error)
    if size <= 0:
        state = "does not exist" if size < 0 else "is empty"
        raise NoTranscript(
            f"the pi session file {file} {state} (pi writes it on the first prompt)"
            + (f"; the task failed: {task_error}" if task_error else ""),
            path=str(file),
            task_error=task_error,
        )
    return file


def _local_size(file: Path, task_error: str | None) -> int:
    """The session's size here (-1: missing); a link or FIFO is refused, never followed."""
    try:
        info = file.lstat()
    except FileNotFoundError:
        return -1
    if not stat.S_ISREG(info.st_mode):
        raise NoTranscript(
            f"the pi session file {file} is not a regular file (a link, a FIFO, ...): not read",
            path=str(file),
            task_error=task_error,
        )
    return info.st_size


def read_transcript(
    path: str | Path | None,
    *,
    from_: int = 0,
    limit: int = DEFAULT_LIMIT,
    task_error: str | None = None,
    files: RemoteFiles | None = None,
) -> TranscriptPage:
    """One page of the transcript at ``path``.

    ``from_`` is the first message index; a negative value counts from the end (``-20`` =
    the last twenty), which is how a caller reads the latest page without knowing ``total``.
    ``limit`` is clamped to ``1..MAX_LIMIT``. ``nextFrom``/``prevFrom`` are ``None`` at the
    ends. Raises :class:`NoTranscript` (with ``task_error``, the task's recorded failure)
    when there is no session file or it is still empty.
    """
    file = _require_file(path, task_error, files)
    try:
        messages = load_messages(file, files=files)
    except OSError as exc:  # swapped or removed since the check
        raise NoTranscript(
            f"the pi session file {file} could not be read: {exc.strerror or exc}",
            path=str(file),
            task_error=task_error,
        ) from None
    total = len(messages)
    limit = max(1, min(int(limit), MAX_LIMIT))
    start = int(from_)
    if start < 0:
        start = max(0, total + start)
    page = [_truncate(m) for m in messages[start : start + limit]]
    end = start + len(page)
    return {
        "sessionPath": str(file),
        "total": total,
        "from": start,
        "limit": limit,
        "messages": page,
        "nextFrom": end if end < total else None,
        "prevFrom": max(0, min(start, total) - limit) if start > 0 and total > 0 else None,
    }


def _assistant(entry: Mapping[str, Any]) -> LastAssistant | None:
    """The assistant message of one entry, or ``None`` if the entry is something else."""
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, Mapping):
        return None
    if message.get("role") != "assistant":
        return None
    stop = message.get("stopReason")
    error = message.get("errorMessage")
    stamp = entry.get("timestamp")
    entry_id = entry.get("id")
    return LastAssistant(
        text=_content_text(message.get("content")),
        stop_reason=stop if isinstance(stop, str) else None,
        error=error if isinstance(error, str) else None,
        timestamp=stamp if isinstance(stamp, str) else None,
        entry_id=entry_id if isinstance(entry_id, str) else None,
    )


def _user_text(entry: Mapping[str, Any]) -> str | None:
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, Mapping):
        return None
    if message.get("role") != "user":
        return None
    return _content_text(message.get("content"))


def last_assistant_message(
    path: str | Path | None, *, files: RemoteFiles | None = None
) -> LastAssistant | None:
    """The newest assistant message on the active branch, or ``None`` if there is none yet.

    The text is the message's text blocks joined with newlines (pi's final answer), full
    length: truncation for the model is the caller's job (``maxResultChars``). Safe to call
    while pi appends (a torn last line is ignored); a missing file is ``None``, not an error.
    ``files``: where the session is (this host by default, or a machine over SSH).
    """
    if path is None:
        return None
    try:
        entries = read_entries(path, files=files)
    except OSError:  # missing, or not a regular file (never followed, never blocked on)
        return None
    for entry in reversed(_active_branch(entries)):
        found = _assistant(entry)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class PromptAnswer:
    """What a session says about one prompt of ours (:func:`answer_to`).

    ``prompted``: a user message holding the prompt's marker is on the active branch (the
    prompt reached pi). ``answer``: the final assistant message (any ``stopReason`` but
    ``toolUse``) after the newest user message since then, i.e. the end of the latest turn
    that our prompt, or a later message to the same agent, started; ``None`` while that turn
    has not ended. ``latest``: the newest assistant message since the prompt, final or not.
    """

    prompted: bool
    answer: LastAssistant | None = None
    latest: LastAssistant | None = None


def user_count(path: str | Path, *, files: RemoteFiles | None = None) -> int:
    """How many user messages the session's active branch holds (0 for a missing file):
    taken before a message is typed, it marks where that message's turn must begin
    (:func:`answer_after`). ``OSError`` for a path that is not a regular file."""
    try:
        entries = read_entries(path, files=files)
    except FileNotFoundError:
        return 0
    return sum(1 for entry in _active_branch(entries) if _user_text(entry) is not None)


def answer_after(
    path: str | Path, users_before: int, *, files: RemoteFiles | None = None
) -> PromptAnswer:
    """What the session says of a message typed when it held ``users_before`` user
    messages (:func:`user_count`): ``prompted`` once a newer user message is on the active
    branch, and ``answer`` the final assistant message after the newest one. An agent that
    went idle without taking the message (or whose idle status predates it) still shows the
    older answer last; this tells the two apart, where the last assistant message cannot."""
    try:
        entries = read_entries(path, files=files)
    except FileNotFoundError:
        return PromptAnswer(prompted=False)
    branch = _active_branch(entries)
    users = [i for i, entry in enumerate(branch) if _user_text(entry) is not None]
    if len(users) <= users_before:
        return PromptAnswer(prompted=False)
    latest: LastAssistant | None = None
    for entry in branch[users[users_before] + 1 :]:
        latest = _assistant(entry) or latest
    answer: LastAssistant | None = None
    for entry in branch[users[-1] + 1 :]:
        answer = _assistant(entry) or answer
    return PromptAnswer(True, answer if answer is not None and answer.final else None, latest)


def answer_to(
    path: str | Path, marker: str, *, files: RemoteFiles | None = None
) -> PromptAnswer | None:
    """Whether the session at ``path`` holds our prompt (the first user message containing
    ``marker``) and the answer to it; ``None`` when the file does not exist (yet).

    This is the evidence behind a pi task's ``completed``: Herdr's idle status alone says
    only that pi is not working, not that it answered *our* prompt. ``files``: where the
    session is (this host by default, or the task's machine over SSH).
    """
    try:
        entries = read_entries(path, files=files)
    except FileNotFoundError:
        return None
    branch = _active_branch(entries)
    users = [i for i, entry in enumerate(branch) if _user_text(entry) is not None]
    start = next((i for i in users if marker in (_user_text(branch[i]) or "")), None)
    if start is None:
        return PromptAnswer(prompted=False)
    last_user = users[-1]
    latest: LastAssistant | None = None
    for entry in branch[start + 1 :]:
        latest = _assistant(entry) or latest
    answer: LastAssistant | None = None
    for entry in branch[last_user + 1 :]:
        answer = _assistant(entry) or answer
    return PromptAnswer(True, answer if answer is not None and answer.final else None, latest)
