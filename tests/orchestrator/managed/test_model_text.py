"""The model-visible head bound (``orchestrator.managed.model_text``, reference A.13)."""

from __future__ import annotations

import pytest

from orchestrator.managed.model_text import (
    MODEL_TEXT_MAX_BYTES,
    MODEL_TEXT_MAX_LINES,
    bound_head,
)


def test_the_defaults_are_the_references_guess_of_pis() -> None:
    assert (MODEL_TEXT_MAX_BYTES, MODEL_TEXT_MAX_LINES) == (50 * 1024, 2000)


def test_a_text_within_both_bounds_is_unchanged() -> None:
    for text in ("", "one", "a\nb\n", "x" * 10):
        bound = bound_head(text, max_bytes=10, max_lines=2)
        assert bound.text == text and not bound.truncated
        assert bound.shown_bytes == bound.total_bytes == len(text.encode())


def test_the_line_bound_keeps_whole_lines_of_the_head() -> None:
    bound = bound_head("a\nb\nc\nd\n", max_bytes=100, max_lines=2)
    assert (bound.text, bound.truncated) == ("a\nb", True)
    assert (bound.shown_lines, bound.total_lines) == (2, 4)
    assert (bound.shown_bytes, bound.total_bytes) == (3, 8)


def test_the_byte_bound_cuts_at_a_line_boundary() -> None:
    bound = bound_head("abc\ndef\nghi", max_bytes=9, max_lines=100)
    assert (bound.text, bound.shown_lines, bound.total_lines) == ("abc\ndef", 2, 3)
    assert bound.shown_bytes == 7


def test_a_first_line_over_the_byte_bound_keeps_its_utf8_safe_head() -> None:
    bound = bound_head("é" * 10 + "\nnext", max_bytes=5, max_lines=100)
    assert (bound.text, bound.truncated, bound.shown_lines) == ("éé", True, 1)
    assert bound.shown_bytes == 4 and bound.total_bytes == 25


def test_the_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        bound_head("x", max_bytes=0)
    with pytest.raises(ValueError, match="positive"):
        bound_head("x", max_lines=0)
