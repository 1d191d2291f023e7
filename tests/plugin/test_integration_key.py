"""Which per-rule items share one integration check: the items of one test function with
the same other parameters, and no others (``pytest_herdr.integration``'s cache key). A test
parametrised over something besides the rule (two agents, two option sets) runs one check
per value; each item is judged by the report of its own value."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from pytest_herdr.integration import FIXTURE, _key


def _item(nodeid: str, **params: object) -> Any:
    """A request for a collected per-rule item with ``params`` (the rule among them)."""
    node = SimpleNamespace(nodeid=nodeid, callspec=SimpleNamespace(params=params))
    return cast(Any, SimpleNamespace(node=node))


def test_the_rules_of_one_parameter_share_a_check_and_another_parameter_gets_its_own() -> None:
    """Planted-bug check: ``_key`` ignoring the test's other parameters gives ``agent=a``
    and ``agent=b`` one key, so ``b``'s items are judged by ``a``'s report; fails here."""
    turn_a = _key(_item("t.py::test_x[a-turn]", agent="a", **{FIXTURE: "turn"}))
    resume_a = _key(_item("t.py::test_x[a-resume]", agent="a", **{FIXTURE: "resume"}))
    turn_b = _key(_item("t.py::test_x[b-turn]", agent="b", **{FIXTURE: "turn"}))
    assert turn_a == resume_a, "the rules of one parameter value must share one check"
    assert turn_a != turn_b, (
        "items with different other parameters (agent='a' vs agent='b') must each be "
        f"judged by their own check, not share key {turn_a}"
    )


def test_other_test_functions_never_share_a_check() -> None:
    first = _key(_item("t.py::test_x[turn]", **{FIXTURE: "turn"}))
    other = _key(_item("t.py::test_y[turn]", **{FIXTURE: "turn"}))
    assert first != other
