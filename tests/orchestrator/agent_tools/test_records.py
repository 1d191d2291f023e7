"""Task records: atomic private files, lookups, idempotency and crash safety across processes."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.agent_tools.records import TaskNotFound, TaskStore, UnreadableRecord, is_task_id

ROOT = Path(__file__).resolve().parents[3]


def _python(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def store(tmp_path: Path) -> TaskStore:
    return TaskStore(tmp_path / "state")


def test_created_record_is_starting_private_and_on_disk(store: TaskStore) -> None:
    record, created = store.create(kind="pi", cwd="/repo", prompt="p" * 500, name="fixer")
    assert created and record.status == "starting" and is_task_id(record.task_id)
    path = store.path(record.task_id)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.tasks_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.state_dir.stat().st_mode) == 0o700
    data = json.loads(path.read_text())
    assert data["status"] == "starting" and data["promptChars"] == 500
    assert len(data["promptPreview"]) == 200
    assert data["history"][0]["status"] == "starting"


def test_update_through_the_life_of_a_task(store: TaskStore) -> None:
    record, _ = store.create(kind="pi", cwd="/repo")
    store.update(record.task_id, pane_id="w1:p2", name="fixer", session_path="/s.jsonl")
    store.update(record.task_id, status="running")
    store.update(record.task_id, status="interrupted", inbox_offset=42)
    done = store.update(
        record.task_id, status="failed", error={"code": "AGENT_ERROR", "message": "429"}
    )
    assert done.pane_id == "w1:p2" and done.inbox_offset == 42
    assert [h["status"] for h in done.history] == ["starting", "running", "interrupted", "failed"]
    assert done.ended_at is not None and done.updated_at >= done.created_at
    assert store.get(record.task_id) == done


def test_update_refuses_unknown_fields_and_statuses(store: TaskStore) -> None:
    record, _ = store.create(kind="pi", cwd="/repo")
    with pytest.raises(TypeError, match="paneid"):
        store.update(record.task_id, paneid="x")
    with pytest.raises(ValueError, match="unknown record status 'done'"):
        store.update(record.task_id, status="done")


def test_no_temp_files_left_behind(store: TaskStore) -> None:
    record, _ = store.create(kind="pi", cwd="/repo", client_task_id="c1")
    store.update(record.task_id, status="running")
    assert not [p for p in store.state_dir.rglob(".*") if p.is_file()]


def test_lookup_by_task_id_name_and_pane(store: TaskStore) -> None:
    old, _ = store.create(kind="pi", cwd="/r", name="fixer")
    store.update(old.task_id, status="closed", pane_id="w1:p2")
    new, _ = store.create(kind="pi", cwd="/r", name="fixer")
    store.update(new.task_id, status="running", pane_id="w1:p3")
    assert store.find(new.task_id).task_id == new.task_id
    assert store.find("fixer").task_id == new.task_id  # the active one wins
    assert store.find("w1:p2").task_id == old.task_id
    with pytest.raises(TaskNotFound, match="no task, agent name or pane 'nobody'"):
        store.find("nobody")
    with pytest.raises(TaskNotFound):
        store.get("t-000000000000")


def test_listing_is_oldest_first(store: TaskStore) -> None:
    ids = [store.create(kind="pi", cwd="/r")[0].task_id for _ in range(3)]
    assert [r.task_id for r in store.list_records()] == ids


def test_client_task_id_repeat_returns_the_existing_task(store: TaskStore) -> None:
    first, created = store.create(kind="pi", cwd="/r", client_task_id="job-1")
    again, created_again = store.create(kind="pi", cwd="/r", client_task_id="job-1")
    assert created and not created_again and again.task_id == first.task_id
    assert store.by_client_task_id("job-1") == first
    assert len(store.list_records()) == 1


def test_path_traversal_is_not_a_task_id(store: TaskStore) -> None:
    with pytest.raises(TaskNotFound):
        store.get("../../etc/passwd")


def test_unknown_keys_from_a_newer_version_survive_an_update(store: TaskStore) -> None:
    record, _ = store.create(kind="pi", cwd="/r")
    path = store.path(record.task_id)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "futureField": {"a": 1}}))
    store.update(record.task_id, status="running")
    assert json.loads(path.read_text())["futureField"] == {"a": 1}


def test_record_written_by_a_killed_process_is_readable_and_updatable(store: TaskStore) -> None:
    code = (
        "import os, sys\n"
        "from orchestrator.agent_tools.records import TaskStore\n"
        f"record, _ = TaskStore({str(store.state_dir)!r}).create(kind='pi', cwd='/r', name='w')\n"
        "print(record.task_id, flush=True)\n"
        "os._exit(9)  # no cleanup at all, as a crash mid-spawn\n"
    )
    proc = _python(code)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 9, err
    task_id = out.strip()
    record = store.get(task_id)
    assert record.status == "starting" and record.owner_pid == proc.pid
    assert not record.active  # its creator is gone: it no longer holds a slot
    updated = store.update(task_id, status="failed", error={"code": "CRASHED", "message": "x"})
    assert updated.status == "failed"


def test_update_in_another_process_is_seen_here(store: TaskStore) -> None:
    record, _ = store.create(kind="pi", cwd="/r")
    code = (
        "from orchestrator.agent_tools.records import TaskStore\n"
        f"TaskStore({str(store.state_dir)!r}).update({record.task_id!r}, status='running',"
        " pane_id='w9:p9')\n"
    )
    proc = _python(code)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert store.find("w9:p9").status == "running"


def test_concurrent_creates_with_one_client_task_id_make_one_task(store: TaskStore) -> None:
    code = (
        "from orchestrator.agent_tools.records import TaskStore\n"
        f"record, created = TaskStore({str(store.state_dir)!r}).create("
        "kind='pi', cwd='/r', client_task_id='same')\n"
        "print(record.task_id, created)\n"
    )
    procs = [_python(code) for _ in range(4)]
    outputs = [p.communicate(timeout=30) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outputs]
    answers = [out.split() for out, _ in outputs]
    assert len({task_id for task_id, _ in answers}) == 1
    assert sorted(created for _, created in answers) == ["False", "False", "False", "True"]
    assert len(store.list_records()) == 1


def test_concurrent_modifications_lose_nothing(store: TaskStore) -> None:
    record, _ = store.create(kind="pi", cwd="/r")
    code = (
        "from orchestrator.agent_tools.records import TaskStore\n"
        f"s = TaskStore({str(store.state_dir)!r})\n"
        "for _ in range(10):\n"
        f"    s.modify({record.task_id!r}, lambda r: {{'inbox_offset': r.inbox_offset + 1}})\n"
    )
    procs = [_python(code) for _ in range(3)]
    for proc in procs:
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
    assert store.get(record.task_id).inbox_offset == 30


# -- a full disk and unreadable records -------------------------------------------------------


def test_a_short_write_fails_the_update_and_keeps_the_good_record(
    store: TaskStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, _ = store.create(kind="pi", cwd="/repo", name="fixer")
    good = store.path(record.task_id).read_bytes()
    real_write = os.write
    calls = 0

    def full_disk(fd: int, data: bytes | memoryview) -> int:
        # a disk filling up: the first write lands 10 bytes, every later one has no room
        nonlocal calls
        calls += 1
        if calls == 1:
            return real_write(fd, bytes(data)[:10])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError, match="space"):
        store.update(record.task_id, status="running")
    monkeypatch.undo()
    assert store.path(record.task_id).read_bytes() == good
    assert store.get(record.task_id).status == "starting"
    assert [p.name for p in store.tasks_dir.iterdir() if p.name.endswith(".tmp")] == []


def test_a_write_that_makes_no_progress_raises(
    store: TaskStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    record, _ = store.create(kind="pi", cwd="/repo")
    good = store.path(record.task_id).read_bytes()
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    with pytest.raises(OSError, match="short write"):
        store.update(record.task_id, status="running")
    monkeypatch.undo()
    assert store.path(record.task_id).read_bytes() == good


BAD_RECORDS = {
    "empty": b"",
    "garbage": b"\x00garbage{",
    "not-utf8": b'{"taskId": "\xff\xfe"}',
    "list": b"[1, 2]",
    "wrong-types": json.dumps(
        {
            "taskId": "t-0000000000aa",
            "status": "running",
            "createdAt": 5,
            "updatedAt": "x",
            "kind": "pi",
            "cwd": "/",
        }
    ).encode(),
    "unknown-status": json.dumps(
        {
            "taskId": "t-0000000000aa",
            "status": "exploded",
            "createdAt": "x",
            "updatedAt": "x",
            "kind": "pi",
            "cwd": "/",
        }
    ).encode(),
    "missing-field": b'{"taskId": "t-0000000000aa", "status": "running"}',
}


@pytest.mark.parametrize("content", BAD_RECORDS.values(), ids=BAD_RECORDS.keys())
def test_an_unreadable_record_is_skipped_and_reported_by_path(
    store: TaskStore, content: bytes
) -> None:
    good, _ = store.create(kind="pi", cwd="/repo", name="fixer")
    bad = store.tasks_dir / "t-0000000000aa.json"
    bad.write_bytes(content)
    assert [r.task_id for r in store.list_records()] == [good.task_id]
    assert list(store.unreadable) == [bad]
    assert str(bad) in store.unreadable_warnings()[0]
    assert store.find("fixer").task_id == good.task_id
    with pytest.raises(UnreadableRecord, match=r"t-0000000000aa\.json"):
        store.get("t-0000000000aa")
    with pytest.raises(TaskNotFound, match="unreadable"):
        store.find("t-0000000000aa")


def test_a_record_that_is_a_fifo_or_a_link_is_unreadable_not_followed(
    store: TaskStore, tmp_path: Path
) -> None:
    good, _ = store.create(kind="pi", cwd="/repo", name="fixer")
    os.mkfifo(store.tasks_dir / "t-0000000000bb.json")
    (store.tasks_dir / "t-0000000000cc.json").symlink_to(store.path(good.task_id))
    assert [r.task_id for r in store.list_records()] == [good.task_id]
    assert sorted(p.name for p in store.unreadable) == [
        "t-0000000000bb.json",
        "t-0000000000cc.json",
    ]


def test_an_update_fsyncs_its_file_but_not_the_directory(
    store: TaskStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: six updates per spawn each paid a directory fsync (20-100 ms apiece under
    twenty spawns at once). An update replaces one complete, fsynced file with another, so the
    directory fsync bought only "the newest version survives a power cut"; a new record still
    makes its name durable."""
    synced: list[str] = []
    real_fsync = os.fsync

    def fd_sync(fd: int) -> None:  # a directory's fsync or a file's, told by the descriptor
        synced.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fd")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fd_sync)
    record, _ = store.create(kind="pi", cwd="/tmp", prompt="x")
    assert synced.count("dir") == 1
    synced.clear()
    store.update(record.task_id, status="running")
    assert synced == ["fd"]  # the temp file only
    assert store.get(record.task_id).status == "running"
