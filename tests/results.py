"""Checks on tool results that fail naming what was expected, not with a ``KeyError``.

A test that indexes ``result["errorCode"]`` on a result that succeeded (so has no
``errorCode``) fails with ``KeyError: 'errorCode'``, which names neither the result nor what
the test expected. :func:`field` reads a field (or a path of fields) and fails with the
missing key, the path and the whole result; :func:`assert_refused` states the refusal a test
expects, so a call that went through reads as "expected refusal X, the call succeeded".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _shown(result: object, limit: int = 2000) -> str:
    text = repr(result)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} chars)"


def field(result: object, *path: str) -> Any:
    """``result[path[0]][path[1]]…``; an :class:`AssertionError` naming the missing field,
    the path walked so far and the result when one is absent (or a level is not an object)."""
    if not path:
        raise ValueError("field() needs at least one name")
    value = result
    for depth, name in enumerate(path):
        walked = "".join(f"[{key!r}]" for key in path[:depth])
        assert isinstance(value, Mapping), (
            f"expected result{walked} to be an object with {name!r}, got "
            f"{_shown(value)} (result: {_shown(result)})"
        )
        assert name in value, (
            f"expected field {name!r} in result{walked} (keys: {sorted(value)}); "
            f"result: {_shown(result)}"
        )
        value = value[name]
    return value


def assert_refused(result: object, code: str, context: object = None) -> None:
    """``result`` is a refusal (``ok`` false) with ``errorCode`` ``code``; else fail saying
    which code was expected and what came back (a success, another code, no code)."""
    about = "" if context is None else f" ({context})"
    assert isinstance(result, Mapping), f"expected refusal {code!r}{about}, got {_shown(result)}"
    assert result.get("ok") is False, (
        f"expected refusal {code!r}{about}, the call succeeded: {_shown(result)}"
    )
    assert "errorCode" in result, (
        f"expected refusal {code!r}{about}, the refused result has no errorCode: {_shown(result)}"
    )
    got = result["errorCode"]
    assert got == code, f"expected refusal {code!r}{about}, got {got!r}: {_shown(result)}"
