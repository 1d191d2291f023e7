"""The AgentResult contract at its edges: truncation at its bounds, what counts as a failure
(MCP ``isError``), the wire form's lossless compaction, the rendering a model reads, and the
builders' every field. The contract tests show the usual shapes; these pin the boundaries a
usual result never reaches."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agent_tools.contract import (
    AgentResult,
    Artifacts,
    Diff,
    Evidence,
    FileChange,
    ResultError,
    compact,
    elapsed_ms,
    is_failure,
    refusal,
    render,
    truncate_patch,
    truncate_text,
)
from orchestrator.agent_tools.records import TaskStore
from orchestrator.client.types import AgentInfo

# -- truncate_text ---------------------------------------------------------------------


def test_a_text_of_exactly_the_limit_is_whole_and_zero_is_a_valid_limit() -> None:
    assert truncate_text("abcde", 5) == truncate_text("abcde", 5, full_path="/r.md")
    assert truncate_text("abcde", 5).text == "abcde" and not truncate_text("abcde", 5).truncated
    assert truncate_text("", 0).text == ""  # a zero limit is allowed, not refused
    cut = truncate_text("abc", 0)
    assert (cut.text, cut.truncated, cut.chars) == ("", True, 3)
    with pytest.raises(ValueError, match=r"^limit must be >= 0$"):
        truncate_text("abc", -1)


def test_a_cut_names_the_full_texts_path_only_when_there_is_one() -> None:
    text = "b" * 300 + "e" * 300
    plain = truncate_text(text, 200)
    assert plain.truncated and plain.chars == 600 and len(plain.text) == 200
    assert "[... " in plain.text and "; full text" not in plain.text
    assert plain.text.startswith("b") and plain.text.endswith("e")
    named = truncate_text(text, 200, full_path="/a/result.md")
    assert "; full text: /a/result.md ..." in named.text and len(named.text) == 200


def test_a_limit_with_room_for_one_character_beside_the_marker_keeps_it() -> None:
    text = "x" * 1000
    marker = len("\n\n[... 1000 of 1000 characters truncated ...]\n\n")
    cut = truncate_text(text, marker + 1)
    assert cut.truncated and "characters truncated" in cut.text  # not the bare prefix
    bare = truncate_text(text, marker)  # no room at all: the plain prefix
    assert (bare.text, bare.truncated, bare.chars) == ("x" * marker, True, 1000)


# -- truncate_patch --------------------------------------------------------------------


def test_a_patch_of_exactly_the_bound_is_whole() -> None:
    patch = "+a\n+b\n"
    whole = truncate_patch(patch, len(patch))
    assert (whole.patch, whole.truncated, whole.bytes, whole.shown_bytes) == (patch, False, 6, 6)


def test_a_patch_is_cut_after_the_last_whole_line_within_the_bound() -> None:
    patch = "+a\n+bb\n+ccc\n"
    assert truncate_patch(patch, 7).patch == "+a\n+bb\n"  # the bound ends on a newline
    assert truncate_patch(patch, 8).patch == "+a\n+bb\n"
    assert truncate_patch(patch, 6).patch == "+a\n"
    cut = truncate_patch(patch, 3)
    assert (cut.patch, cut.truncated, cut.bytes, cut.shown_bytes) == ("+a\n", True, 12, 3)


def test_a_first_line_longer_than_the_bound_is_cut_inside_it() -> None:
    assert truncate_patch("\n+abc\n", 3).patch == "\n"  # a newline at byte 0 is a line end
    long = truncate_patch("+" + "x" * 20 + "\n", 5)
    assert (long.patch, long.shown_bytes) == ("+xxxx", 5)


def test_a_cut_inside_a_character_drops_its_partial_bytes() -> None:
    cut = truncate_patch("+ééé", 4)  # "+" then one é (2 bytes) and half of the next
    assert (cut.patch, cut.shown_bytes, cut.bytes) == ("+é", 3, 7)


# -- building blocks -------------------------------------------------------------------


def test_elapsed_ms_counts_from_the_start_and_never_goes_negative() -> None:
    assert 1_500 <= elapsed_ms(time.monotonic() - 1.5) < 2_500
    assert elapsed_ms(time.monotonic() + 60) == 0


def test_an_unknown_evidence_source_is_named() -> None:
    with pytest.raises(ValueError, match=r"^unknown evidence source 'tea leaves'$"):
        Evidence("tea leaves", "x").to_dict()


def test_a_stored_error_is_read_defensively() -> None:
    full = {"code": "AGENT_EXITED", "message": "gone", "field": "name", "herdrCode": "x_y"}
    assert ResultError.from_dict(full, code="C", message="m") == ResultError(
        "AGENT_EXITED", "gone", "name", "x_y"
    )
    assert ResultError.from_dict({}, code="C", message="m") == ResultError("C", "m", None, None)
    odd = {"code": "", "message": "", "field": 3, "herdrCode": ["x"]}
    assert ResultError.from_dict(odd, code="C", message="m") == ResultError("C", "m", None, None)


def test_artifacts_of_a_task_name_its_files_and_whether_result_md_is_its_own(
    tmp_path: Path,
) -> None:
    store = TaskStore(tmp_path / "state")
    record, _ = store.create(kind="pi", cwd=str(tmp_path), name="pi-x")
    record = store.update(record.task_id, worktree_path="/wt/x", session_path="/s.jsonl")
    root = tmp_path / "artifacts"
    missing = Artifacts.of(record, root)
    assert missing == Artifacts(str(root / record.task_id), "/s.jsonl", "/wt/x", False)
    (root / record.task_id).mkdir(parents=True)
    (root / "elsewhere.md").write_text("not the child's")
    (root / record.task_id / "result.md").symlink_to(root / "elsewhere.md")
    assert Artifacts.of(record, root).result_md_exists is False  # a link is not its report

    class Unreachable:
        def is_regular_file(self, path: str) -> bool:
            raise OSError("machine down")

    assert Artifacts.of(record, root, Unreachable()).result_md_exists is False  # type: ignore[arg-type]


# -- the builders ----------------------------------------------------------------------


def test_for_record_takes_the_artifacts_given_and_every_field(tmp_path: Path) -> None:
    store = TaskStore(tmp_path / "state")
    record, _ = store.create(kind="pi", cwd=str(tmp_path), name="pi-x", machine="box")
    given = Artifacts("/given")
    result = AgentResult.for_record(
        "herdr_get_result",
        record,
        "completed",
        artifact_root=tmp_path / "artifacts",
        artifacts=given,
        question="q?",
    )
    assert result.artifacts is given and result.question == "q?"
    assert result.machine == "box"
    assert AgentResult.for_record("t", record, "running").artifacts is None


def test_for_agent_keeps_the_status_the_tool_and_the_fields() -> None:
    agent = AgentInfo.from_wire(
        {"name": "a", "pane_id": "w1:p1", "agent": "codex", "agent_status": "idle"}
    )
    result = AgentResult.for_agent("herdr_read_agent", agent, "running", observation=True)
    assert (result.status, result.tool, result.observation) == ("running", "herdr_read_agent", True)
    assert (result.name, result.pane_id, result.kind) == ("a", "w1:p1", "codex")


def test_a_refusal_names_its_machine_its_next_action_and_logs_no_unknown_field(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = ResultError("BAD_ARGUMENT", "unknown argument 'sekrit'", "sekrit")
    with caplog.at_level(logging.INFO, logger="orchestrator.agent_tools.contract"):
        value = refusal("herdr_spawn_agent", error, log_field=False, machine="box")
        plain = refusal("herdr_spawn_agent", ResultError("NO_CAPACITY", "full", "count"))
    assert (value["machine"], value["nextAction"], value["status"]) == ("box", "retry", "failed")
    assert plain["machine"] == "local"
    assert refusal("t", error, next_action="inspect")["nextAction"] == "inspect"
    logged = [r.getMessage() for r in caplog.records]
    assert logged[:2] == [
        "herdr_spawn_agent refused: BAD_ARGUMENT (field (not in the schema))",
        "herdr_spawn_agent refused: NO_CAPACITY (field count)",
    ]


# -- is_failure ------------------------------------------------------------------------


def value(**fields: Any) -> dict[str, Any]:
    return {"status": "completed", "nextAction": "review", "tool": "t", "error": None, **fields}


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        (value(), False),
        (value(status="running"), False),
        (value(status="blocked"), False),
        (value(status="failed"), True),
        (value(error={"code": "PANE_GONE"}), True),
        (value(status="gone"), False),
        (
            value(tool="herdr_interrupt_agent", status="failed", error={"code": "INTERRUPTED"}),
            False,
        ),
        (
            value(tool="herdr_interrupt_agent", status="failed", error={"code": "AGENT_EXITED"}),
            True,
        ),
        (value(tool="herdr_interrupt_agent", status="failed"), True),
        ({"status": "failed", "items": []}, False),  # a page: no nextAction
        ({"nextAction": "review", "error": {"code": "X"}}, False),  # no status: not a result
    ],
)
def test_what_counts_as_a_failure(result: dict[str, Any], failed: bool) -> None:
    assert is_failure(result) is failed


# -- the wire form ---------------------------------------------------------------------


def test_compact_drops_only_the_task_keys_the_top_level_repeats() -> None:
    result = value(
        taskId="t1", name="n", task={"taskId": "t1", "status": "interrupted", "cwd": "/w"}
    )
    wire = compact(result)
    assert wire["task"] == {"status": "interrupted", "cwd": "/w"}
    assert result["task"]["taskId"] == "t1"  # the value itself is untouched
    restored = {k: wire["task"][k] if k in wire["task"] else wire[k] for k in result["task"]}
    assert restored == result["task"]  # lossless
    page = {"items": [], "task": {"a": 1}}
    assert compact(page) == page and compact(page) is not page
    assert compact(value(task=None))["task"] is None


# -- what a model reads ----------------------------------------------------------------


def test_sizes_are_shown_in_the_unit_that_fits(tmp_path: Path) -> None:
    def shown(size: int) -> str:
        diff = Diff(patch="x" * size, base=None)
        text = render(
            AgentResult(status="completed", tool="t", name="n", diff=diff).to_dict(
                max_diff_bytes=10 << 20
            )
        )
        return text.split("; patch ", 1)[1].splitlines()[0]

    assert shown(1023) == "1023 B"
    assert shown(1024) == "1.0 KiB"
    assert shown(1536) == "1.5 KiB"
    assert shown((1 << 20) - 1) == "1024.0 KiB"
    assert shown(1 << 20) == "1.0 MiB"
    assert shown(3 << 19) == "1.5 MiB"


def test_a_full_result_renders_every_part_in_order(tmp_path: Path) -> None:
    result = AgentResult(
        status="failed",
        tool="herdr_get_result",
        task_id="t-1",
        name="fix-tests",
        pane_id="w1:p2",
        kind="pi",
        model="m/x",
        machine="box",
        final_message="all done",
        question="which branch?",
        diff=Diff(
            patch="+a\n+b\n",
            base="0123456789abcdef",
            files=(FileChange("a.py", "modified", 2, 1), FileChange("img.png", "binary")),
        ),
        artifacts=Artifacts("/art/t-1/"),
        evidence=[Evidence("pane", "prompt back", path="/p"), Evidence("git", "2 files")],
        error=ResultError("AGENT_EXITED", "the agent exited", "name", "pane_not_found"),
        warnings=["slow machine"],
        elapsed_ms=12_300,
    ).to_dict()
    assert render(result).splitlines() == [
        (
            "[failed] fix-tests (pi · m/x) task t-1 pane w1:p2 on box · AGENT_EXITED · 12.3s · "
            "next: inspect"
        ),
        (
            "Next: read the error, the pane tail or the transcript (herdr_read_agent) before "
            "deciding whether to spawn again."
        ),
        "Error AGENT_EXITED (field name) [herdr: pane_not_found]: the agent exited",
        "Question from the agent: which branch?",
        "Evidence:",
        "- pane: prompt back (/p)",
        "- git: 2 files",
        "Diff: 2 file(s), +2 -1 against 0123456789ab; patch 6 B",
        "  modified a.py (+2 -1)",
        "  binary img.png",
        "Result file: /art/t-1/result.md (not written)",
        "Warning: slow machine",
        "Final message:",
        "all done",
    ]


def test_a_refusal_renders_its_error_without_field_or_herdr_code() -> None:
    text = render(refusal("herdr_spawn_agent", ResultError("NO_CAPACITY", "queue full")))
    assert text.splitlines() == [
        "[failed] herdr_spawn_agent refused NO_CAPACITY: queue full · next: retry",
        "Next: fix the request or wait for capacity, then call the tool again.",
        "Error NO_CAPACITY: queue full",
    ]


def test_a_truncated_diff_and_message_say_so() -> None:
    result = AgentResult(
        status="completed",
        tool="t",
        name="n",
        final_message="m" * 50,
        diff=Diff(patch="+a\n" * 400, base=None),
        artifacts=Artifacts("/art", result_md_exists=True),
    ).to_dict(max_result_chars=10, max_diff_bytes=300)
    lines = render(result).splitlines()
    assert "Diff: 0 file(s), +0 -0; patch truncated to 300 B of 1.2 KiB" in lines
    assert "Result file: /art/result.md" in lines
    assert "Final message (truncated):" in lines


def test_a_cut_keeps_three_fifths_of_the_room_from_the_start_and_the_rest_from_the_end() -> None:
    text = "".join(chr(ord("a") + n % 26) for n in range(500))
    cut = truncate_text(text, 100)
    marker = "\n\n[... 445 of 500 characters truncated ...]\n\n"  # 500 - 33 - 22
    room = 100 - len("\n\n[... 500 of 500 characters truncated ...]\n\n")
    head, tail = room * 3 // 5, room - room * 3 // 5
    assert (head, tail) == (33, 22)
    assert cut.text == text[:33] + marker + text[-22:]
    assert len(cut.text) == 100


def test_elapsed_ms_is_whole_milliseconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "monotonic", lambda: 101.5)
    assert elapsed_ms(100.0) == 1_500


def test_the_result_text_is_cut_naming_the_result_file_and_absent_texts_count_zero() -> None:
    result = AgentResult(
        status="completed",
        tool="t",
        name="n",
        result_text="r" * 400,
        artifacts=Artifacts("/art"),
    ).to_dict(max_result_chars=200)
    assert "; full text: /art/result.md ..." in result["resultText"]
    assert result["truncated"] == {"finalMessage": False, "resultText": True}
    assert result["chars"] == {"finalMessage": 0, "resultText": 400, "max": 200}
    bare = AgentResult(status="running", tool="t", name="n").to_dict()
    assert (bare["finalMessage"], bare["resultText"], bare["preview"]) == (None, None, None)
    assert bare["chars"] == {"finalMessage": 0, "resultText": 0, "max": bare["chars"]["max"]}


def test_a_preview_renders_what_would_be_done_and_nothing_else() -> None:
    from orchestrator.agent_tools.contract import PREVIEW_NEXT_TEXT

    result = AgentResult(
        status="idle",
        tool="herdr_spawn_agent",
        next_action="ask_user",
        preview={"action": "spawn", "target": "pi in /work"},
        elapsed_ms=100_000,
    ).to_dict()
    assert result["preview"] == {"action": "spawn", "target": "pi in /work"}
    assert render(result).splitlines() == [
        (
            "[idle · preview] herdr_spawn_agent would spawn; nothing was started or sent"
            " · 100.0s · next: ask_user"
        ),
        f"Next: {PREVIEW_NEXT_TEXT}.",
        "Would do: spawn pi in /work",
    ]


def test_a_result_about_a_bare_task_is_headed_by_its_task_id() -> None:
    result = AgentResult(status="running", tool="t", task_id="t-9").to_dict()
    assert result["header"] == "[running] t-9 · next: wait"


def test_large_diffs_are_sized_in_mebibytes() -> None:
    result = AgentResult(
        status="completed", tool="t", name="n", diff=Diff(patch="+a\n", base=None)
    ).to_dict()
    result["diff"].update(bytes=100 << 20, shownBytes=(100 << 20) - (1 << 19), truncated=True)
    assert "; patch truncated to 99.5 MiB of 100.0 MiB" in render(result)


def test_a_result_named_by_its_pane_does_not_name_the_pane_twice() -> None:
    result = AgentResult(status="running", tool="t", pane_id="w1:p2", task_id="t-9").to_dict()
    assert result["header"] == "[running] w1:p2 task t-9 · next: wait"
