"""The JSON-lines bridge (``python -m orchestrator.managed.child_cli``) the pi extension runs.

In-process through :func:`serve` for the protocol table and the bad lines, and once as a
real subprocess, the way the extension starts it (stdin/stdout pipes, EOF exits 0).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.managed.child_cli import LINE_LIMIT_BYTES, Bridge, serve
from orchestrator.managed.child_state import read_state
from orchestrator.managed.mailbox import Box, Kind, Mailbox
from tests.orchestrator.managed.test_child import LABEL, WORKSPACE, identity_env

ROOT = Path(__file__).resolve().parents[3]
HELLO = {"op": "hello", "piSessionId": "sess-1", "piSessionFile": None, "cwd": "/w", "pid": 42}


def run(env: dict[str, str], *requests: Any) -> list[dict[str, Any]]:
    """Feed ``requests`` (dicts as JSON, bytes/str as they are) and parse the answers."""
    lines = [
        (r if isinstance(r, bytes) else (r if isinstance(r, str) else json.dumps(r)).encode())
        for r in requests
    ]
    out = io.BytesIO()
    assert serve(io.BytesIO(b"\n".join(lines) + b"\n"), out, env) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def bridge_and_mailbox(
    tmp_path: Path,
) -> tuple[Mailbox, Callable[[dict[str, Any]], dict[str, Any]]]:
    """The owner's view of a child's mailbox, and ``ask``: one request to a fresh bridge in
    the child's environment (as a JSON line), its answer."""
    bridge = Bridge(identity_env(tmp_path))

    def ask(request: dict[str, Any]) -> dict[str, Any]:
        return bridge.answer_line(json.dumps(request))

    return Mailbox(tmp_path, WORKSPACE, LABEL), ask


def test_the_protocol_table_end_to_end(tmp_path: Path) -> None:
    box, ask = bridge_and_mailbox(tmp_path)
    hello = ask(HELLO)
    assert hello == {"ok": True, "label": LABEL, "definition": "scout", "allowedDefinitions": []}
    task = box.post(Kind.TASK, "do it")
    polled = ask({"op": "poll"})
    assert polled == {
        "ok": True,
        "actions": [{"do": "start_turn", "text": "do it", "id": task.message_id}],
    }
    for event in ("turn_start", "tool_start", "tool_end"):
        assert ask({"op": "event", "event": event}) == {"ok": True}
    assert ask({"op": "event", "event": "session_file", "path": "/s.jsonl"}) == {"ok": True}
    asked = ask({"op": "ask", "question": "A or B?"})
    assert asked["ok"] is True and box.pending_ask().message_id == asked["askId"]  # type: ignore[union-attr]
    second = ask({"op": "ask", "question": "again"})
    assert second["ok"] is False and second["error"]["category"] == "agent_busy"
    assert ask({"op": "event", "event": "turn_end", "assistantText": None}) == {
        "ok": True,
        "result": None,
    }
    box.post(Kind.REPLY, "B", assignment_id=task.message_id, ask_id=asked["askId"])
    (action,) = ask({"op": "poll"})["actions"]
    assert action["do"] == "start_turn" and action["text"] == "B"
    ask({"op": "event", "event": "turn_start"})
    end = ask({"op": "event", "event": "turn_end", "assistantText": "did B"})
    assert end == {"ok": True, "result": "completed"}
    (result,) = [m for m in box.pending(Box.TO_OWNER) if m.kind is Kind.RESULT]
    assert result.text == "did B"
    state = read_state(box.path)
    assert state is not None and state.pi_session_file == "/s.jsonl" and state.pid == 42


def test_the_compact_event_answers_retired_and_cancel(tmp_path: Path) -> None:
    box, ask = bridge_and_mailbox(tmp_path)
    ask(HELLO)
    box.post(Kind.TASK, "do it")
    ask({"op": "poll"})
    ask({"op": "event", "event": "turn_start"})
    compact = {"op": "event", "event": "compact"}
    assert ask({**compact, "reason": "threshold"}) == {"ok": True, "retired": True, "cancel": True}
    assert ask({**compact, "reason": "overflow"}) == {"ok": True, "retired": True, "cancel": False}
    refused = ask({**compact, "reason": 3})
    assert refused["ok"] is False and refused["error"]["category"] == "invalid_request"


def test_bad_lines_get_error_answers_and_the_bridge_goes_on(tmp_path: Path) -> None:
    env = identity_env(tmp_path)
    answers = run(
        env,
        b"not json",
        b"\xff\xfe",
        "[1, 2]",
        {"op": "poll"},  # before hello
        {"op": "launch"},
        {**HELLO, "pid": "42"},
        {**HELLO, "pid": True},
        {**HELLO, "piSessionFile": 3},
        HELLO,
        HELLO,  # twice
        {"op": "event", "event": "boom"},
        {"op": "event", "event": "session_file"},
        {"op": "event", "event": "turn_end", "assistantText": 5},
        {"op": "ask"},
        {"op": "ask", "question": "no assignment"},
        {"op": "poll"},
    )
    oks = [a["ok"] for a in answers]
    assert oks == [False] * 8 + [True] + [False] * 6 + [True], answers
    categories = {a["error"]["category"] for a in answers if not a["ok"]}
    assert categories == {"invalid_request", "agent_busy"}
    messages = [a["error"]["message"] for a in answers if not a["ok"]]
    assert "request is not JSON" in messages[0] and "hello first" in messages[3]
    assert "unknown op 'launch'" in messages[4]
    assert messages[7] == "field 'piSessionFile' is not a string or null"
    assert messages[11] == "field 'assistantText' is not a string or null"


def test_a_wrong_environment_is_answered_at_hello(tmp_path: Path) -> None:
    env = identity_env(tmp_path, PI_HERDSMAN_LABEL="Bad Label")
    (answer,) = run(env, HELLO)
    assert answer["ok"] is False
    assert answer["error"]["category"] == "invalid_request"
    assert answer["error"]["message"].startswith("PI_HERDSMAN_LABEL is not a valid label")


def test_an_oversized_line_is_refused_and_skipped(tmp_path: Path) -> None:
    env = identity_env(tmp_path)
    huge = b'{"op":"ask","question":"' + b"x" * (LINE_LIMIT_BYTES + 10) + b'"}'
    answers = run(env, huge, HELLO)
    assert [a["ok"] for a in answers] == [False, True]
    assert "over" in answers[0]["error"]["message"]


def test_the_module_runs_as_a_subprocess_and_exits_0_on_eof(tmp_path: Path) -> None:
    env = {**identity_env(tmp_path), "PYTHONPATH": str(ROOT), "PATH": os.defpath}
    box = Mailbox(tmp_path, WORKSPACE, LABEL)
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator.managed.child_cli"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=str(tmp_path),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(HELLO).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["ok"] is True
    assert read_state(box.path) is not None  # the readiness proof is on disk
    proc.stdin.write(b"garbage\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["ok"] is False
    proc.stdin.close()
    try:
        assert proc.stdout.read() == b""
        assert proc.wait(timeout=10) == 0
    finally:
        proc.stdout.close()
