"""Label grammar, automatic labels and collisions (seed 002, reference A.7)."""

from __future__ import annotations

import pytest

from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.labels import (
    auto_label_candidates,
    choose_label,
    claim_label,
    is_valid_label,
    validate_label,
)

OP = "agent_delegate"


@pytest.mark.parametrize("label", ["a", "implementer", "a1_b-c", "x" + "y" * 31, "r2-d2"])
def test_valid_labels(label: str) -> None:
    assert is_valid_label(label)
    assert validate_label(label, operation=OP) == label


@pytest.mark.parametrize(
    "label",
    [
        "",
        "evil\n",  # `$` would accept this; fullmatch must not
        "\nevil",
        "Implementer",
        "1abc",
        "-abc",
        "_abc",
        "a b",
        "a.b",
        "a/b",
        "x" * 33,
        "ünï",
        None,
        7,
    ],
)
def test_invalid_labels_are_invalid_request(label: object) -> None:
    assert not is_valid_label(label)
    with pytest.raises(ManagedAgentError) as info:
        validate_label(label, operation=OP)
    err = info.value.to_dict()
    assert err["category"] == "invalid_request"
    assert err["operation"] == OP
    assert "lowercase letter" in err["message"] and "32" in err["message"]
    assert err["rollbackOccurred"] is False and err["retryAttempted"] is False
    assert err["nextAction"]


def test_explicit_collision_is_agent_label_exists_with_structured_shape() -> None:
    with pytest.raises(ManagedAgentError) as info:
        claim_label("reviewer", {"reviewer"}, operation=OP)
    err = info.value.to_dict()
    assert set(err) == {
        "category",
        "message",
        "operation",
        "rollbackOccurred",
        "retryAttempted",
        "ids",
        "nextAction",
    }
    assert err["category"] == "agent_label_exists"
    assert err["message"] == "Agent label already exists: reviewer"
    assert err["ids"] == {"label": "reviewer"}


def test_grammar_is_checked_before_collision() -> None:
    with pytest.raises(ManagedAgentError) as info:
        claim_label("Bad", {"Bad"}, operation=OP)
    assert info.value.category == "invalid_request"


def test_explicit_requested_label_never_falls_back_to_auto() -> None:
    with pytest.raises(ManagedAgentError) as info:
        choose_label("reviewer", {"mine"}, "mine", operation=OP)
    assert info.value.category == "agent_label_exists"
    assert choose_label("reviewer", {"reviewer"}, "mine", operation=OP) == "mine"


def test_auto_label_is_definition_name_then_numbered_suffix() -> None:
    assert choose_label("implementer", set(), operation=OP) == "implementer"
    assert choose_label("implementer", {"implementer"}, operation=OP) == "implementer-2"
    taken = {"implementer", "implementer-2", "implementer-3"}
    assert choose_label("implementer", taken, operation=OP) == "implementer-4"


def test_auto_label_reuses_a_freed_lower_suffix() -> None:
    assert choose_label("a", {"a", "a-3"}, operation=OP) == "a-2"


def test_auto_label_exhausted_is_agent_label_exists() -> None:
    taken = set(auto_label_candidates("w"))
    assert len(taken) == 999
    with pytest.raises(ManagedAgentError) as info:
        choose_label("w", taken, operation=OP)
    assert info.value.category == "agent_label_exists"
    assert "Unable to choose agent label" in info.value.message


def test_auto_candidates_never_break_the_grammar() -> None:
    name = "x" * 30  # "-2" fits (32), "-10" does not (33)
    candidates = auto_label_candidates(name)
    assert candidates == [name, *(f"{name}-{n}" for n in range(2, 10))]
    assert all(is_valid_label(c) for c in candidates)


@pytest.mark.parametrize("definition", ["Reviewer", "x" * 33, "code review"])
def test_definition_name_that_cannot_form_a_label_needs_an_explicit_label(
    definition: str,
) -> None:
    with pytest.raises(ManagedAgentError) as info:
        choose_label(definition, set(), operation=OP)
    assert info.value.category == "invalid_request"
    assert choose_label(definition, set(), "ok", operation=OP) == "ok"


def test_unknown_error_category_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown managed-agent error category"):
        ManagedAgentError("nope", "m", operation=OP)  # type: ignore[arg-type]
