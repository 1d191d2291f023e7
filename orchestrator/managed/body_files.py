"""Body ``@path`` lines of an agent definition, expanded to the named file's text at launch.

Why: a definition's body is the child's instructions, and the reference (pi-herdsman.md A.8,
A.17 step 7 "expand body @ files") lets it pull shared text in from files: a body line
``@<path>`` whose path starts ``/``, ``~/``, ``./`` or ``../`` is replaced, at launch, by the
text of that file, the path resolving relative to the definition file (strict UTF-8; a file
the caller already passed in ``files`` is dropped from the body, since it reaches the child
with the task). A definition is configuration, not a licence to read anything the controller
can read, so our rule is narrower than "any path":

* **The line.** The whole line, trailing whitespace aside, is ``@`` then the path (no
  indentation, nothing after it; the path may contain spaces). Any other line is kept as
  written, and an inserted file's own ``@`` lines are not expanded (no recursion).
* **Where.** ``./`` and ``../`` resolve from the directory of the definition file the line
  is in (each layer's part of an overlaid body from its own file), ``~/`` from the
  controller's home, ``/`` as given. After normalizing, the path must lie inside that
  definition file's own **layer directory** (``builtin``, ``<project>/.pi/agents`` or the
  user's agents dir); it is then opened from that directory one component at a time with
  ``O_NOFOLLOW``, so no symbolic link is followed (out or in).
* **What.** A regular file (checked on the open descriptor; a FIFO is opened non-blocking and
  refused), at most :data:`BODY_FILE_LIMIT` bytes, strict UTF-8. The expanded body is at most
  :data:`EXPANDED_BODY_LIMIT` bytes.

Any refusal is ``invalid_request`` naming the ``@`` path and the definition file, before
anything is launched; the whole delegation is refused, never launched with a line missing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Collection
from pathlib import Path

from orchestrator.client.file_trust.private_files import describe_kind
from orchestrator.managed.definitions import AgentDefinition, BodyPart
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.utf8 import utf8_len

__all__ = ["BODY_FILE_LIMIT", "EXPANDED_BODY_LIMIT", "expand_body"]

BODY_FILE_LIMIT = 64 * 1024
"""The largest file a body ``@`` line may name (the definition file's own limit)."""

EXPANDED_BODY_LIMIT = 256 * 1024
"""The largest body after expansion, in UTF-8 bytes."""

_LINE_RE = re.compile(r"@((?:/|~/|\./|\.\./).*)")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


class _Refused(Exception):
    """Why one ``@`` line's file is refused (the reason, for the message)."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link: not followed"
    return f"{describe_kind(mode)}, not a regular file"


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "a symbolic link: not followed"
    if exc.errno == errno.ENOTDIR:
        return "a path component is not a directory"
    return exc.strerror or str(exc)


def _inside(spec: str, part: BodyPart, home: Path) -> tuple[Path, Path]:
    """The layer directory (real) and the path below it that ``spec`` names."""
    if spec.startswith("~/"):
        candidate = home / spec[2:]
    elif spec.startswith("/"):
        candidate = Path(spec)
    else:
        candidate = part.path.parent / spec
    # lexical (abspath, not resolve): no link is resolved here, none is followed in _read
    normal = Path(os.path.abspath(candidate))  # noqa: PTH100
    real_root = Path(os.path.realpath(part.root))
    for base in (Path(os.path.abspath(part.root)), real_root):  # noqa: PTH100
        if normal.is_relative_to(base):
            relative = normal.relative_to(base)
            if not relative.parts:
                raise _Refused("a directory, not a regular file")
            return real_root, relative
    raise _Refused(f"{normal} is outside the definition's layer directory {part.root}")


def _read(real_root: Path, relative: Path) -> str:
    """The text of ``real_root/relative``, opened component by component, no link followed."""
    with contextlib.ExitStack() as stack:
        try:
            fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise _Refused(f"layer directory {real_root}: {_reason(exc)}") from None
        stack.callback(os.close, fd)
        *dirs, name = relative.parts
        for component in dirs:
            try:
                mode = os.stat(component, dir_fd=fd, follow_symlinks=False).st_mode
                if not stat.S_ISDIR(mode):
                    raise _Refused(f"{component} is {_kind(mode)}")
                fd = os.open(component, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _Refused(f"{component}: {_reason(exc)}") from None
            stack.callback(os.close, fd)
        try:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            if not stat.S_ISREG(mode):
                raise _Refused(_kind(mode))  # refused before any open: never blocks on a FIFO
            file_fd = os.open(name, _FILE_FLAGS, dir_fd=fd)
        except OSError as exc:
            raise _Refused(_reason(exc)) from None
        stack.callback(os.close, file_fd)
        info = os.fstat(file_fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Refused("file changed during validation")
        if info.st_size > BODY_FILE_LIMIT:
            raise _Refused(f"is {info.st_size} bytes, over the {BODY_FILE_LIMIT}-byte limit")
        data = os.pread(file_fd, BODY_FILE_LIMIT + 1, 0)
        if len(data) > BODY_FILE_LIMIT:
            raise _Refused(f"is over the {BODY_FILE_LIMIT}-byte limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Refused("is not valid UTF-8") from None


def _expand_part(
    definition: str, part: BodyPart, home: Path, skip: Collection[str], operation: str
) -> str:
    out: list[str] = []
    for line in part.text.split("\n"):
        match = _LINE_RE.fullmatch(line.rstrip())
        if match is None:
            out.append(line)
            continue
        spec = match.group(1)
        try:
            real_root, relative = _inside(spec, part, home)
            if str(real_root / relative) in skip:
                continue  # the caller passed it in files: it reaches the child with the task
            out.append(_read(real_root, relative).removesuffix("\n"))
        except _Refused as exc:
            raise ManagedAgentError(
                "invalid_request",
                f"Cannot read file @{spec} in the body of definition {definition} "
                f"({part.path}): {exc}",
                operation=operation,
                next_action="Fix the definition's body: an @ line must name a readable regular "
                "UTF-8 file inside the definition's own directory, with no symbolic link.",
                details={"file": spec, "definition": definition, "definitionFile": str(part.path)},
            ) from None
    return "\n".join(out)


def expand_body(
    definition: AgentDefinition,
    *,
    home: Path,
    skip: Collection[str] = (),
    operation: str = "delegate",
) -> str:
    """``definition``'s body with every ``@path`` line replaced by its file's text (see the
    module docstring); ``skip`` holds the canonical paths the caller's ``files`` already
    carry (their lines are dropped). A definition without parts (built in memory) keeps its
    ``body`` unchanged."""
    if not definition.body_parts:
        return definition.body
    texts = [
        _expand_part(definition.name, part, home, skip, operation) for part in definition.body_parts
    ]
    body = "\n\n".join(t for t in texts if t)
    size = utf8_len(body)
    if size > EXPANDED_BODY_LIMIT:
        raise ManagedAgentError(
            "invalid_request",
            f"The body of definition {definition.name} is {size} bytes once its @ files are "
            f"expanded; the limit is {EXPANDED_BODY_LIMIT} bytes",
            operation=operation,
            next_action="Name fewer or smaller files in the definition's @ lines.",
            details={"definition": definition.name},
        )
    return body
