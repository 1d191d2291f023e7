"""The fake pi's extensions, loaded the way pi loads its own: from what its launch names.

Real pi loads every ``*.ts`` in ``$PI_CODING_AGENT_DIR/extensions`` and each file named by
``-e``/``--extension`` when it starts. The fake runs no TypeScript, so an extension meant to
work in the fake too names its Python twin in a header line of its own file::

    // fake pi: package.module

and the fake imports that module (by the name the file holds, nothing else) and calls its
``attach(env, *, session_id, session_file, cwd, pid, submit, interrupt, deliver, say)``,
which answers the running extension (:class:`PiExtension`) or None when it stays inactive
(as a real extension stays idle outside its environment). So the simulator never imports
an extension's code of its own accord: an extension nobody installed or named is not run,
as with real pi. The orchestrator's managed-child extension
(``orchestrator/managed/pi_extension/herdr-managed-child.ts``) is one.

Only regular files are read (no FIFO blocks a start), and only the first few KiB of each.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path
from typing import Protocol

from orchestrator.client.file_trust.private_files import read_bounded

from .session import _agent_dir

#: a process environment, or a mapping standing in for one
Environ = dict[str, str] | os._Environ[str]

__all__ = ["TWIN_HEADER", "PiExtension", "attach_extensions", "extension_files", "twin_module"]

#: the header line naming an extension's Python twin for the fake pi
TWIN_HEADER = re.compile(r"^// fake pi: ([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\s*$", re.MULTILINE)
_HEAD_BYTES = 4096


class PiExtension(Protocol):
    """A running extension as the fake pi drives it: the turn's events, in pi's order."""

    def stop(self) -> None: ...
    def turn_start(self) -> None: ...
    def tool_start(self) -> None: ...
    def boundary(self, *, after_tool: bool) -> None: ...
    def settle(self, assistant_text: str | None, *, stopped: bool) -> bool: ...
    def compact(self, reason: str) -> tuple[bool, bool]: ...
    def ask(self, question: str) -> tuple[str, bool]: ...


def extension_files(named: Sequence[str], env: Environ) -> list[Path]:
    """The extension files a pi started with ``-e`` values ``named`` in ``env`` loads: its
    agent dir's (``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``) ``extensions/*.ts``
    (sorted), then the named ones, each once."""
    found: list[Path] = []
    directory = _agent_dir(env).expanduser() / "extensions"
    with contextlib.suppress(OSError):  # no extensions directory: nothing installed
        found += sorted(p for p in directory.iterdir() if p.suffix == ".ts")
    found += [Path(name).expanduser() for name in named]
    unique: list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def twin_module(path: Path) -> str | None:
    """The Python twin an extension file names in its header (None: it names none, or it is
    not a readable regular file)."""
    try:  # pi follows a link to an extension; a FIFO or directory is not read
        head = read_bounded(path, _HEAD_BYTES, follow=True).data.decode("utf-8", "replace")
    except OSError:
        return None
    match = TWIN_HEADER.search(head)
    return match.group(1) if match else None


def attach_extensions(
    named: Sequence[str],
    env: Environ,
    *,
    session_id: str,
    session_file: str,
    cwd: str,
    pid: int,
    submit: Callable[[str], None],
    interrupt: threading.Event,
    deliver: Callable[[str], None],
    say: Callable[[str], None],
) -> PiExtension | None:
    """Start the extensions the launch names; the first that is active drives the turns."""
    for path in extension_files(named, env):
        module_name = twin_module(path)
        if module_name is None:
            continue
        try:
            module = import_module(module_name)
        except ImportError as exc:
            say(f"extension {path.name}: cannot load {module_name}: {exc}")
            continue
        active: PiExtension | None = module.attach(
            env,
            session_id=session_id,
            session_file=session_file,
            cwd=cwd,
            pid=pid,
            submit=submit,
            interrupt=interrupt,
            deliver=deliver,
            say=say,
        )
        if active is not None:
            return active
    return None
