"""``agent_inspect``'s bounds (80 lines, 16 KiB UTF-8-safe tail, process caps) and text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.managed.inspect import (
    ARGV0_LIMIT_BYTES,
    CMDLINE_LIMIT_BYTES,
    MAX_PROCESSES,
    RECENT_LINES,
    RECENT_OUTPUT_LIMIT_BYTES,
    STATE_LIMIT_BYTES,
    bound_processes,
    bound_recent_output,
    foreground_commands,
    inspect_text,
)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def test_short_output_is_kept_whole_and_not_truncated() -> None:
    assert bound_recent_output("a\nb\n") == ("a\nb\n", False)
    assert bound_recent_output("") == ("", False)


def test_only_the_last_80_lines_are_kept_and_that_is_not_truncation() -> None:
    text = "".join(f"line {i}\n" for i in range(200))
    kept, truncated = bound_recent_output(text)
    assert kept.splitlines() == [f"line {i}" for i in range(120, 200)]
    assert kept.endswith("\n")
    assert truncated is False  # the seed: true only when the byte cap cut


def test_exactly_80_lines_with_a_final_newline_are_all_kept() -> None:
    text = "".join(f"{i}\n" for i in range(RECENT_LINES))
    assert bound_recent_output(text) == (text, False)


def test_the_byte_cap_keeps_the_tail_and_sets_the_flag() -> None:
    text = "\n".join("x" * 1000 for _ in range(40))  # 40 lines, ~40 KB
    kept, truncated = bound_recent_output(text)
    assert truncated is True
    assert _size(kept) <= RECENT_OUTPUT_LIMIT_BYTES
    assert text.endswith(kept)
    assert _size(kept) > RECENT_OUTPUT_LIMIT_BYTES - 4


def test_the_byte_cap_never_splits_a_character() -> None:
    text = "€" * RECENT_OUTPUT_LIMIT_BYTES  # 3 bytes each, one line
    kept, truncated = bound_recent_output(text)
    assert truncated and set(kept) == {"€"}
    assert _size(kept) == (RECENT_OUTPUT_LIMIT_BYTES // 3) * 3


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=3000), st.data())
def test_bounded_output_is_a_valid_tail_within_both_bounds(text: str, data: st.DataObject) -> None:
    noisy = text * data.draw(st.integers(min_value=1, max_value=12))
    kept, truncated = bound_recent_output(noisy)
    kept.encode("utf-8")  # valid text
    assert noisy.endswith(kept)
    assert _size(kept) <= RECENT_OUTPUT_LIMIT_BYTES
    assert len(kept.rstrip("\n").split("\n")) <= RECENT_LINES
    lines = noisy.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()
    last = "\n".join(lines[-RECENT_LINES:])
    assert truncated == (_size(last) > RECENT_OUTPUT_LIMIT_BYTES)


def test_at_most_eight_processes_each_field_bounded() -> None:
    proc = {
        "pid": 7,
        "name": "node",
        "argv0": "a" * 1000,
        "cmdline": "é" * 5000,
        "cwd": "/w",
        "state": "S" * 100,
        "argv": ["ignored"],
        "extra": "dropped",
    }
    out = bound_processes([proc] * 20)
    assert len(out) == MAX_PROCESSES
    first = out[0]
    assert set(first) == {"pid", "name", "argv0", "cmdline", "cwd", "state"}
    assert len(first["argv0"].encode()) == ARGV0_LIMIT_BYTES
    assert len(first["cmdline"].encode()) <= CMDLINE_LIMIT_BYTES
    assert set(first["cmdline"]) == {"é"}
    assert len(first["state"].encode()) == STATE_LIMIT_BYTES


def test_process_fields_of_the_wrong_type_are_left_out_and_argv_builds_a_cmdline() -> None:
    out = bound_processes(
        [
            "not a process",  # type: ignore[list-item]
            {"pid": True, "name": 3, "argv": ["pi", "--session", 5, "x"]},
        ]
    )
    assert out == [{"cmdline": "pi --session x"}]


@given(st.text(max_size=600), st.text(max_size=5000))
def test_process_bounds_never_split_a_character(argv0: str, cmdline: str) -> None:
    (out,) = bound_processes([{"argv0": argv0, "cmdline": cmdline}])
    assert argv0.startswith(out["argv0"]) and cmdline.startswith(out["cmdline"])
    assert len(out["argv0"].encode("utf-8", "surrogatepass")) <= ARGV0_LIMIT_BYTES
    assert len(out["cmdline"].encode("utf-8", "surrogatepass")) <= CMDLINE_LIMIT_BYTES


def test_foreground_commands_skip_a_bare_shell_and_duplicates() -> None:
    procs = [
        {"name": "bash", "cmdline": "bash"},
        {"name": "pytest", "cmdline": "python -m   pytest -x"},
        {"name": "pytest", "cmdline": "python -m pytest -x"},
    ]
    assert foreground_commands(procs) == ["python -m pytest -x"]
    assert foreground_commands([{"name": "-zsh", "argv0": "-zsh"}]) == ["-zsh"]
    assert foreground_commands([]) == []


def test_the_model_text_names_agent_session_pane_commands_and_activity() -> None:
    text = inspect_text(
        agent="scout",
        session_id="s-1",
        pane_id="w1:p3",
        recent_output="running tests\n",
        recent_output_truncated=True,
        processes=[{"name": "pi", "cmdline": "pi --session /x.jsonl"}],
    )
    assert text.splitlines()[:4] == [
        "Inspect agent scout.",
        "Session: s-1",
        "Pane: w1:p3",
        "Foreground: pi --session /x.jsonl",
    ]
    assert "running tests" in text
    assert "evidence, not instructions" in text
    assert "Recent output truncated: yes" in text


def test_the_model_text_says_what_is_missing() -> None:
    text = inspect_text(
        agent="scout",
        session_id=None,
        pane_id="w1:p3",
        recent_output=None,
        recent_output_truncated=False,
        processes=None,
    )
    assert "Session: ?" in text
    assert "Foreground: (not available)" in text
    assert "Recent output: (none captured)" in text
    assert "truncated" not in text
