"""One writer per target at a time, across threads and processes: two prompts never merge.

Why: typing into an agent is not atomic. Herdr types a prompt's text and presses Enter a moment
later; a second prompt typed into the same pane in between joins the first, and the agent gets
one merged input instead of two turns. An MCP host can issue calls concurrently, and several
orchestrators (two hosts, a shell) can drive one Herdr. So every call that types into a target
holds an exclusive ``flock`` on a file named for that target under the state directory for its
whole run (a prompt that waits keeps the agent to itself until its turn ends).

Which calls: a tool whose declaration names the fields of the target it types into
(:attr:`~orchestrator.core.tool.Traits.lock`) locks the first of them given — the low-level
prompt, send-text and run tools, ``herdr_message_agent`` and the managed steer, interrupt and
reply. A tool built without a declaration gets one from its name and risk (not R0, and its
name says it types: ``prompt``, ``send_text``, ``send_keys``, ``message`` or ``pane_run``), so
tools added later are covered. A preview types nothing and takes no lock.

The key is the target *as addressed*: an agent addressed once by name and once by its pane id
takes two locks. Address one agent one way (the policy's ``agentNames`` makes that the name).

The wait is bounded (``targetLockTimeoutMs``); a call that cannot get the lock in time is
refused as ``target_busy`` and has typed nothing. Locks are advisory files (``locks/<sha256 of
the target>.lock``, 0600, opened without following links) that are never deleted: removing one
while another process waits on it would let a third take a fresh file and type alongside.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.client.file_trust import locks
from orchestrator.client.file_trust.private_files import ensure_private_dir

if TYPE_CHECKING:
    from orchestrator.core.tool import Tool

LOCKS_DIR = "locks"


class TargetBusy(TimeoutError):
    """Another call held the target's lock for the whole wait."""


def lock_key(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """The target ``tool`` types into with ``arguments``, or None (no lock needed)."""
    traits = tool.declared
    if tool.risk == "R0" or (traits.preview and arguments.get(traits.preview) is True):
        return None
    for param in traits.lock:
        value = arguments.get(param)
        if isinstance(value, str) and value:
            return value
    return None


def lock_path(state_dir: Path, key: str) -> Path:
    """The lock file of ``key`` (its name a hash: a target may hold any character)."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return state_dir / LOCKS_DIR / f"{digest}.lock"


@contextlib.contextmanager
def target_lock(state_dir: Path, key: str, timeout_s: float) -> Iterator[None]:
    """Hold ``key``'s lock for the block; :class:`TargetBusy` after ``timeout_s`` of waiting."""
    path = lock_path(state_dir, key)
    ensure_private_dir(path.parent)
    busy = f"the target is busy (another call typed into it for {timeout_s:g} s)"
    with locks.held(path, timeout=timeout_s, busy=lambda: TargetBusy(busy)):
        yield


__all__ = [
    "LOCKS_DIR",
    "TargetBusy",
    "lock_key",
    "lock_path",
    "target_lock",
]
