"""Rust's ``Debug`` rendering of a string, which Herdr's messages quote user text with.

Both the server (a bad request's message names the offending value as serde does) and the
simulator's ``herdr`` CLI (its Rust error texts) render strings so; it lives here, below
both, so the server never imports the CLI package. Import-free: the CLI starts per command.
"""

from __future__ import annotations

__all__ = ["rust_debug_str"]


def rust_debug_str(text: str) -> str:
    """``format!("{:?}", text)`` for a Rust ``&str``: quoted, with Rust's escapes."""
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\0":
            out.append("\\0")
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(f"\\u{{{ord(ch):x}}}")
    out.append('"')
    return "".join(out)
