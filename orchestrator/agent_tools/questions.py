"""The question a task's agent asked: from its dialog on screen, or from the protocol.

Two ways an agent asks, and both end as a ``blocked`` result whose ``question`` is the
question itself (never the raw screen):

* **A dialog** (a permission prompt, pi's ask): Herdr shows the agent ``blocked``; the
  question is read off the visible screen (:func:`.screen_text.screen_question`).
* **The protocol** the envelope teaches: the child appends a ``BLOCKED`` message to its
  inbox and ends its turn asking the question. Herdr then shows the agent ``done``/``idle``
  — a finished turn — so without this check the task would read ``completed``. A final
  message whose first line is the ``BLOCKED`` header, or a ``BLOCKED`` inbox message written
  during the current turn and not followed by ``COMPLETE`` or ``REVIEW_REQUEST``, makes the
  turn ``blocked``.

"The current turn" starts where the inbox ended when the last prompt was sent (the record's
``turnInboxOffset``, set by :func:`mark_turn_start`; 0 for the kickoff), so a question that
was already answered does not block the next turn again.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from orchestrator.agent_tools import screen_text
from orchestrator.agent_tools.inbox import MAX_LIMIT, inbox_path, read_inbox
from orchestrator.agent_tools.records import TaskRecord, TaskStore
from orchestrator.agent_tools.remote_files import LocalFiles, RemoteFiles
from orchestrator.client.errors import ClientError
from orchestrator.client.sync import HerdrClient

__all__ = [
    "TURN_INBOX_OFFSET",
    "AskedQuestion",
    "mark_turn_start",
    "protocol_question",
    "screen_question",
]

#: The record key (in ``extra``) of the inbox offset at the start of the current turn.
TURN_INBOX_OFFSET = "turnInboxOffset"
#: Said when an agent reported BLOCKED without any question text.
NO_TEXT = "(the agent reported BLOCKED without a question; read its final message or pane)"
_PROTOCOL_TYPES = ("BLOCKED", "COMPLETE", "REVIEW_REQUEST")


@dataclass(frozen=True)
class AskedQuestion:
    """A question found in the protocol: its text and where it was found (evidence)."""

    text: str
    source: str
    detail: str
    path: str | None = None


def screen_question(client: HerdrClient, pane_id: str) -> str:
    """The question on a blocked agent's screen (the dialog's words only)."""
    try:
        text = client.pane_read(pane_id, "visible").text
    except ClientError:
        return "(the agent is blocked; its screen could not be read)"
    return screen_text.screen_question(text) or "(the agent is blocked; no question on screen)"


def _turn_offset(record: TaskRecord) -> int:
    value = record.extra.get(TURN_INBOX_OFFSET, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _inbox_question(
    record: TaskRecord, artifact_root: Path, files: RemoteFiles | None
) -> AskedQuestion | None:
    path = inbox_path(record.artifact_path(artifact_root))
    offset = _turn_offset(record)
    last = None
    for _ in range(1000):  # bounded: MAX_LIMIT messages a read
        read = read_inbox(path, offset, MAX_LIMIT, files=files)
        for message in read.messages:
            if message["type"] in _PROTOCOL_TYPES:
                last = message
        if not read.more or read.next_offset <= offset:
            break
        offset = read.next_offset
    if last is None or last["type"] != "BLOCKED":
        return None
    text = screen_text.blocked_header_question(last["text"])
    question = (text if text is not None else last["text"]).strip()
    return AskedQuestion(
        question or NO_TEXT, "inbox", "BLOCKED message in the inbox", path=str(path)
    )


def protocol_question(
    record: TaskRecord,
    final_message: str | None,
    artifact_root: Path,
    *,
    final_source: str = "session",
    files: RemoteFiles | None = None,
) -> AskedQuestion | None:
    """The question of a turn that ended reporting ``BLOCKED`` (inbox message or final
    message header, the message read from ``final_source``: ``session`` or ``pane``), or
    None. The inbox's text is preferred: the envelope asks for the
    question there; the final message's body is used when the inbox has none. ``files``:
    where the inbox is (this host by default, or the task's machine over SSH)."""
    from_inbox = None
    with contextlib.suppress(OSError):
        from_inbox = _inbox_question(record, artifact_root, files)
    header = screen_text.blocked_header_question(final_message)
    if from_inbox is not None and (from_inbox.text != NO_TEXT or not header):
        return from_inbox
    if header is not None:
        return AskedQuestion(
            header or NO_TEXT,
            final_source,
            "the final message starts with the BLOCKED header",
        )
    return None


def mark_turn_start(
    store: TaskStore,
    record: TaskRecord,
    artifact_root: Path,
    *,
    files: RemoteFiles | None = None,
) -> TaskRecord:
    """Remember where the inbox ends as a new prompt is sent (see the module docstring);
    ``files``: where the inbox is (this host by default)."""
    path = inbox_path(record.artifact_path(artifact_root))
    try:
        size = (files or LocalFiles()).read_bounded(str(path), 0).size
    except OSError:
        size = 0
    return store.modify(
        record.task_id, lambda current: {"extra": {**current.extra, TURN_INBOX_OFFSET: size}}
    )
