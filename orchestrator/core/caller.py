"""Who is calling a tool: the ``herdr-orchestrator`` command, or an MCP client (and which).

Why a context variable: the registry's ``run_tool`` is the one path every server takes, and its
signature is shared by every runner; the caller matters to two of its steps (the policy's
``allowAgentArgs`` default differs for MCP, and the audit log names the caller), so the MCP
server sets it around a call (:func:`calling_as`) and everything below reads
:func:`current_caller`. anyio copies the context into the worker thread a call runs in, so the
value set by the server's handler is the one the handler's thread sees. Unset, the caller is the
command line (``cli``), which is what a one-off ``herdr-orchestrator call`` is.

The client's name and version come from the MCP ``initialize`` request, i.e. from the client
itself: :meth:`Caller.label` keeps them only when they look like a product name, so an odd or
secret-looking value never reaches the audit log as text.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

CallerKind = Literal["cli", "mcp"]

#: what a client's name or version may look like to be written as text
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._@/+-]{0,63}")


@dataclass(frozen=True)
class Caller:
    """The caller of a tool: its kind and, for MCP, the client's declared name and version."""

    kind: CallerKind = "cli"
    client_name: str | None = None
    client_version: str | None = None

    def label(self) -> str:
        """``cli``, ``mcp:claude-code/1.2.3``; a value that is not a plain product name is
        written as ``sha256:<first 12 hex digits>`` instead."""
        if self.kind == "cli":
            return "cli"
        parts = [_plain(self.client_name or "unknown")]
        if self.client_version:
            parts.append(_plain(self.client_version))
        return "mcp:" + "/".join(parts)


def _plain(value: str) -> str:
    if _PLAIN.fullmatch(value) and not _looks_secret(value):
        return value
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:12]


def _looks_secret(value: str) -> bool:
    """A long run of letters and digits (a key or token), not a product name."""
    return re.search(r"[A-Za-z0-9_-]{24,}", value) is not None


CLI = Caller()
_CALLER: ContextVar[Caller] = ContextVar("herdr_orchestrator_caller", default=CLI)


def current_caller() -> Caller:
    """The caller of the tool call running in this context (``cli`` when none was set)."""
    return _CALLER.get()


@contextlib.contextmanager
def calling_as(caller: Caller) -> Iterator[None]:
    """Run the block as ``caller`` (the MCP server wraps each call in it)."""
    token = _CALLER.set(caller)
    try:
        yield
    finally:
        _CALLER.reset(token)


__all__ = ["CLI", "Caller", "CallerKind", "calling_as", "current_caller"]
