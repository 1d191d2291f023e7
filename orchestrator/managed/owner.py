"""How a managed agent's result or attention reaches its owning controller.

Seed 002 pushes results and health attention to the exact direct owner, *only while that
owner is idle*. The lead controller is the process serving the tools for one host session; it
can push only when that host is itself an agent in a Herdr pane:

* **PaneOwner** — the host has ``HERDR_PANE_ID``. The text is submitted to the agent in that
  pane with Herdr's ``agent.prompt`` (the path ``herdr_message_agent`` uses), and only while
  Herdr reports that agent **idle** or **done** (:data:`IDLE_STATUSES`). ``working`` (a turn
  runs), ``blocked`` (it waits for interactive input: typing would answer its question),
  ``unknown``, an agent whose launch is still pending, or a pane with no recognised agent all
  count as *not idle*: nothing is typed and :meth:`PaneOwner.deliver` returns False, so the
  caller keeps the item and offers it again later. A host that is not (yet) a recognised agent
  therefore never gets pushed text; its items stay on the pull path.
* **PullOwner** — no ``HERDR_PANE_ID``: there is no push path. ``deliver`` always returns
  False and the caller keeps the item for ``agent_list`` (the pull path, documented in
  docs/orchestrator/managed-agents.md).

``agent.prompt`` types the text and presses Enter once, so a newline would submit a partial
prompt (see :mod:`orchestrator.agent_tools.envelope`). A short single-line text is typed as
is; anything else is written to a private file (0600 in a 0700 spool directory, never through
a link) and the owner gets ONE line: the text's first line and the file's path. No shell is
involved (Herdr's API is called with the text as data) and the text is never logged — only its
length.

Checking idle and then prompting is not atomic: a user who starts a turn in between gets the
text queued as pi queues typed input. That window is Herdr's granularity, not ours to close.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Protocol

from orchestrator.agent_tools.envelope import INLINE_LIMIT, one_line
from orchestrator.client.errors import ClientError
from orchestrator.client.file_trust import private_files as safe_fs
from orchestrator.client.sync import HerdrClient
from orchestrator.core.config import load_config
from orchestrator.logs import task_logger

__all__ = [
    "IDLE_STATUSES",
    "OwnerChannel",
    "OwnerKind",
    "PaneOwner",
    "PullOwner",
    "owner_channel",
]

logger = task_logger(__name__)

OwnerKind = Literal["pane", "pull"]

IDLE_STATUSES = frozenset({"idle", "done"})
"""Herdr agent statuses in which the owner may receive pushed text."""

SPOOL_KEEP = 200
"""Spooled message files kept (the oldest are removed past this many)."""

_POINTER_HEAD = 300
"""Characters of the text's first line kept in the one-line pointer."""


class OwnerChannel(Protocol):
    """Where results and attention for one controller go."""

    @property
    def kind(self) -> OwnerKind: ...

    def is_idle(self) -> bool:
        """Whether the owner may receive pushed text now."""
        ...

    def deliver(self, text: str) -> bool:
        """Push ``text`` now; True only when the owner received it (False: keep it)."""
        ...


class PullOwner:
    """No push path: the owner reads kept items through ``agent_list``.

    ``is_idle`` is True because a pull owner is never interrupted: health scans run for it and
    whatever they find is kept for the pull path.
    """

    @property
    def kind(self) -> OwnerKind:
        return "pull"

    def is_idle(self) -> bool:
        return True

    def deliver(self, text: str) -> bool:
        return False


class PaneOwner:
    """The owner is the agent in Herdr pane ``pane_id``; text goes to its prompt while idle."""

    def __init__(self, client: HerdrClient, pane_id: str, spool_dir: Path) -> None:
        if not pane_id:
            raise ValueError("PaneOwner needs a pane id")
        self.client = client
        self.pane_id = pane_id
        self.spool_dir = spool_dir
        self._lock = threading.Lock()
        self._seq = itertools.count(1)

    @property
    def kind(self) -> OwnerKind:
        return "pane"

    def status(self) -> str | None:
        """Herdr's status of the owner's agent; None when the pane hosts none (or Herdr did
        not answer). A launch still pending reads as ``unknown``."""
        try:
            info = self.client.agent_get(self.pane_id)
        except ClientError as exc:
            logger.debug("owner pane %s: no agent status (%s)", self.pane_id, type(exc).__name__)
            return None
        if info.pane_id and info.pane_id != self.pane_id:
            return None  # the target resolved to another pane: not our owner
        return "unknown" if info.launch_pending else info.agent_status

    def is_idle(self) -> bool:
        return self.status() in IDLE_STATUSES

    def deliver(self, text: str) -> bool:
        if not text.strip():
            raise ValueError("nothing to deliver: the text is empty")
        with self._lock:  # one prompt at a time into the owner's editor
            if not self.is_idle():
                return False
            try:
                prompt = self._prompt_for(text)
            except OSError as exc:
                logger.warning(
                    "owner delivery (%d chars) not spooled: %s", len(text), type(exc).__name__
                )
                return False
            try:
                self.client.agent_prompt(self.pane_id, prompt)
            except ClientError as exc:
                logger.warning(
                    "owner delivery (%d chars) to pane %s failed: %s",
                    len(text),
                    self.pane_id,
                    getattr(exc, "code", type(exc).__name__),
                )
                return False
            logger.debug("delivered %d chars to owner pane %s", len(text), self.pane_id)
            return True

    def _prompt_for(self, text: str) -> str:
        """The one line typed into the owner's prompt (the text itself when it is one)."""
        if one_line(text) == text and len(text) <= INLINE_LIMIT:
            return text
        first = one_line(text.strip().splitlines()[0])
        if len(first) > _POINTER_HEAD:
            first = first[: _POINTER_HEAD - 1] + "…"
        path = self._spool(text)
        return f"{first} [full message: {path} - read it]"

    def _spool(self, text: str) -> Path:
        safe_fs.ensure_private_dir(self.spool_dir)
        name = f"{os.getpid()}-{next(self._seq):06d}-{secrets.token_hex(4)}.md"
        body = text if text.endswith("\n") else text + "\n"
        path = safe_fs.write_atomic(self.spool_dir / name, body)
        self._prune()
        return path

    def _prune(self) -> None:
        try:
            files = sorted(
                (p.stat(follow_symlinks=False).st_mtime_ns, p.name)
                for p in self.spool_dir.iterdir()
                if p.suffix == ".md"
            )
        except OSError:
            return  # a file vanished while listing: prune next time
        for _mtime, name in files[: max(0, len(files) - SPOOL_KEEP)]:
            with contextlib.suppress(OSError):
                (self.spool_dir / name).unlink()


def owner_channel(
    env: Mapping[str, str], client: HerdrClient, *, spool_dir: Path | None = None
) -> OwnerChannel:
    """The owner channel of a controller whose host process has environment ``env``.

    ``HERDR_PANE_ID`` (non-blank) → :class:`PaneOwner` on that pane, spooling long texts under
    ``spool_dir`` (default ``<stateDir>/managed/owner-messages``); otherwise :class:`PullOwner`.
    """
    pane_id = (env.get("HERDR_PANE_ID") or "").strip()
    if not pane_id:
        return PullOwner()
    if spool_dir is None:
        spool_dir = load_config(env).state_dir.expanduser() / "managed" / "owner-messages"
    return PaneOwner(client, pane_id, spool_dir)
