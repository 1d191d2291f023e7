"""Installing the managed-child pi extension where pi loads it.

Why: a managed child is a real pi session, and the child side of seed 002 (``ask_owner``,
the result handoff, steer and interrupt) is the TypeScript extension this package ships
(``pi_extension/herdr-managed-child.ts``). pi loads every ``*.ts`` in
``$PI_CODING_AGENT_DIR/extensions`` with the user's full rights, so whatever sits there runs
as code in every child: the controller writes the file only into a directory that is ours,
and never through a link another party could have planted.

* The agent dir and its ``extensions`` dir are private directories of this user
  (:func:`~orchestrator.client.file_trust.private_files.ensure_private_dir`: created 0700 when
  missing, refused when owned by someone else or writable by group or others); a symbolic link at
  ``extensions`` is refused outright (the directory is replaced by nothing we did not
  create ourselves).
* The file is written 0600, complete or absent (a fsynced temp file renamed into the
  link-checked directory). An existing file of the same name is replaced only when it is a
  regular file of ours; a link, a FIFO, a directory or another user's file is refused.

A refusal is a :class:`~orchestrator.managed.errors.ManagedAgentError` of category
``internal_failure`` naming the path (``details.path``); nothing is written then.
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.client.file_trust.ownership import FOREIGN_OWNER, NOT_REGULAR, ownership_problem
from orchestrator.client.file_trust.private_files import (
    UnsafeFile,
    ensure_private_dir,
    write_atomic,
)
from orchestrator.managed.errors import ManagedAgentError

__all__ = ["EXTENSION_NAME", "EXTENSION_SOURCE", "install_child_extension"]

#: the extension as shipped (package data) and the name it is installed under
EXTENSION_NAME = "herdr-managed-child.ts"
EXTENSION_SOURCE = Path(__file__).parent / "pi_extension" / EXTENSION_NAME

_OPERATION = "install managed-child extension"


def _refuse(message: str, path: Path) -> ManagedAgentError:
    return ManagedAgentError(
        "internal_failure",
        message,
        operation=_OPERATION,
        next_action="use a pi agent directory of your own (it is created 0700 when missing)",
        details={"path": str(path)},
    )


def install_child_extension(extensions_dir: Path) -> Path:
    """Write the shipped extension into ``extensions_dir`` (``$PI_CODING_AGENT_DIR/extensions``)
    as ``herdr-managed-child.ts``, 0600; the installed path. Idempotent: an own regular file
    there is replaced by the shipped one."""
    directory = Path(extensions_dir)
    if not directory.is_absolute():
        raise _refuse(f"{directory} is not an absolute path", directory)
    try:
        ensure_private_dir(directory.parent)
        if directory.is_symlink():
            raise _refuse(f"{directory} is a symbolic link: not followed", directory)
        ensure_private_dir(directory)
    except UnsafeFile as exc:
        raise _refuse(str(exc.strerror), directory) from None
    target = directory / EXTENSION_NAME
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        pass
    else:
        problem = ownership_problem(info, kind="file", forbidden=0)  # it is replaced 0600
        if problem == NOT_REGULAR:
            raise _refuse(f"{target} exists and is not a regular file: not replaced", target)
        if problem == FOREIGN_OWNER:
            raise _refuse(
                f"{target} is owned by uid {info.st_uid}, not by you: not replaced", target
            )
    try:
        write_atomic(target, EXTENSION_SOURCE.read_bytes(), mode=0o600)
    except UnsafeFile as exc:
        raise _refuse(str(exc.strerror), directory) from None
    return target
