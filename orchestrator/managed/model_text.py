"""The bound on model-visible text: keep the head, at most so many bytes and lines.

Why: a managed agent's final answer can be arbitrarily long (the mailbox takes results up
to 4 MiB), and the delivery types it into the owner's conversation. The reference
(pi-herdsman.md A.2, A.13) passes every model-facing text through pi's head truncation with
pi's default limits, and for a completion keeps the full text as the result artifact, naming
its ``result:`` ref instead of an overflow path. This module holds the bound only; what
replaces the cut part (the ref, a path) is the caller's wording.

The limits are pi's ``DEFAULT_MAX_BYTES`` / ``DEFAULT_MAX_LINES`` as the reference *guessed*
them (A.13 marks "50 KiB / 2000 lines" as a guess: it never read pi's constants). The cut is
at a line boundary: whole lines are kept while both limits allow; when even the first line is
over the byte limit, its UTF-8-safe head is kept (never an empty text for a non-empty one).
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.managed.utf8 import utf8_head, utf8_len

__all__ = ["MODEL_TEXT_MAX_BYTES", "MODEL_TEXT_MAX_LINES", "BoundedText", "bound_head"]

MODEL_TEXT_MAX_BYTES = 50 * 1024
"""Bytes of model-visible text kept (pi's default as the reference guessed it: 50 KiB)."""

MODEL_TEXT_MAX_LINES = 2000
"""Lines of model-visible text kept (pi's default as the reference guessed it)."""


@dataclass(frozen=True)
class BoundedText:
    """The kept head of a text and what it was cut from."""

    text: str
    truncated: bool
    shown_lines: int
    total_lines: int
    shown_bytes: int
    total_bytes: int


def _lines(text: str) -> list[str]:
    """The lines of ``text``; a final newline ends the last line, it opens no new one."""
    if not text:
        return []
    body = text.removesuffix("\n")
    return body.split("\n")


def bound_head(
    text: str, *, max_bytes: int = MODEL_TEXT_MAX_BYTES, max_lines: int = MODEL_TEXT_MAX_LINES
) -> BoundedText:
    """The head of ``text`` within ``max_bytes`` UTF-8 bytes and ``max_lines`` lines.

    Unchanged (``truncated`` false) when it fits both; else whole lines while both allow
    (joined by newlines, no trailing one), or the first line's UTF-8-safe head when even it
    is over ``max_bytes``. ``shown_lines`` counts the lines whose beginning is kept.
    """
    if max_bytes < 1 or max_lines < 1:
        raise ValueError("the bounds must be positive")
    lines = _lines(text)
    total_bytes = utf8_len(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return BoundedText(text, False, len(lines), len(lines), total_bytes, total_bytes)
    kept: list[str] = []
    used = 0
    for line in lines[:max_lines]:
        cost = utf8_len(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            break
        kept.append(line)
        used += cost
    if not kept:
        head, _ = utf8_head(lines[0], max_bytes)
        kept, used = [head], utf8_len(head)
    return BoundedText("\n".join(kept), True, len(kept), len(lines), used, total_bytes)
