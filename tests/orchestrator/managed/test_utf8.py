"""Byte bounds that never split a UTF-8 character (head, tail, head+tail around a marker)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.managed.utf8 import utf8_head, utf8_len, utf8_middle, utf8_tail

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=400
)
LIMIT = st.integers(min_value=0, max_value=1200)


def test_examples() -> None:
    assert utf8_head("aé€😀", 3) == ("aé", True)
    assert utf8_head("aé€😀", 2) == ("a", True)
    assert utf8_tail("aé€😀", 4) == ("😀", True)
    assert utf8_tail("aé€😀", 6) == ("😀", True)
    assert utf8_tail("aé€😀", 7) == ("€😀", True)
    assert utf8_head("abc", 3) == ("abc", False)
    assert utf8_middle("abcdefghij", 7, "..") == ("abc..ij", True)
    assert utf8_middle("abc", 3, "..") == ("abc", False)


@given(TEXT, LIMIT)
def test_head_is_the_longest_whole_prefix(text: str, limit: int) -> None:
    head, cut = utf8_head(text, limit)
    assert text.startswith(head)
    assert utf8_len(head) <= limit or not cut
    assert cut == (utf8_len(text) > limit)
    if cut:  # one more character would not fit
        assert utf8_len(text[: len(head) + 1]) > limit


@given(TEXT, LIMIT)
def test_tail_is_the_longest_whole_suffix(text: str, limit: int) -> None:
    tail, cut = utf8_tail(text, limit)
    assert text.endswith(tail)
    assert cut == (utf8_len(text) > limit)
    if cut:
        assert utf8_len(tail) <= limit
        assert utf8_len(text[len(text) - len(tail) - 1 :]) > limit


@given(TEXT, st.integers(min_value=10, max_value=1200))
def test_middle_keeps_head_and_tail_within_the_limit(text: str, limit: int) -> None:
    marker = "\x00[...]\x00"
    out, cut = utf8_middle(text, limit, marker)
    assert cut == (utf8_len(text) > limit)
    if cut:
        assert utf8_len(out) <= limit
        head, _, tail = out.partition(marker)
        assert text.startswith(head) and text.endswith(tail)
    else:
        assert out == text
