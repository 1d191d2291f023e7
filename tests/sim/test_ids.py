"""Herdr's public id scheme."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from herdr_sim.model.ids import (
    decode_number,
    encode_number,
    new_terminal_id,
    pane_public_id,
    tab_public_id,
    workspace_public_id,
)


def test_pinned_encodings() -> None:
    assert [encode_number(n) for n in (1, 9, 10, 31, 32, 33, 34)] == [
        "1", "9", "A", "Z", "0", "11", "12",
    ]  # fmt: skip
    assert encode_number(0) == "0"


def test_public_id_forms() -> None:
    assert workspace_public_id(10) == "wA"
    assert tab_public_id("w1", 2) == "w1:t2"
    assert pane_public_id("w1", 33) == "w1:p11"


@given(st.integers(min_value=1, max_value=10**9))
def test_encoding_round_trips(value: int) -> None:
    assert decode_number(encode_number(value)) == value


@given(st.integers(min_value=1, max_value=5000), st.integers(min_value=1, max_value=5000))
def test_distinct_numbers_have_distinct_spellings(a: int, b: int) -> None:
    assert (encode_number(a) == encode_number(b)) == (a == b)


def test_decode_rejects_foreign_characters() -> None:
    assert decode_number("") is None
    assert decode_number("I") is None  # not in the alphabet (no I, L, O, U)
    assert decode_number("1-") is None


def test_terminal_ids_are_unique_and_prefixed() -> None:
    ids = {new_terminal_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(tid.startswith("term_") for tid in ids)
