"""The simulator's pure state: ids, tab layouts and the session (no I/O, no asyncio)."""

from __future__ import annotations
