"""What the mailbox tests share: a mailbox with a ticking clock, where a record lies on disk,
and records written straight into a box, as a hostile child can write them."""

from __future__ import annotations

import uuid
from pathlib import Path

from orchestrator.managed.mailbox import Kind, Mailbox, Message, box_of


class Clock:
    """A clock one second further on at each reading."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def make(root: Path, label: str = "impl") -> Mailbox:
    return Mailbox(root, "w1", label, clock=Clock())


def record_path(box: Mailbox, message: Message, *, processed: bool = False) -> Path:
    """Where ``message`` lies: its box, or that box's ``processed/`` twin."""
    sub = box_of(message.kind).value
    base = box.path / "processed" / sub if processed else box.path / sub
    return base / f"{message.message_id}.json"


def forged(kind: Kind, assignment: str, text: str, seq: int) -> Message:
    """A valid record of ``kind`` (a reply answers a random ask; a result is completed)."""
    return Message(
        kind=kind,
        message_id=str(uuid.uuid4()),
        assignment_id=assignment,
        text=text,
        created_at=1.0,
        seq=seq,
        ask_id=str(uuid.uuid4()) if kind is Kind.REPLY else None,
        status="completed" if kind is Kind.RESULT else None,
    )


def plant(box: Mailbox, message: Message) -> None:
    """Write ``message`` straight into its box, as a hostile child can."""
    path = record_path(box, message)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(message.encode())
