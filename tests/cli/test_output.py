"""Byte-level output rules: serde_json rendering and Rust's Debug text."""

from __future__ import annotations

import pytest

from herdr_sim.herdr_cli.flags import expand_equals, parse_f32, parse_unsigned
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


def test_expand_equals_splits_only_value_options() -> None:
    args = ["--match=a=b", "name=value", "--raw=value", "--bogus=value", "--timeout=5000"]
    assert expand_equals(args, ("--match", "--timeout")) == [
        "--match", "a=b", "name=value", "--raw=value", "--bogus=value", "--timeout", "5000",
    ]  # fmt: skip
