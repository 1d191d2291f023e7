"""The result-check helpers fail naming the missing field and the refusal expected, where
indexing the result would have failed with a bare ``KeyError``."""

from __future__ import annotations

import pytest

from tests.results import assert_refused, field

SUCCESS = {"ok": True, "data": {"type": "ok"}}


def test_a_missing_field_is_named_with_its_path_and_the_result() -> None:
    with pytest.raises(AssertionError, match=r"expected field 'errorCode' in result \(keys"):
        field(SUCCESS, "errorCode")
    with pytest.raises(AssertionError, match=r"expected field 'error' in result\['data'\]"):
        field(SUCCESS, "data", "error", "code")
    with pytest.raises(AssertionError, match=r"result\['data'\]\['type'\] to be an object"):
        field(SUCCESS, "data", "type", "code")
    assert field(SUCCESS, "data", "type") == "ok"


def test_expecting_a_refusal_of_a_success_says_the_call_succeeded() -> None:
    with pytest.raises(AssertionError, match="expected refusal 'cwd_not_allowed', the call succ"):
        assert_refused(SUCCESS, "cwd_not_allowed")
    with pytest.raises(AssertionError, match="expected refusal 'disabled', got 'cwd_not_allowed'"):
        assert_refused({"ok": False, "errorCode": "cwd_not_allowed"}, "disabled")
    with pytest.raises(AssertionError, match="has no errorCode"):
        assert_refused({"ok": False}, "disabled")
    assert_refused({"ok": False, "errorCode": "disabled"}, "disabled")
