"""What each redaction removes, and what it must leave (herdr_sim/persist/redaction.py).

:func:`redact` (wire logs, failure reports) hides ``env`` values only: a report that hid
every field named ``token`` would hide the pane metadata a reader needs. :func:`redact_secrets`
(cassettes, which are shared) also hides secret-named fields and credential-shaped text, at
any depth, in lists as in objects."""

from __future__ import annotations

from typing import Any

from herdr_sim.persist.redaction import REDACTED, redact, redact_secrets, redact_text

KEY = "sk-ant-abcdefghijklmnop1234"
LINE: dict[str, Any] = {
    "id": "1",
    "method": "pane.split",
    "params": {
        "env": {"OPENAI_API_KEY": "v1", "HOME": "/h"},
        "token": "t0",
        "API_KEY": "k0",
        "tokens": ["a", "b"],
        "prompt": f"use {KEY} please",
        "count": 3,
        "nested": [{"password": "p0", "note": f"Bearer {'x' * 20}"}, 7, None],
        1: "a numeric key",
    },
}


def test_redact_hides_env_values_and_nothing_else() -> None:
    out = redact(LINE)
    assert out["params"]["env"] == {"OPENAI_API_KEY": REDACTED, "HOME": REDACTED}
    unchanged = {k: v for k, v in LINE["params"].items() if k != "env"}
    assert {k: v for k, v in out["params"].items() if k != "env"} == unchanged
    assert LINE["params"]["env"]["HOME"] == "/h"  # a copy: the line itself is untouched


def test_redact_secrets_hides_secret_fields_and_credentials_at_any_depth() -> None:
    params = redact_secrets(LINE)["params"]
    assert params["env"] == {"OPENAI_API_KEY": REDACTED, "HOME": REDACTED}
    assert (params["token"], params["API_KEY"]) == (REDACTED, REDACTED)  # any case
    assert params["tokens"] == ["a", "b"]  # pane metadata tokens are no secret
    assert params["prompt"] == f"use {REDACTED} please"
    assert params["nested"] == [{"password": REDACTED, "note": REDACTED}, 7, None]
    assert (params["count"], params[1]) == (3, "a numeric key")


def test_redact_text_replaces_each_credential_shape_in_place() -> None:
    text = f"a {KEY} b ghp_{'A' * 20} c xoxb-{'1' * 10} d AKIA{'B' * 16} e"
    assert redact_text(text) == f"a {REDACTED} b {REDACTED} c {REDACTED} d {REDACTED} e"
    assert redact_text("sk-short and plain words") == "sk-short and plain words"
