"""Remembered schema verdicts (``pytest_herdr.verdicts``): a verdict served from the memo is
the one the validator gives, a request's ``id`` is left out of the key only where the
schema cannot see it, and the table stays bounded."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_herdr.contracts import ContractChecker, SchemaBundle
from pytest_herdr.verdicts import VerdictMemo, ignores


def bundle(id_rule: dict[str, Any] | None = None) -> SchemaBundle:
    """A two-method bundle; ``id_rule``, when given, is what ``ping``'s variant says of ids."""
    ping: dict[str, Any] = {
        "type": "object",
        "required": ["method", "params"],
        "properties": {
            "method": {"const": "ping", "type": "string"},
            "params": {"type": "object", "properties": {"n": {"type": "integer"}}},
        },
    }
    if id_rule is not None:
        ping["properties"]["id"] = id_rule
    echo = {
        "type": "object",
        "properties": {"method": {"const": "echo"}, "params": {"type": "object"}},
    }
    document = {
        "protocol": 22,
        "schemas": {"request": {"properties": {"id": {"type": "string"}}, "oneOf": [ping, echo]}},
    }
    return SchemaBundle(document, "test bundle")


def ping(request_id: str, n: Any) -> dict[str, Any]:
    return {"id": request_id, "method": "ping", "params": {"n": n}}


def messages(checker: ContractChecker, line: dict[str, Any]) -> list[str]:
    return [violation.message for violation in checker.check_request(line)]


@pytest.mark.parametrize(
    ("schema", "blind"),
    [
        ({"type": "object", "properties": {"method": {}}, "required": ["method"]}, True),
        ({"type": "object", "title": "t", "x-herdr-result-type": "pong"}, True),
        ({"properties": {"id": {"type": "string"}}}, False),
        ({"required": ["id"]}, False),
        ({"properties": {"method": {}}, "additionalProperties": False}, False),
        ({"patternProperties": {"^i": {"type": "integer"}}}, False),
        ({"allOf": [{"properties": {"method": {}}}]}, False),
        ({"$ref": "#/somewhere"}, False),
        (True, False),
    ],
)
def test_ignores_only_schemas_that_cannot_see_the_member(schema: Any, blind: bool) -> None:
    assert ignores(schema, "id") is blind


def test_a_remembered_verdict_is_the_validators_own_and_new_ids_reuse_it() -> None:
    checker = ContractChecker(bundle())
    memo = checker.bundle.verdicts
    assert messages(checker, ping("a", 1)) == []
    bad = messages(checker, ping("b", "one"))
    assert bad and "'one' is not of type 'integer'" in bad[0]
    misses = memo.misses
    for index in range(20):
        assert messages(checker, ping(f"r{index}", 1)) == []
        assert messages(checker, ping(f"s{index}", "one")) == bad  # a remembered error too
    assert memo.misses == misses and memo.hits >= 40
    # a different body is a different verdict
    assert messages(checker, ping("c", 2)) == [] and memo.misses == misses + 1


def test_an_id_the_schema_constrains_stays_in_the_key() -> None:
    checker = ContractChecker(bundle(id_rule={"type": "string", "pattern": "^ok"}))
    assert messages(checker, ping("ok-1", 1)) == []
    refused = messages(checker, ping("no-1", 1))
    assert refused and "does not match '^ok'" in refused[0]
    assert messages(checker, ping("ok-2", 1)) == []


def test_the_table_drops_the_least_recently_used_and_keeps_no_long_instance() -> None:
    memo = VerdictMemo(entries=2, max_chars=50)
    first, second, third = (memo.key("#/p", {"n": n}) for n in (1, 2, 3))
    assert first and second and third
    memo.put(first, ())
    memo.put(second, (("bad", ("n",)),))
    assert memo.get(first) == ()  # now the most recent
    memo.put(third, ())
    assert memo.get(second) is None and memo.get(first) == () and memo.get(third) == ()
    assert memo.key("#/p", {"text": "x" * 60}) is None
    assert memo.key("#/p", {"thing": object()}) is None  # not JSON: never kept
    # key order does not matter; a bool is not the integer 1
    assert memo.key("#/p", {"a": 1, "b": 2}) == memo.key("#/p", {"b": 2, "a": 1})
    assert memo.key("#/p", {"a": True}) != memo.key("#/p", {"a": 1})
