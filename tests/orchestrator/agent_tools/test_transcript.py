"""Transcript pages and the final assistant message, from real pi session files.

Files come from two sources: the pi 0.73 / 1.6 captures in the shared reference, and
:class:`herdr_sim.fake_agent.session.PiSession`, the writer the simulator's fake pi uses.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.fake_agent.session import PiSession
from orchestrator.agent_tools import transcript as tr

EXAMPLES = Path("/work/shared/reference/examples")
CAPTURES = pytest.mark.skipif(not EXAMPLES.is_dir(), reason="pi captures not on this machine")


def _session(path: Path) -> PiSession:
    return PiSession(
        path,
        "0190-test",
        "/repo",
        provider="fake",
        model="fake-model",
        thinking="off",
        append_system_prompt=None,
    )


def _turns(path: Path, prompts: int) -> PiSession:
    """``prompts`` user prompts, each answered by a bash call, its result and a reply."""
    session = _session(path)
    for n in range(prompts):
        session.user(f"prompt {n}")
        call = session.next_call_id()
        started = int(time.time() * 1000)
        arguments = {"command": f"echo {n}\n  && ls"}
        session.assistant(
            [{"type": "toolCall", "id": call, "name": "bash", "arguments": arguments}],
            "toolUse",
            started_ms=started,
        )
        session.tool_result(call, "bash", f"{n}\n", is_error=n == 1, duration_ms=7)
        session.assistant([{"type": "text", "text": f"answer {n}"}], "stop", started_ms=started)
    return session


@CAPTURES
def test_pi_16_capture_becomes_system_user_assistant_tool_assistant(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy(EXAMPLES / "pi-1.6-session-toolcall.jsonl", path)
    page = tr.read_transcript(path)
    roles = [m["role"] for m in page["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    user, call, result, final = page["messages"][1:]
    assert user["text"] == "Run a TOOL for me"
    assert call["toolCalls"] == [{"name": "bash", "detail": "echo hello-from-tool"}]
    assert call["stopReason"] == "toolUse"
    assert result["toolName"] == "bash" and result["isError"] is False
    assert result["durationMs"] == 10 and result["text"] == "hello-from-tool\n"
    assert final["text"] == "Tool said: hello-from-tool\n "
    assert [m["index"] for m in page["messages"]] == [0, 1, 2, 3, 4]
    assert page["total"] == 5 and page["nextFrom"] is None and page["prevFrom"] is None


@CAPTURES
def test_pi_073_tool_result_without_duration_has_null_duration(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy(EXAMPLES / "pi-0.73-session-toolcall.jsonl", path)
    messages = tr.read_transcript(path)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[2]["durationMs"] is None


def test_messages_carry_the_index_of_their_user_prompt(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _turns(path, 2)
    messages = tr.read_transcript(path)["messages"]
    assert [m["prompt"] for m in messages] == [-1, 0, 0, 0, 0, 1, 1, 1, 1]


def test_paging_walks_forward_and_back_with_cursors(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _turns(path, 5)  # 1 system + 5 × 4 = 21 messages
    first = tr.read_transcript(path, limit=8)
    assert first["total"] == 21 and first["from"] == 0
    assert [m["index"] for m in first["messages"]] == list(range(8))
    assert first["nextFrom"] == 8 and first["prevFrom"] is None
    second = tr.read_transcript(path, from_=8, limit=8)
    assert second["nextFrom"] == 16 and second["prevFrom"] == 0
    last = tr.read_transcript(path, from_=16, limit=8)
    assert [m["index"] for m in last["messages"]] == [16, 17, 18, 19, 20]
    assert last["nextFrom"] is None and last["prevFrom"] == 8


def test_negative_from_reads_the_tail(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _turns(path, 3)
    page = tr.read_transcript(path, from_=-2)
    assert [m["text"] for m in page["messages"]] == ["2\n", "answer 2"]
    assert page["from"] == page["total"] - 2 and page["nextFrom"] is None


def test_from_past_the_end_is_an_empty_page_pointing_back(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _turns(path, 1)
    page = tr.read_transcript(path, from_=50, limit=3)
    assert page["messages"] == [] and page["nextFrom"] is None and page["prevFrom"] == 2


def test_limit_defaults_to_20_and_is_capped_at_100(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _turns(path, 30)
    assert len(tr.read_transcript(path)["messages"]) == tr.DEFAULT_LIMIT == 20
    capped = tr.read_transcript(path, limit=1000)
    assert capped["limit"] == 100 and len(capped["messages"]) == 100
    assert tr.read_transcript(path, limit=0)["limit"] == 1


def test_long_message_is_truncated_at_6000_chars_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = _session(path)
    session.user("x" * 10_000)
    message = tr.read_transcript(path)["messages"][1]
    assert len(message["text"]) <= tr.MAX_MESSAGE_CHARS == 6000
    assert message.get("truncated") is True and message.get("chars") == 10_000
    assert "truncated: 10000 characters" in message["text"]


def test_tool_call_details_are_one_line_previews() -> None:
    assert tr.tool_detail("bash", {"command": "make\n  test"}) == "make test"
    assert tr.tool_detail("edit", {"path": "src/a.py", "oldText": "a", "newText": "b"}) == (
        "src/a.py"
    )
    assert tr.tool_detail("write", {"file_path": "b.txt", "content": "..."}) == "b.txt"
    assert tr.tool_detail("grep", {"pattern": "TODO", "path": "src"}) == "TODO in src"
    assert tr.tool_detail("x", {"n": 3}) == '{"n": 3}'
    long = tr.tool_detail("bash", {"command": "y" * 500})
    assert len(long) == tr.DETAIL_CHARS and long.endswith("…")


def test_error_turn_reports_stop_reason_and_error_message(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = _session(path)
    session.user("go")
    session.assistant([], "error", started_ms=0, error="provider exploded")
    message = tr.read_transcript(path)["messages"][-1]
    assert message["stopReason"] == "error" and message["errorMessage"] == "provider exploded"
    last = tr.last_assistant_message(path)
    assert last is not None and last.failed and last.error == "provider exploded"


def test_missing_file_is_no_transcript_with_the_task_error(tmp_path: Path) -> None:
    with pytest.raises(tr.NoTranscript) as caught:
        tr.read_transcript(tmp_path / "nope.jsonl", task_error="agent start failed: boom")
    assert caught.value.code == "NO_TRANSCRIPT"
    assert caught.value.to_json()["taskError"] == "agent start failed: boom"
    assert "agent start failed: boom" in caught.value.message


def test_no_session_path_at_all_is_no_transcript() -> None:
    with pytest.raises(tr.NoTranscript) as caught:
        tr.read_transcript(None, task_error="cwd not allowed")
    assert caught.value.path is None and caught.value.task_error == "cwd not allowed"


def test_empty_file_is_no_transcript_yet(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.touch()
    with pytest.raises(tr.NoTranscript, match="is empty"):
        tr.read_transcript(path)


def test_torn_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _turns(path, 1)
    with path.open("a") as handle:
        handle.write('{"type":"message","id":"ffffffff","parentId":')
    assert tr.read_transcript(path)["total"] == 5
    last = tr.last_assistant_message(path)
    assert last is not None and last.text == "answer 0"


def _entry(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    content: Any = [{"type": "text", "text": text}]
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": role, "content": content, "stopReason": "stop"},
    }


def test_only_the_active_branch_is_shown(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "u", "timestamp": "t", "cwd": "/"},
        _entry("a0000000", None, "user", "first"),
        _entry("b0000000", "a0000000", "assistant", "abandoned"),
        _entry("c0000000", "a0000000", "assistant", "kept"),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    texts = [m["text"] for m in tr.read_transcript(path)["messages"]]
    assert texts == ["first", "kept"]


def test_compaction_and_thinking(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    assistant = _entry("b0000000", "a0000000", "assistant", "visible")
    assistant["message"]["content"].insert(0, {"type": "thinking", "thinking": "secret"})
    lines = [
        {"type": "session", "version": 3, "id": "u", "timestamp": "t", "cwd": "/"},
        {
            "type": "compaction",
            "id": "a0000000",
            "parentId": None,
            "timestamp": "t",
            "summary": "we did X",
            "firstKeptEntryId": "a0000000",
            "tokensBefore": 9,
        },
        assistant,
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    messages = tr.read_transcript(path)["messages"]
    assert messages[0]["role"] == "system" and "we did X" in messages[0]["text"]
    assert messages[1]["text"] == "visible"


def test_last_assistant_message_is_the_final_reply(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _turns(path, 2)
    last = tr.last_assistant_message(path)
    assert last is not None
    assert (last.text, last.stop_reason, last.error, last.final) == ("answer 1", "stop", None, True)


def test_last_assistant_mid_tool_call_is_not_final(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = _session(path)
    session.user("go")
    session.assistant(
        [{"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}}],
        "toolUse",
        started_ms=0,
    )
    last = tr.last_assistant_message(path)
    assert last is not None and not last.final and last.text == ""


def test_last_assistant_message_without_file_or_reply_is_none(tmp_path: Path) -> None:
    assert tr.last_assistant_message(tmp_path / "absent.jsonl") is None
    assert tr.last_assistant_message(None) is None
    path = tmp_path / "s.jsonl"
    _session(path).user("only a prompt so far")
    assert tr.last_assistant_message(path) is None


def test_a_line_read_half_written_counts_once_complete(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = _turns(path, 1)
    before = path.read_bytes()
    session.user("next")
    line = path.read_bytes()[len(before) :]
    path.write_bytes(before + line[: len(line) // 2])  # pi is mid-write
    assert tr.read_transcript(path)["total"] == 5
    path.write_bytes(before + line)
    page = tr.read_transcript(path)
    assert page["total"] == 6 and page["messages"][-1]["text"] == "next"


# -- the session file's path is untrusted: links, FIFOs, huge files ---------------------------


def _within(call: Any, seconds: float = 5.0) -> Any:
    """``call()`` in a thread, failing (not hanging) if it blocks."""
    found: list[Any] = []
    worker = threading.Thread(target=lambda: found.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert found, f"still blocked after {seconds} s"
    return found[0]


def test_a_symlinked_session_file_is_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    _turns(real, 1)
    assert tr.last_assistant_message(real) is not None
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert tr.last_assistant_message(link) is None
    with pytest.raises(tr.NoTranscript, match="not a regular file"):
        tr.read_transcript(link)


def test_a_fifo_session_file_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    assert _within(lambda: tr.last_assistant_message(fifo)) is None
    with pytest.raises(tr.NoTranscript, match="not a regular file"):
        tr.read_transcript(fifo)  # checked with lstat: never opened


def test_a_session_file_past_the_bound_is_read_from_its_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    _turns(path, 40)
    monkeypatch.setattr(tr, "MAX_SESSION_BYTES", path.stat().st_size // 4)
    last = tr.last_assistant_message(path)
    assert last is not None and last.text == "answer 39"
    page = tr.read_transcript(path, from_=-1)
    assert page["messages"][-1]["text"] == "answer 39"
    assert page["total"] < 40 * 4  # only the tail was read
