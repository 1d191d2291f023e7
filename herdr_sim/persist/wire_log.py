"""The simulator's wire log (``$HERDR_SIM_WIRE_LOG``): every line a subprocess server carried.

How the contract checks of a test run see a *subprocess* server (``herdr-sim serve``), whose
wire no tap of theirs can reach: ``herdr-sim serve`` adds a :class:`WireLog` to its
simulator's own taps; an in-process server is tapped directly and writes nothing.

The log holds what clients sent, so it is written like a secret: the file is created 0600,
never through a symlink or into a FIFO or device someone left at that path, never into a
file another user owns; and ``env`` values are redacted (:func:`herdr_sim.persist.redaction.redact`,
the helper the failure forensics use). Several servers of one test may share one log: each
line is one ``O_APPEND`` write.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from orchestrator.client.file_trust.ownership import FOREIGN_OWNER, open_own_append

from .redaction import redact


class UnsafeWireLog(OSError):
    """The wire log's path is not a private regular file of ours."""


def open_private_append(path: Path) -> int:
    """A descriptor appending to ``path``, created 0600 when missing.

    Refused (:class:`UnsafeWireLog`, or the ``OSError`` of ``open``): a symlink as the last
    component (``O_NOFOLLOW``), anything but a regular file (a FIFO is opened non-blocking so
    the check runs instead of a hang), a file owned by another user. A file of ours with
    wider permissions is narrowed to 0600
    (:func:`orchestrator.client.file_trust.ownership.open_own_append`).
    """

    def refuse(problem: str, _info: os.stat_result) -> UnsafeWireLog:
        if problem == FOREIGN_OWNER:
            return UnsafeWireLog(f"wire log {path} is owned by another user")
        return UnsafeWireLog(f"wire log {path} is not a regular file")

    return open_own_append(path, refuse)


class WireLog:
    """A wire tap appending every line, redacted, to a private file; ``pid`` says which
    process served a line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = open_private_append(path)

    def __call__(self, kind: str, line: dict[str, Any]) -> None:
        if self._fd is None:
            return
        entry = {"kind": kind, "line": redact(line), "pid": os.getpid()}
        data = (json.dumps(entry) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def close(self) -> None:
        """Stop logging and close the file (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
