"""The controller's durable store and the state projection (no Herdr needed).

The store is what restart recovery stands on: the controller identity is created once and
never silently replaced, generation records are complete or absent, 0600, and a record this
build cannot fully read is reported, never half-trusted. The projection is the docs table of
``state`` → ``available_tools``.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.projection import Evidence, project
from orchestrator.managed.store import Generation, LockBusy, ManagedStore


def generation(run_id: str = "0b8c1a52-65a3-4a8e-9a6e-1b9f3f1d2c11", **kw: object) -> Generation:
    base: dict[str, object] = {
        "run_id": run_id,
        "label": "scout",
        "definition": "scout",
        "owner_session_id": "owner",
        "workspace_id": "w1",
        "cwd": "/tmp",
        "mailbox": "/tmp/box",
        "status": "live",
        "created_at": 1.0,
        "updated_at": 1.0,
        "agent_name": "scout_0123456789abcdef",
        "pane_id": "w1:p2",
        "request_id": "5b8c1a52-65a3-4a8e-9a6e-1b9f3f1d2c11",
    }
    base.update(kw)
    return Generation(**base)  # type: ignore[arg-type]


def test_controller_identity_is_created_once_and_kept(tmp_path: Path) -> None:
    first = ManagedStore(tmp_path).controller()
    again = ManagedStore(tmp_path).controller()
    assert first == again
    path = tmp_path / "managed" / "controller.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "managed").stat().st_mode) == 0o700


def test_a_concurrent_first_use_never_reads_a_half_written_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five delegations at once on a fresh state dir each create the identity first: one
    used to create the file and then write it, and another read it empty in between
    (internal_failure, a flake under load). The first writer is held here between create
    and write while a second first use runs to the end: both must get one identity."""
    import orchestrator.client.file_trust.private_files as safe_fs_module  # the identity's writer

    real_write_all = safe_fs_module.write_all
    writes: list[int] = []
    started, second_done = threading.Event(), threading.Event()

    def held_first_write(fd: int, data: bytes) -> None:
        writes.append(fd)
        if len(writes) == 1:
            started.set()
            assert second_done.wait(10)
        real_write_all(fd, data)

    monkeypatch.setattr(safe_fs_module, "write_all", held_first_write)
    got: dict[str, object] = {}

    def first_use() -> None:
        got["first"] = ManagedStore(tmp_path).controller()

    thread = threading.Thread(target=first_use)
    thread.start()
    assert started.wait(10)
    try:
        got["second"] = ManagedStore(tmp_path).controller()
    finally:
        second_done.set()
        thread.join(10)
    assert got["first"] == got["second"]
    assert not [p for p in (tmp_path / "managed").iterdir() if p.name.endswith(".tmp")]


def test_a_corrupt_or_linked_identity_is_refused_not_replaced(tmp_path: Path) -> None:
    store = ManagedStore(tmp_path)
    path = store.root / "controller.json"
    path.write_text("{not json")
    with pytest.raises(ManagedAgentError) as caught:
        store.controller()
    assert caught.value.category == "internal_failure"
    assert path.read_text() == "{not json"  # left in place
    path.unlink()
    (tmp_path / "elsewhere.json").write_text(json.dumps({"controllerId": "x", "createdAt": 1}))
    path.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ManagedAgentError):
        store.controller()


def test_generation_records_round_trip_atomically_0600(tmp_path: Path) -> None:
    store = ManagedStore(tmp_path)
    saved = store.save(generation(delivered_asks=("a",)))
    assert store.load(saved.run_id) == saved
    path = store.generations_dir / f"{saved.run_id}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in store.generations_dir.iterdir()] == [path.name]  # no temp left


def test_an_unreadable_record_is_reported_never_dropped(tmp_path: Path) -> None:
    store = ManagedStore(tmp_path)
    good = store.save(generation())
    bad = store.generations_dir / "1b8c1a52-65a3-4a8e-9a6e-1b9f3f1d2c11.json"
    raw = generation(run_id="1b8c1a52-65a3-4a8e-9a6e-1b9f3f1d2c11").to_json()
    raw["surprise"] = True
    bad.write_text(json.dumps(raw))
    found, problems = store.scan()
    assert found == [good]
    assert len(problems) == 1 and "surprise" in problems[0].message
    assert bad.exists()


def test_the_lifecycle_lock_is_reentrant_and_excludes_other_threads(tmp_path: Path) -> None:
    store = ManagedStore(tmp_path)
    other = ManagedStore(tmp_path)  # a second service over the same state dir
    outcome: list[str] = []
    with store.locked(), store.locked():  # re-entrant in one thread
        worker = threading.Thread(target=lambda: _try(other, outcome))
        worker.start()
        worker.join(5)
    assert outcome == ["busy"]
    with other.locked(timeout=0):
        pass


def _try(store: ManagedStore, outcome: list[str]) -> None:
    try:
        with store.locked(timeout=0):
            outcome.append("held")
    except LockBusy:
        outcome.append("busy")


def test_the_lock_excludes_another_process(tmp_path: Path) -> None:
    store = ManagedStore(tmp_path)
    held_r, held_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child holds the lock until told to let go
        with store.locked():
            os.write(held_w, b"x")
            os.read(go_r, 1)
        os._exit(0)
    try:
        assert os.read(held_r, 1) == b"x"
        with pytest.raises(LockBusy), store.locked(timeout=0):
            pass
    finally:
        os.write(go_w, b"x")
        os.waitpid(pid, 0)
    with store.locked(timeout=5):
        pass


# -- the projection (the docs table) ---------------------------------------------------------


def test_working_lists_steer_and_interrupt(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_text('{"type":"session"}\n')
    g = generation(pi_session_file=str(session))
    p = project(g, Evidence("live", operation="working"))
    assert p.state == "working"
    assert p.available_tools == (
        "agent_inspect",
        "agent_transcript",
        "agent_steer",
        "agent_interrupt",
        "agent_close",
    )


def test_transcript_waits_for_a_non_empty_session_file(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    g = generation(pi_session_file=str(session))
    assert (
        "agent_transcript" not in project(g, Evidence("live", operation="working")).available_tools
    )
    session.write_text("")
    assert (
        "agent_transcript" not in project(g, Evidence("live", operation="working")).available_tools
    )


def test_a_correlated_pending_ask_is_blocked_with_reply_only() -> None:
    g = generation()
    ask = Evidence(
        "live",
        operation="asking",
        pending_ask_id="ask",
        pending_ask_assignment=g.request_id,
    )
    p = project(g, ask)
    assert p.state == "blocked"
    assert p.available_tools == ("agent_inspect", "agent_reply", "agent_close")
    stray = Evidence("live", operation="asking", pending_ask_id="a", pending_ask_assignment="x")
    assert "agent_reply" not in project(g, stray).available_tools


def test_herdr_blocked_without_ask_has_no_steer_or_reply() -> None:
    p = project(generation(), Evidence("live", operation="idle", herdr_status="blocked"))
    assert p.state == "blocked"
    assert p.available_tools == ("agent_inspect", "agent_close")


def test_a_pending_result_is_settling_and_not_closable() -> None:
    p = project(generation(), Evidence("live", operation="idle", result_pending=True))
    assert p.state == "settling"
    assert p.available_tools == ("agent_inspect",)


def test_lost_gets_close_and_unknown_gets_nothing() -> None:
    assert project(generation(), Evidence("lost")).available_tools == ("agent_close",)
    unknown = project(generation(), Evidence("unknown", diagnostic="two panes"))
    assert unknown.state == "unknown" and unknown.available_tools == ()
    assert unknown.diagnostic == "two panes"


def test_a_non_direct_record_gets_no_tools() -> None:
    p = project(generation(), Evidence("live", operation="working"), direct=False)
    assert p.state == "working" and p.available_tools == ()


def test_a_delegating_agent_waiting_on_its_agents_is_blocked_with_steer_not_interrupt() -> None:
    p = project(generation(), Evidence("live", operation="idle", waiting_on_agents=True))
    assert p.state == "blocked"
    assert p.available_tools == ("agent_inspect", "agent_steer", "agent_close")
    working = project(generation(), Evidence("live", operation="working", waiting_on_agents=True))
    assert working.state == "working"  # a running turn is working, with interrupt
    assert "agent_interrupt" in working.available_tools


def test_herdr_blocked_wins_over_the_childs_working_operation() -> None:
    """A dialog Herdr reports blocked waits for someone: the child's own ``working`` must not
    offer steer or interrupt (neither reaches a blocked runtime)."""
    p = project(generation(), Evidence("live", operation="working", herdr_status="blocked"))
    assert p.state == "blocked"
    assert p.available_tools == ("agent_inspect", "agent_close")
    waiting = Evidence("live", operation="idle", herdr_status="blocked", waiting_on_agents=True)
    assert project(generation(), waiting).available_tools == ("agent_inspect", "agent_close")
