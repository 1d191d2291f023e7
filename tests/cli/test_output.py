"""Byte-level output rules: serde_json rendering and Rust's Debug text."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from herdr_sim.herdr_cli.flags import expand_equals, is_finite, parse_f32, parse_unsigned
from herdr_sim.herdr_cli.output import dumps, rust_debug_str


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.5, "0.5"),
        (1.0, "1.0"),
        (1e-5, "0.00001"),
        (1e-6, "1e-6"),
        (2.5e-7, "2.5e-7"),
        (1e16, "1e16"),
        (1.5e20, "1.5e20"),
        (1234567890123456.0, "1234567890123456.0"),
        (-0.0, "-0.0"),
    ],
)
def test_floats_render_like_ryu(value: float, text: str) -> None:
    assert dumps(value) == text


def test_objects_sort_keys_and_strings_escape_like_serde() -> None:
    value = {"b": [1, True, None], "a": {"y": 'é\x1b"\\\n', "x": 2}}
    assert dumps(value) == '{"a":{"x":2,"y":"é\\u001b\\"\\\\\\n"},"b":[1,true,null]}'
    assert dumps({"b": 1, "a": 2}, sort_keys=False) == '{"b":1,"a":2}'


def test_rust_debug_strings() -> None:
    assert rust_debug_str('a"b\\c\n\t\x01é') == '"a\\"b\\\\c\\n\\t\\u{1}é"'


def test_rust_number_parsing_is_stricter_than_python() -> None:
    assert parse_unsigned("+5", 32) == 5
    assert parse_unsigned(" 5", 32) is None
    assert parse_unsigned("1_0", 32) is None
    assert parse_unsigned("٥", 32) is None
    assert parse_unsigned("4294967296", 32) is None
    assert parse_unsigned("4294967296", 64) == 4294967296
    assert parse_f32("0.333") == 0.333
    assert parse_f32(".5") == 0.5
    assert parse_f32("5.") == 5.0
    assert parse_f32("1e39") == float("inf")
    assert parse_f32("1_0.0") is None
    assert parse_f32(".") is None


@given(st.text(alphabet="+-0123456789 _٥²a\n", max_size=22), st.sampled_from([32, 64]))
def test_unsigned_parsing_is_rusts_grammar(text: str, bits: int) -> None:
    """Optional ``+`` then ASCII digits only, in range (checked without a regex)."""
    valid = re.fullmatch(r"\+?[0-9]+", text) is not None and int(text) < 2**bits
    assert parse_unsigned(text, bits) == (int(text) if valid else None)


@pytest.mark.parametrize("value", [0.0, -0.0, 1e308, -5e-324, math.inf, -math.inf, math.nan])
def test_is_finite_is_math_isfinite(value: float) -> None:
    assert is_finite(value) is math.isfinite(value)


def test_non_finite_floats_render_as_null() -> None:
    assert dumps([math.inf, -math.inf, math.nan]) == "[null,null,null]"


def test_expand_equals_splits_only_value_options() -> None:
    args = ["--match=a=b", "name=value", "--raw=value", "--bogus=value", "--timeout=5000"]
    assert expand_equals(args, ("--match", "--timeout")) == [
        "--match", "a=b", "name=value", "--raw=value", "--bogus=value", "--timeout", "5000",
    ]  # fmt: skip
