"""The AgentResult contract: builders, schema rules, truncation and the rendering."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from orchestrator.agent_tools.contract import (
    AGENT_RESULT_SCHEMA,
    DOCTOR_RESULT_SCHEMA,
    LIST_RESULT_SCHEMA,
    AgentResult,
    Artifacts,
    Diff,
    Evidence,
    FileChange,
    ResultError,
    refusal,
    render,
    task_summary,
    truncate_patch,
    truncate_text,
)
from orchestrator.agent_tools.records import TaskStore

VALIDATOR = jsonschema.Draft202012Validator(AGENT_RESULT_SCHEMA)


def _owned(tmp_store: TaskStore, **changes: Any) -> AgentResult:
    record, _ = tmp_store.create(kind="pi", cwd="/repo", prompt="fix it", name="fixer")
    fields: dict[str, Any] = {
        "status": "completed",
        "tool": "herdr_spawn_agent",
        "task_id": record.task_id,
        "name": "fixer",
        "pane_id": "w1:p2",
        "kind": "pi",
        "model": "deepseek/deepseek-flash",
        "final_message": "Done: tests pass.",
        "artifacts": Artifacts("/state/artifacts/" + record.task_id, "/s/a.jsonl"),
        "task": task_summary(record.to_dict()),
        "evidence": [Evidence("session", "last assistant message, stopReason stop", "/s/a.jsonl")],
        "elapsed_ms": 12_345,
    }
    fields.update(changes)
    return AgentResult(**fields)


@pytest.fixture
def store(tmp_path: Any) -> TaskStore:
    return TaskStore(tmp_path / "state")


def test_completed_result_validates(store: TaskStore) -> None:
    result = _owned(store).to_dict()
    VALIDATOR.validate(result)
    assert result["nextAction"] == "review"
    assert result["artifacts"]["resultMd"].endswith("/result.md")
    assert result["artifacts"]["inbox"].endswith("/inbox.ndjson")


def test_header_is_one_line_naming_status_agent_and_next(store: TaskStore) -> None:
    header = _owned(store).to_dict()["header"]
    assert header.startswith("[completed] fixer (pi · deepseek/deepseek-flash) task t-")
    assert header.endswith("pane w1:p2 · 12.3s · next: review")


def test_observation_form(store: TaskStore) -> None:
    result = AgentResult(
        status="idle",
        tool="herdr_get_agent_result",
        observation=True,
        pane_id="w1:p5",
        kind="claude",
        final_message="last words",
        evidence=[Evidence("pane", "last 80 lines of the pane")],
    ).to_dict()
    VALIDATOR.validate(result)
    assert result["nextAction"] == "none"
    assert result["header"].startswith("[idle · observation] w1:p5 (claude)")


def test_observation_with_a_task_is_invalid(store: TaskStore) -> None:
    result = _owned(store, status="idle", observation=True).to_dict()
    assert not VALIDATOR.is_valid(result)


def test_idle_without_observation_is_invalid(store: TaskStore) -> None:
    assert not VALIDATOR.is_valid(_owned(store, status="idle").to_dict())


def test_blocked_must_ask_the_user(store: TaskStore) -> None:
    good = _owned(store, status="blocked", question="Delete the old table?").to_dict()
    VALIDATOR.validate(good)
    assert good["nextAction"] == "ask_user"
    bad = _owned(store, status="blocked", next_action="review").to_dict()
    assert not VALIDATOR.is_valid(bad)


def test_failed_needs_an_error(store: TaskStore) -> None:
    assert not VALIDATOR.is_valid(_owned(store, status="failed").to_dict())
    error = ResultError("AGENT_ERROR", "stopReason error: 429", herdr_code=None)
    VALIDATOR.validate(_owned(store, status="failed", error=error).to_dict())


def test_owned_result_without_artifacts_is_invalid(store: TaskStore) -> None:
    assert not VALIDATOR.is_valid(_owned(store, artifacts=None).to_dict())


def test_refusal_has_no_task_and_says_retry() -> None:
    result = refusal(
        "herdr_spawn_agent", ResultError("CWD_NOT_ALLOWED", "cwd '/etc' is outside", "cwd")
    )
    VALIDATOR.validate(result)
    assert result["status"] == "failed" and result["nextAction"] == "retry"
    assert result["header"] == (
        "[failed] herdr_spawn_agent refused CWD_NOT_ALLOWED: cwd '/etc' is outside · next: retry"
    )


def test_unknown_field_is_invalid(store: TaskStore) -> None:
    result = _owned(store).to_dict()
    result["extra"] = 1
    assert not VALIDATOR.is_valid(result)


def test_error_codes_are_upper_snake(store: TaskStore) -> None:
    error = ResultError("agent_not_found", "no agent")
    assert not VALIDATOR.is_valid(_owned(store, status="failed", error=error).to_dict())


def test_final_message_truncated_at_max_result_chars_keeps_both_ends(store: TaskStore) -> None:
    text = "BEGIN " + "x" * 50_000 + " CONCLUSION"
    result = _owned(store, final_message=text, result_text=text).to_dict(max_result_chars=2_000)
    VALIDATOR.validate(result)
    final = result["finalMessage"]
    assert len(final) <= 2_000
    assert final.startswith("BEGIN ") and final.endswith(" CONCLUSION")
    assert result["artifacts"]["resultMd"] in final
    assert result["truncated"] == {"finalMessage": True, "resultText": True}
    assert result["chars"] == {"finalMessage": len(text), "resultText": len(text), "max": 2_000}


def test_default_max_result_chars_is_40000(store: TaskStore) -> None:
    result = _owned(store, final_message="y" * 40_001).to_dict()
    assert len(result["finalMessage"]) <= 40_000 and result["truncated"]["finalMessage"]
    assert not _owned(store, final_message="y" * 40_000).to_dict()["truncated"]["finalMessage"]


def test_truncate_text_short_text_untouched() -> None:
    assert truncate_text("abc", 10) == truncate_text("abc", 3)
    assert truncate_text("abc", 3).truncated is False


def test_truncate_patch_cuts_on_a_line_boundary() -> None:
    patch = "".join(f"+line {i} é\n" for i in range(1000))
    cut = truncate_patch(patch, 1000)
    assert cut.truncated and cut.bytes == len(patch.encode())
    assert cut.patch.endswith("\n") and patch.startswith(cut.patch)
    assert cut.shown_bytes == len(cut.patch.encode()) <= 1000


def test_diff_block(store: TaskStore) -> None:
    diff = Diff(
        patch="diff --git a/a.py b/a.py\n" + "+x\n" * 10,
        base="abc1234def",
        files=[FileChange("a.py", "modified", 10, 0), FileChange("img.png", "binary")],
    )
    result = _owned(store, diff=diff).to_dict(max_diff_bytes=20)
    VALIDATOR.validate(result)
    block = result["diff"]
    assert block["truncated"] is True and block["maxBytes"] == 20
    assert block["bytes"] > 20 >= block["shownBytes"]
    assert (block["additions"], block["deletions"]) == (10, 0)
    assert block["files"][1] == {
        "path": "img.png",
        "status": "binary",
        "additions": None,
        "deletions": None,
        "oldPath": None,
    }


def test_default_max_diff_bytes_is_512_kib(store: TaskStore) -> None:
    diff = Diff(patch="+" * 600_000 + "\n", base=None)
    block = _owned(store, diff=diff).to_dict()["diff"]
    assert block["maxBytes"] == 512 * 1024 and block["truncated"]


def test_rendering_has_header_evidence_diff_and_final_message(store: TaskStore) -> None:
    diff = Diff("diff\n+x\n", "abc1234", [FileChange("a.py", "modified", 1, 0)])
    text = render(_owned(store, diff=diff).to_dict())
    lines = text.splitlines()
    assert lines[0].startswith("[completed] fixer")
    assert lines[1].startswith("Next: review the final message")
    assert "- session: last assistant message, stopReason stop (/s/a.jsonl)" in lines
    assert "  modified a.py (+1 -0)" in lines
    assert any(line.startswith("Result file: /state/artifacts/") for line in lines)
    assert lines[-2:] == ["Final message:", "Done: tests pass."]


def test_rendering_of_blocked_says_never_answer(store: TaskStore) -> None:
    text = render(_owned(store, status="blocked", question="Drop table?").to_dict())
    assert "never answer it yourself" in text
    assert "Question from the agent: Drop table?" in text


def test_list_and_doctor_schemas() -> None:
    row = {
        "paneId": "w1:p1",
        "name": None,
        "kind": "claude",
        "agentStatus": "idle",
        "owned": False,
        "taskId": None,
        "taskStatus": None,
        "workspaceId": "w1",
        "tabId": "w1:t1",
        "cwd": "/x",
        "machine": "local",
    }
    jsonschema.validate({"agents": [row]}, LIST_RESULT_SCHEMA)
    assert not jsonschema.Draft202012Validator(LIST_RESULT_SCHEMA).is_valid(
        {"agents": [{**row, "taskId": "t-000000000000"}]}
    )
    report = {
        "ok": False,
        "checks": [{"id": "server", "status": "fail", "detail": "no socket", "fix": "herdr"}],
        "next": ["start herdr"],
        "aliases": [{"kind": "pi", "alias": "flash", "model": "a/b", "default": True}],
        "runtime": {"python": "3.11"},
    }
    jsonschema.validate(report, DOCTOR_RESULT_SCHEMA)
