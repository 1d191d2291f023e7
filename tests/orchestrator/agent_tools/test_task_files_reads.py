"""The completion rule, the question rule and the inbox mark read a task's files through the
file-access seam (``files=``), so a task on a machine reached over SSH is judged by the files
where it runs, not by paths this host happens to have (or lacks).

``Elsewhere`` is a :class:`~orchestrator.agent_tools.remote_files.RemoteFiles` whose paths
(``/box/…``) exist only through it: a read that bypassed the seam would find nothing. The SSH
implementation itself is proven in test_remote_files.py; ``Unreachable`` is a machine whose
connection is down.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent.session import PiSession
from orchestrator.agent_tools import completion, questions
from orchestrator.agent_tools.contract import Artifacts
from orchestrator.agent_tools.inbox import wait_for_messages
from orchestrator.agent_tools.records import TaskRecord, TaskStore, now_iso
from orchestrator.agent_tools.remote_files import (
    DEFAULT_OUTPUT_LIMIT,
    LocalFiles,
    Ran,
    RemoteUnavailable,
)
from orchestrator.agent_tools.transcript import NoTranscript, read_transcript
from orchestrator.client.file_trust.private_files import BoundedRead
from orchestrator.client.types import AgentInfo

ART = "/box/art/t-000000000001"


@dataclass(frozen=True)
class Elsewhere:
    """A machine whose ``/box/…`` is ``root`` here: reachable through this object only."""

    root: Path
    machine: str = "box"

    def _p(self, path: str) -> str:
        assert path.startswith("/box/"), path
        return str(self.root / path.removeprefix("/box/"))

    def read_bounded(
        self, path: str, limit: int, *, offset: int = 0, tail: bool = False
    ) -> BoundedRead:
        return LocalFiles().read_bounded(self._p(path), limit, offset=offset, tail=tail)

    def exists(self, path: str) -> bool:
        return LocalFiles().exists(self._p(path))

    def is_dir(self, path: str) -> bool:
        return LocalFiles().is_dir(self._p(path))

    def is_regular_file(self, path: str) -> bool:
        return LocalFiles().is_regular_file(self._p(path))

    def list_dir(self, path: str) -> list[str]:
        return LocalFiles().list_dir(self._p(path))

    def write_atomic(self, path: str, data: bytes) -> None:
        LocalFiles().write_atomic(self._p(path), data)

    def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> Ran:
        raise AssertionError("not used here")


class Unreachable(Elsewhere):
    """The same machine with its SSH connection down."""

    def read_bounded(
        self, path: str, limit: int, *, offset: int = 0, tail: bool = False
    ) -> BoundedRead:
        raise RemoteUnavailable("machine 'box' over SSH: Connection refused")

    def is_regular_file(self, path: str) -> bool:
        raise RemoteUnavailable("machine 'box' over SSH: Connection refused")


def _agent(status: str, seq: int, terminal: str = "term_1") -> AgentInfo:
    return AgentInfo.from_wire(
        {"terminal_id": terminal, "pane_id": "w1:p1", "agent_status": status,
         "state_change_seq": seq}
    )  # fmt: skip


def _record(kind: str, **delivery: Any) -> TaskRecord:
    stamp = now_iso()
    return TaskRecord(
        task_id="t-000000000001", status="running", created_at=stamp, updated_at=stamp,
        kind=kind, cwd="/box/repo", pane_id="w1:p1", artifact_dir=ART, machine="box",
        terminal_id="term_1", delivery={"sendingAt": stamp, **delivery},
    )  # fmt: skip


def _remote_dir(tmp_path: Path) -> Path:
    art = tmp_path / "remote" / "art" / "t-000000000001"
    art.mkdir(parents=True)
    return art


def test_a_screen_kind_finds_result_md_where_the_task_runs(tmp_path: Path) -> None:
    art = _remote_dir(tmp_path)
    box = Elsewhere(tmp_path / "remote")
    record = _record("claude", seqBefore=3, sentAt=now_iso(), seqAfter=4)
    restarted = _agent("idle", 9, terminal="term_2")  # only result.md can make it completed
    (art / "result.md").write_text("done\n")
    assert completion.judge(record, restarted, None, tmp_path, files=box).status == "completed"
    # read on this host, the same record finds no report: the old behaviour for SSH tasks
    local = completion.judge(record, restarted, None, tmp_path)
    assert local.error is not None and local.error.code == "AGENT_RESTARTED"


def test_a_pi_answer_is_read_from_the_session_where_the_task_runs(tmp_path: Path) -> None:
    _remote_dir(tmp_path)
    box = Elsewhere(tmp_path / "remote")
    record = _record("pi", sentAt=now_iso())
    session = PiSession(
        tmp_path / "remote" / "s.jsonl", "0190-test", "/box/repo", provider="fake", model="m",
        thinking="off", append_system_prompt=None,
    )  # fmt: skip
    session.user(f"Your task is in {ART}/task.md - read it")
    session.assistant([{"type": "text", "text": "all done"}], "stop", started_ms=0)
    verdict = completion.judge(record, _agent("idle", 5), "/box/s.jsonl", tmp_path, files=box)
    assert (verdict.status, verdict.final) == ("completed", "all done")
    assert completion.prompt_landed(record, None, "/box/s.jsonl", tmp_path, files=box)
    answer = completion.turn_answer(record, "/box/s.jsonl", tmp_path, files=box)
    assert answer is not None and answer.text == "all done"


def test_a_machine_that_cannot_be_reached_concludes_nothing(tmp_path: Path) -> None:
    down = Unreachable(tmp_path / "remote")
    for record, session in ((_record("claude", seqBefore=3), None), (_record("pi"), "/box/s")):
        verdict = completion.judge(record, _agent("idle", 9, "term_2"), session, tmp_path,
                                   files=down)  # fmt: skip
        assert (verdict.status, verdict.conclusive) == ("running", False)
        assert "could not be read" in verdict.notes[0] and "Connection refused" in verdict.notes[0]


def test_the_inbox_question_and_turn_mark_are_read_where_the_task_runs(tmp_path: Path) -> None:
    art = _remote_dir(tmp_path)
    box = Elsewhere(tmp_path / "remote")
    line = json.dumps({"ts": now_iso(), "type": "BLOCKED", "text": "Drop the table?"}) + "\n"
    (art / "inbox.ndjson").write_text(line)
    store = TaskStore(tmp_path / "state")
    created, _ = store.create(kind="pi", cwd="/box/repo", artifact_dir=ART, machine="box")
    record = store.update(created.task_id, status="running")
    asked = questions.protocol_question(record, None, tmp_path, files=box)
    assert asked is not None and asked.text == "Drop the table?"
    assert questions.protocol_question(record, None, tmp_path) is None  # not on this host
    marked = questions.mark_turn_start(store, record, tmp_path, files=box)
    assert marked.extra[questions.TURN_INBOX_OFFSET] == len(line.encode())
    # the question asked before the mark is answered by the new prompt
    assert questions.protocol_question(marked, None, tmp_path, files=box) is None


def test_the_inbox_long_poll_and_the_transcript_read_where_the_task_runs(tmp_path: Path) -> None:
    art = _remote_dir(tmp_path)
    box = Elsewhere(tmp_path / "remote")
    (art / "inbox.ndjson").write_text(json.dumps({"ts": now_iso(), "type": "NOTE", "text": "hi"}))
    (read,) = wait_for_messages([(f"{ART}/inbox.ndjson", 0)], 0.0, files=[box])
    assert [m["text"] for m in read.messages] == ["hi"]
    (here,) = wait_for_messages([(f"{ART}/inbox.ndjson", 0)], 0.0)
    assert here.messages == []  # not on this host
    session = PiSession(
        tmp_path / "remote" / "s.jsonl", "0190-test", "/box/repo", provider="fake", model="m",
        thinking="off", append_system_prompt=None,
    )  # fmt: skip
    session.user("do it")
    page = read_transcript("/box/s.jsonl", files=box)
    assert "do it" in [m["text"] for m in page["messages"]]
    with pytest.raises(NoTranscript, match="Connection refused"):
        read_transcript("/box/s.jsonl", files=Unreachable(tmp_path / "remote"))


def test_a_results_artifacts_say_whether_result_md_exists_where_the_task_runs(
    tmp_path: Path,
) -> None:
    art = _remote_dir(tmp_path)
    (art / "result.md").write_text("report\n")
    record = _record("pi")
    assert Artifacts.of(record, tmp_path, Elsewhere(tmp_path / "remote")).result_md_exists
    assert not Artifacts.of(record, tmp_path).result_md_exists  # not on this host
    down = Unreachable(tmp_path / "remote")
    assert not Artifacts.of(record, tmp_path, down).result_md_exists
