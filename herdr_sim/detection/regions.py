"""The screen regions a manifest rule can match against.

Each rule names a region of the detection snapshot: the whole recent text,
the bottom or top N (non-empty) lines, the body of a bordered prompt box, the
text after the last horizontal rule, Codex's prompt-marker regions, or the OSC
title / progress strings captured from the terminal.  The functions here cut
those regions out exactly as Herdr does, including its line model: lines are
split on ``\\n`` with one trailing ``\\r`` dropped, a trailing newline does not
start a new line, and offsets count each line as its length plus one.
"""

from __future__ import annotations

from collections.abc import Callable

from herdr_sim.detection.manifest import region_line_count
from orchestrator.client.protocol import RUST_WHITESPACE

__all__ = ["is_horizontal_rule", "region_text", "rust_lines"]


def rust_lines(content: str) -> list[str]:
    """Split like Rust's ``str::lines``: on ``\\n``, dropping one trailing ``\\r`` per line."""
    if not content:
        return []
    parts = content.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [part.removesuffix("\r") for part in parts]


def _line_start_offset(content: str, lines: list[str], index: int) -> int:
    total = sum(len(line) + 1 for line in lines[: min(index, len(lines))])
    return min(total, len(content))


def _slice_from_line_index(content: str, lines: list[str], index: int) -> str:
    return content[_line_start_offset(content, lines, index) :]


def _bottom_lines(content: str, count: int) -> str:
    lines = rust_lines(content)
    return _slice_from_line_index(content, lines, max(0, len(lines) - count))


def _bottom_non_empty_lines(content: str, count: int) -> str:
    lines = rust_lines(content)
    non_empty = [
        index for index in range(len(lines) - 1, -1, -1) if lines[index].strip(RUST_WHITESPACE)
    ]
    taken = non_empty[:count]
    if not taken:
        return ""
    return _slice_from_line_index(content, lines, taken[-1])


def _top_non_empty_lines(content: str, count: int) -> str:
    lines = rust_lines(content)
    taken = [index for index, line in enumerate(lines) if line.strip(RUST_WHITESPACE)][:count]
    if not taken:
        return ""
    return content[: _line_start_offset(content, lines, taken[-1] + 1)]


def _codex_prompt_line(line: str) -> bool:
    return line == "›" or line.startswith("› ")


def _codex_block_marker_line(line: str) -> bool:
    return line.startswith(("•", "■", "✗", "✓"))


def _current_codex_prompt_index(lines: list[str]) -> int | None:
    prompts = [index for index, line in enumerate(lines) if _codex_prompt_line(line)]
    if not prompts:
        return None
    prompt_index = prompts[-1]
    if any(_codex_block_marker_line(line) for line in lines[prompt_index + 1 :]):
        return None
    return prompt_index


def _after_last_prompt_marker(content: str) -> str:
    lines = rust_lines(content)
    prompts = [index for index, line in enumerate(lines) if _codex_prompt_line(line)]
    if not prompts:
        return content
    return _slice_from_line_index(content, lines, prompts[-1] + 1)


def _before_current_prompt_marker(content: str) -> str:
    lines = rust_lines(content)
    index = _current_codex_prompt_index(lines)
    if index is None:
        return content
    offset = sum(len(line) + 1 for line in lines[:index])
    return content[: min(offset, len(content))]


def _whole_recent_without_current_prompt_marker(content: str) -> str:
    return "" if _current_codex_prompt_index(rust_lines(content)) is not None else content


def _current_block_index(lines: list[str]) -> int | None:
    prompt_index = _current_codex_prompt_index(lines)
    if prompt_index is None:
        return None
    for index in range(prompt_index - 1, -1, -1):
        if _codex_block_marker_line(lines[index]):
            return index
    return None


def _current_prompt_block_marker(content: str) -> str:
    lines = rust_lines(content)
    index = _current_block_index(lines)
    return "" if index is None else lines[index]


def _after_current_prompt_block_marker(content: str) -> str:
    lines = rust_lines(content)
    index = _current_block_index(lines)
    return "" if index is None else _slice_from_line_index(content, lines, index)


def is_horizontal_rule(line: str) -> bool:
    """A line of ``─`` (any length if alone, at least 3 when followed by a label)."""
    trimmed = line.strip(RUST_WHITESPACE)
    if not trimmed:
        return False
    rule_chars = len(trimmed) - len(trimmed.lstrip("─"))
    if rule_chars == 0:
        return False
    suffix = trimmed[rule_chars:].lstrip(RUST_WHITESPACE)
    return not suffix or rule_chars >= 3


def _prompt_box_top_border_index(lines: list[str]) -> int | None:
    border_count = 0
    for index in range(len(lines) - 1, -1, -1):
        if is_horizontal_rule(lines[index]):
            border_count += 1
            if border_count == 2:
                return index
    return None


def _prompt_box_body(content: str) -> str:
    lines = rust_lines(content)
    top = _prompt_box_top_border_index(lines)
    if top is None:
        return ""
    start = _line_start_offset(content, lines, top + 1)
    end_index = next(
        (index for index in range(top + 1, len(lines)) if is_horizontal_rule(lines[index])),
        len(lines),
    )
    end = _line_start_offset(content, lines, end_index)
    return content[min(start, len(content)) : min(end, len(content))]


def _above_prompt_box(content: str) -> str:
    lines = rust_lines(content)
    top = _prompt_box_top_border_index(lines)
    if top is None:
        return content
    return content[: _line_start_offset(content, lines, top)]


def _after_last_horizontal_rule(content: str) -> str:
    last_rule_end = 0
    offset = 0
    for line in rust_lines(content):
        next_offset = offset + len(line) + 1
        if is_horizontal_rule(line):
            last_rule_end = min(next_offset, len(content))
        offset = next_offset
    return content[last_rule_end:]


def _last_non_empty_line(content: str) -> str:
    for line in reversed(rust_lines(content)):
        if line.strip(RUST_WHITESPACE):
            return line
    return ""


def region_text(spec: str, screen: str, osc_title: str = "", osc_progress: str = "") -> str:
    """The text of region ``spec`` for this snapshot (``""`` for an unknown region)."""
    trimmed = spec.strip(RUST_WHITESPACE)
    if trimmed == "osc_title":
        return osc_title
    if trimmed == "osc_progress":
        return osc_progress
    simple: Callable[[str], str] | None = {
        "whole_recent": lambda text: text,
        "after_last_prompt_marker": _after_last_prompt_marker,
        "before_current_prompt_marker": _before_current_prompt_marker,
        "whole_recent_without_current_prompt_marker": _whole_recent_without_current_prompt_marker,
        "current_prompt_block_marker": _current_prompt_block_marker,
        "after_current_prompt_block_marker": _after_current_prompt_block_marker,
        "prompt_box_body": _prompt_box_body,
        "above_prompt_box": _above_prompt_box,
        "last_non_empty_above_prompt_box": lambda text: _last_non_empty_line(
            _above_prompt_box(text)
        ),
        "after_last_horizontal_rule": _after_last_horizontal_rule,
    }.get(trimmed)
    if simple is not None:
        return simple(screen)
    counted = region_line_count(trimmed)
    if counted is None:
        return ""
    name, count = counted
    if name == "bottom_lines":
        return _bottom_lines(screen, count)
    if name == "bottom_non_empty_lines":
        return _bottom_non_empty_lines(screen, count)
    return _top_non_empty_lines(screen, count)
