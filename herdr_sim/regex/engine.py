"""The one door to RE2 (``google-re2``, which ships no type stubs): a typed compiled pattern.

RE2 matches in time linear in the text (no backtracking), which is what makes a client's
pattern safe to run inside the server: Herdr uses Rust's ``regex`` crate, which gives the same
guarantee, and Python's ``re`` does not (``(a|a)+$`` against 34 ``a``s and a ``!`` ran for
minutes). Patterns and texts go in as UTF-8 bytes: RE2 reads them as UTF-8, and a lone
surrogate in the text (``surrogatepass``) is just bytes that never match a scalar value.
RE2 releases the GIL while it matches, so a match run in a worker thread leaves the event
loop free.
"""

from __future__ import annotations

from typing import Any

import re2

__all__ = ["EngineError", "Re2Pattern"]

#: RE2's memory budget per pattern (program and DFA cache); Rust's compiled-size limit is 10 MiB.
_MAX_MEM = 16 << 20


class EngineError(ValueError):
    """RE2 refused a pattern (the translator lets through only what Rust accepts)."""


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would otherwise print every refusal on stderr
    options.max_mem = _MAX_MEM
    return options


_OPTIONS: Any = _options()


class Re2Pattern:
    """A compiled RE2 pattern answering only whether it matches."""

    __slots__ = ("_regexp", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        try:
            self._regexp: Any = re2.compile(source.encode("utf-8"), _OPTIONS)
        except re2.error as exc:
            raise EngineError(_message(exc)) from None

    def search(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text``."""
        return self._regexp.search(text.encode("utf-8", "surrogatepass")) is not None

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern matches the whole of ``text``."""
        return self._regexp.fullmatch(text.encode("utf-8", "surrogatepass")) is not None


def _message(exc: BaseException) -> str:
    detail = exc.args[0] if exc.args else ""
    return detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
