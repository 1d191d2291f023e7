"""The child's ``state.json``: atomic private writes, and a reader that trusts nothing."""

from __future__ import annotations

import json
import os
import stat
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from orchestrator.managed.child_state import (
    STATE_FILE,
    STATE_LIMIT_BYTES,
    ChildState,
    read_state,
    write_state,
)
from orchestrator.managed.mailbox import MailboxError

RUN = str(uuid.uuid4())
STATE = ChildState(
    run_id=RUN,
    label="scout",
    workspace_id="w1",
    pane_id="w1:p3",
    owner_session_id="owner-1",
    pi_session_id="0190aaaa-0000-7000-8000-000000000000",
    pi_session_file="/home/u/.pi/agent/sessions/s.jsonl",
    cwd="/work",
    pid=1234,
    operation="working",
    active_request_id=str(uuid.uuid4()),
    completed_request_id=None,
    last_activity_at=1_764_600_000.5,
    updated_at=1_764_600_000.5,
)


def box(tmp_path: Path) -> Path:
    path = tmp_path / "mb"
    path.mkdir(mode=0o700)
    return path


def test_write_then_read_round_trips_privately(tmp_path: Path) -> None:
    mb = box(tmp_path)
    assert read_state(mb) is None
    write_state(mb, STATE)
    assert read_state(mb) == STATE
    assert stat.S_IMODE((mb / STATE_FILE).stat().st_mode) == 0o600
    raw = json.loads((mb / STATE_FILE).read_text())
    assert list(raw) == [
        "version", "runId", "label", "workspaceId", "paneId", "ownerSessionId", "piSessionId",
        "piSessionFile", "cwd", "pid", "operation", "activeRequestId", "completedRequestId",
        "lastActivityAt", "updatedAt",
    ]  # fmt: skip
    assert raw["version"] == 4
    changed = replace(STATE, operation="idle", active_request_id=None)
    write_state(mb, changed)
    assert read_state(mb) == changed
    assert [p.name for p in mb.iterdir()] == [STATE_FILE]  # no temp file left behind


def write_raw(mb: Path, data: bytes | str) -> None:
    (mb / STATE_FILE).write_bytes(data if isinstance(data, bytes) else data.encode())


def good() -> dict[str, Any]:
    return STATE.to_json()


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"{", "not UTF-8 JSON"),
        (b"\xff", "not UTF-8 JSON"),
        (b"[]", "not a JSON object"),
        (json.dumps({**good(), "extra": 1}), "unknown state field(s): extra"),
        (json.dumps({k: v for k, v in good().items() if k != "pid"}), "missing state field"),
        (json.dumps({**good(), "version": 5}), "version is 5"),
        (json.dumps({**good(), "version": True}), "version is True"),
        (json.dumps({**good(), "runId": "x"}), "runId"),
        (json.dumps({**good(), "label": "Bad"}), "label"),
        (json.dumps({**good(), "pid": 0}), "pid"),
        (json.dumps({**good(), "operation": "busy"}), "operation"),
        (json.dumps({**good(), "cwd": "rel"}), "cwd"),
        (json.dumps({**good(), "piSessionFile": 3}), "piSessionFile"),
        (json.dumps({**good(), "activeRequestId": "nope"}), "activeRequestId"),
        (json.dumps({**good(), "updatedAt": -1}), "updatedAt"),
        (json.dumps({**good(), "sessionRetired": "yes"}), "sessionRetired is not a boolean"),
        (json.dumps({**good(), "operation": "asking", "activeRequestId": None}), "asking"),
        (
            json.dumps({**good(), "completedRequestId": good()["activeRequestId"]}),
            "both active and completed",
        ),
        (b" " * (STATE_LIMIT_BYTES + 1), "over"),
    ],
)
def test_a_corrupt_state_is_an_internal_failure_naming_the_file(
    tmp_path: Path, data: bytes | str, needle: str
) -> None:
    mb = box(tmp_path)
    write_raw(mb, data)
    with pytest.raises(MailboxError) as caught:
        read_state(mb)
    assert caught.value.category == "internal_failure"
    assert needle in caught.value.message
    assert caught.value.path == str(mb / STATE_FILE)
    assert (mb / STATE_FILE).exists()  # left in place


def test_session_retired_is_optional_and_written_only_when_true(tmp_path: Path) -> None:
    mb = box(tmp_path)
    write_state(mb, STATE)
    assert "sessionRetired" not in json.loads((mb / STATE_FILE).read_text())
    retired = replace(STATE, session_retired=True)
    write_state(mb, retired)
    assert json.loads((mb / STATE_FILE).read_text())["sessionRetired"] is True
    assert read_state(mb) == retired


def test_a_symlinked_state_is_refused_not_followed(tmp_path: Path) -> None:
    mb = box(tmp_path)
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(good()))
    (mb / STATE_FILE).symlink_to(secret)
    with pytest.raises(MailboxError, match="symbolic link") as caught:
        read_state(mb)
    assert caught.value.category == "internal_failure"


def test_a_fifo_state_is_refused_without_blocking(tmp_path: Path) -> None:
    mb = box(tmp_path)
    os.mkfifo(mb / STATE_FILE)
    with pytest.raises(MailboxError, match="FIFO"):
        read_state(mb)


def test_writing_into_a_symlinked_mailbox_dir_is_refused(tmp_path: Path) -> None:
    real = box(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(MailboxError) as caught:
        write_state(link, STATE)
    assert caught.value.category == "internal_failure"
    assert list(real.iterdir()) == []


def test_a_bad_state_is_never_written(tmp_path: Path) -> None:
    mb = box(tmp_path)
    for bad in (
        replace(STATE, label="Bad"),
        replace(STATE, operation="asking", active_request_id=None),
        replace(STATE, pi_session_id="x" * 201),
    ):
        with pytest.raises(MailboxError) as caught:
            write_state(mb, bad)
        assert caught.value.category == "invalid_request"
    assert list(mb.iterdir()) == []


def test_a_removed_mailbox_is_never_brought_back(tmp_path: Path) -> None:
    # the controller removes the mailbox after delivering the result; a late child write
    # must not recreate it (an occupied mailbox would hold the label)
    gone = tmp_path / "mailboxes-v4" / ("a" * 32)
    with pytest.raises(MailboxError, match="gone") as caught:
        write_state(gone, STATE)
    assert caught.value.category == "internal_failure"
    assert not gone.parent.exists()
