"""Client and manifest regexes, compiled with Rust's ``regex`` syntax and run in linear time.

Herdr compiles every pattern a client or a detection manifest gives it with Rust's ``regex``
crate: no backtracking, so matching takes time linear in the text, and no backreferences or
look-around (those are an ``invalid_regex`` error). The simulator keeps both properties by
translating the Rust syntax to RE2's (:mod:`.translate`) and matching with RE2
(:mod:`.engine`); Python's ``re`` never sees a pattern a client wrote. :func:`run_matching`
moves a match off the event loop so a long text never stalls other clients.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import TypeVar

from .engine import EngineError, Re2Pattern
from .translate import RustRegexError, translate

__all__ = ["RustRegex", "RustRegexError", "compile_rust_regex", "run_matching", "translate"]

#: What :func:`compile_rust_regex` returns: a pattern answering whether it matches.
RustRegex = Re2Pattern

#: RE2's refusal of a size Rust accepts reads as the crate's own size-limit error.
_SIZE_LIMIT = "Compiled regex exceeds size limit of 10485760 bytes."


@lru_cache(maxsize=256)
def compile_rust_regex(pattern: str) -> RustRegex:
    """Compile a Rust-syntax pattern; :class:`RustRegexError` (Rust's wording) if refused."""
    translated = translate(pattern)
    try:
        return Re2Pattern(translated)
    except EngineError as exc:
        text = str(exc)
        if "too large" in text or "repetition size" in text:
            raise RustRegexError(pattern, None, 0, _SIZE_LIMIT) from None
        raise RustRegexError(pattern, 0, len(pattern), text) from None


_T = TypeVar("_T")

#: Matching threads: RE2 drops the GIL while it matches, so they run beside the event loop;
#: a pool of their own keeps long matches from starving ``asyncio.to_thread`` users.
_MATCHERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="herdr-regex")


async def run_matching(function: Callable[..., _T], *args: object) -> _T:
    """Run ``function(*args)`` (a match over text already read) in a matching thread."""
    return await asyncio.get_running_loop().run_in_executor(_MATCHERS, function, *args)
