"""``files``: the explicit evidence a controller attaches to a managed agent's message.

Why: seed 002 gives ``agent_delegate``, ``agent_continue``, ``agent_steer``,
``agent_interrupt`` and ``agent_reply`` a ``files`` list (``string[]``) of ordinary paths,
``result:<label>#<n>`` refs and canonical ``result:`` refs. A fresh agent does not inherit the
caller's conversation, so these files *are* what it learns; they must be exactly the files
meant, read safely, and fit the message. The rules (seed 002, reference A.9):

* **Paths** are resolved from the controller's cwd, canonicalized with ``realpath`` (a link
  is resolved, then its target checked) and must be readable **regular files**: a directory,
  FIFO, socket or device is refused without blocking (opened ``O_NONBLOCK``, checked with
  ``fstat``), and a file swapped between the check and the open is refused ("file changed
  during validation"). A path whose canonical form lies **outside the cwd** is refused
  (issue 15 lists it as bad input; a link inside the cwd pointing out is outside too) unless
  the caller passes ``allow_outside_cwd``. Duplicates (same canonical path or same result)
  keep the first.
* **Result refs** resolve through :class:`~orchestrator.managed.results.ResultStore`
  (semantic refs for the calling owner only, canonical refs as logical references); the
  element keeps the result's provenance and its canonical ref, so the recipient can forward it.
* **Inline or reference.** A file's content is embedded only when it is at most
  ``inline_limit`` bytes, strict UTF-8 without NUL bytes, and (with ``payload_limit``) the
  whole message still fits; otherwise the element is a canonical reference
  (``<file name="…" bytes="N" />``). When even all-references do not fit, the message is
  refused ("Mailbox payload is N bytes; configured limit is M bytes").

Every refusal is ``invalid_request`` naming the file, and one bad entry refuses them all.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.client.file_trust.private_files import UnsafeFile, describe_kind, open_regular
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.results import ResultArtifact, ResultStore, is_result_ref
from orchestrator.managed.utf8 import utf8_len

__all__ = ["PreparedFile", "PreparedFiles", "escape_attribute", "prepare_files", "render_message"]

_SEPARATOR = "\n\n"


def escape_attribute(value: str) -> str:
    """``value`` safe inside a double-quoted attribute: ``& " < >`` and control characters
    become ``&#xNN;``."""
    out: list[str] = []
    for char in value:
        code = ord(char)
        if char in '&"<>' or code < 0x20 or code == 0x7F:
            out.append(f"&#x{code:02X};")
        else:
            out.append(char)
    return "".join(out)


@dataclass(frozen=True)
class PreparedFile:
    """One ``files`` entry, prepared: ``name`` is the canonical path or the result ref as
    given; ``path`` the canonical path of an ordinary file (else None); ``size`` its bytes;
    ``content`` the text when inlined; ``artifact`` the resolved result."""

    entry: str
    name: str
    size: int
    path: str | None = None
    content: str | None = None
    artifact: ResultArtifact | None = None
    #: for a result: the plain-text file a reference element points at
    text_path: str | None = None

    @property
    def inline(self) -> bool:
        return self.content is not None

    def _attributes(self) -> str:
        attrs = [("name", self.name)]
        if self.artifact is not None:
            art = self.artifact
            attrs += [("ref", art.canonical_ref), ("agent", art.label)]
            attrs += [("definition", art.definition), ("cwd", art.cwd)]
            if art.pi_session_id:
                attrs.append(("session", art.pi_session_id))
            attrs.append(("status", art.status))
            if self.content is None and self.text_path:
                attrs.append(("path", self.text_path))
        attrs.append(("bytes", str(self.size)))
        return " ".join(f'{key}="{escape_attribute(value)}"' for key, value in attrs)

    def reference_element(self) -> str:
        return f"<file {self._attributes()} />"

    def element(self) -> str:
        """``<file …>\\ncontent\\n</file>`` when inlined, else the reference element."""
        if self.content is None:
            return self.reference_element()
        return f"<file {self._attributes()}>\n{self.content}\n</file>"


@dataclass(frozen=True)
class PreparedFiles:
    """The prepared entries in the caller's order (duplicates dropped)."""

    files: tuple[PreparedFile, ...] = ()

    @property
    def text(self) -> str:
        """The file elements joined by blank lines ("" when there are none)."""
        return _SEPARATOR.join(f.element() for f in self.files)

    @property
    def paths(self) -> tuple[str, ...]:
        """The canonical paths of the ordinary files."""
        return tuple(f.path for f in self.files if f.path is not None)

    @property
    def refs(self) -> tuple[str, ...]:
        """The result refs as the caller gave them."""
        return tuple(f.entry for f in self.files if f.artifact is not None)

    @property
    def artifacts(self) -> tuple[ResultArtifact, ...]:
        return tuple(f.artifact for f in self.files if f.artifact is not None)

    def render(self, heading: str, body: str) -> str:
        """The whole message: one element per file, then ``<heading>:\\n<body>``."""
        return render_message(self, heading, body)


def render_message(files: PreparedFiles, heading: str, body: str) -> str:
    """One element per file, then ``<heading>:\\n<body>``, joined by blank lines (reference
    A.9; headings ``Task``, ``Steer``, ``Interrupt``, ``Reply``, ``Question``)."""
    return _SEPARATOR.join([*(f.element() for f in files.files), f"{heading}:\n{body}"])


def _refuse(entry: str, reason: str, operation: str, **details: str) -> ManagedAgentError:
    return ManagedAgentError(
        "invalid_request",
        f"Cannot read file {entry}: {reason}",
        operation=operation,
        next_action="Pass readable regular files (or result refs exactly as shown) in files.",
        details={"file": entry, **details},
    )


def _kind(mode: int) -> str:
    return f"{describe_kind(mode)}, not a regular file"


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "too many levels of symbolic links"
    return exc.strerror or str(exc)


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _read_path(
    entry: str,
    *,
    cwd: Path,
    root: Path,
    inline_limit: int,
    allow_outside_cwd: bool,
    operation: str,
) -> PreparedFile:
    given = Path(entry)
    joined = given if given.is_absolute() else cwd / given
    try:
        canonical = Path(os.path.realpath(joined, strict=True))
    except OSError as exc:
        raise _refuse(entry, _os_reason(exc), operation) from None
    except ValueError:  # a NUL byte in the path
        raise _refuse(entry, "not a valid path", operation) from None
    if not allow_outside_cwd and not _inside(canonical, root):
        raise _refuse(
            entry,
            f"{canonical} is outside the working directory {root}",
            operation,
            path=str(canonical),
        )
    try:
        before = canonical.stat()
    except OSError as exc:
        raise _refuse(entry, _os_reason(exc), operation, path=str(canonical)) from None
    if not stat.S_ISREG(before.st_mode):  # refused before any open: a socket, a FIFO, …
        raise _refuse(entry, _kind(before.st_mode), operation, path=str(canonical))
    try:
        fd = open_regular(canonical)
    except OSError as exc:  # a link or another kind now: swapped since the check above
        swapped = isinstance(exc, UnsafeFile) or exc.errno == errno.ELOOP
        reason = "file changed during validation" if swapped else _os_reason(exc)
        raise _refuse(entry, reason, operation, path=str(canonical)) from None
    try:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
            raise _refuse(entry, "file changed during validation", operation, path=str(canonical))
        size = info.st_size
        content: str | None = None
        if size <= inline_limit:
            try:
                data = os.pread(fd, inline_limit + 1, 0)
            except OSError as exc:
                raise _refuse(entry, _os_reason(exc), operation, path=str(canonical)) from None
            size = len(data)  # what is there now (it may have grown or shrunk)
            if size <= inline_limit and b"\x00" not in data:
                try:
                    content = data.decode("utf-8")
                except UnicodeDecodeError:
                    content = None  # binary: referenced, not embedded
    finally:
        os.close(fd)
    return PreparedFile(
        entry=entry, name=str(canonical), size=size, path=str(canonical), content=content
    )


def _read_result(
    entry: str,
    *,
    results: ResultStore,
    owner_session_id: str,
    inline_limit: int,
    operation: str,
) -> PreparedFile:
    artifact = results.resolve(entry, owner_session_id=owner_session_id, operation=operation)
    size = utf8_len(artifact.text)
    inline = size <= inline_limit and "\x00" not in artifact.text
    return PreparedFile(
        entry=entry,
        name=entry,
        size=size,
        content=artifact.text if inline else None,
        artifact=artifact,
        text_path=str(results.text_path(artifact.request_id)),
    )


def prepare_files(
    files: Sequence[str],
    *,
    cwd: Path,
    results: ResultStore,
    owner_session_id: str,
    inline_limit: int,
    payload_limit: int | None = None,
    reserved_bytes: int = 0,
    allow_outside_cwd: bool = False,
    operation: str = "files",
) -> PreparedFiles:
    """Prepare ``files`` for one message (see the module docstring for the rules).

    ``inline_limit``: the most bytes one file may have to be embedded
    (``inlineAttachmentLimitBytes``). ``payload_limit`` (``mailboxPayloadLimitBytes``),
    when given, bounds the UTF-8 size of the file elements plus ``reserved_bytes`` (the
    rest of the rendered message): files are embedded in order while the total fits, the
    rest stay references, and a total that cannot fit even as references is refused.
    """
    if isinstance(files, str) or not isinstance(files, Sequence):
        raise ManagedAgentError(
            "invalid_request", "files must be an array of strings", operation=operation
        )
    root = Path(os.path.realpath(cwd))
    prepared: list[PreparedFile] = []
    seen: set[str] = set()
    for entry in files:
        if not isinstance(entry, str) or not entry.strip():
            raise ManagedAgentError(
                "invalid_request",
                f"files entries must be non-empty strings, got {entry!r}",
                operation=operation,
            )
        if is_result_ref(entry):
            item = _read_result(
                entry,
                results=results,
                owner_session_id=owner_session_id,
                inline_limit=inline_limit,
                operation=operation,
            )
            key = f"result:{item.artifact.request_id}" if item.artifact else entry
        else:
            item = _read_path(
                entry,
                cwd=Path(cwd),
                root=root,
                inline_limit=inline_limit,
                allow_outside_cwd=allow_outside_cwd,
                operation=operation,
            )
            key = item.name
        if key in seen:
            continue
        seen.add(key)
        prepared.append(item)
    if payload_limit is None:
        return PreparedFiles(tuple(prepared))
    return PreparedFiles(_fit(prepared, payload_limit, reserved_bytes, operation))


def _fit(
    prepared: list[PreparedFile], limit: int, reserved: int, operation: str
) -> tuple[PreparedFile, ...]:
    """Keep inline content, in order, only while the whole message fits ``limit`` bytes."""
    separators = utf8_len(_SEPARATOR) * len(prepared)
    references = [utf8_len(f.reference_element()) for f in prepared]
    total = reserved + separators + sum(references)
    if total > limit:
        raise ManagedAgentError(
            "invalid_request",
            f"Mailbox payload is {total} bytes; configured limit is {limit} bytes",
            operation=operation,
            next_action="Shorten the message or pass fewer files.",
            details={"payloadBytes": total, "limitBytes": limit},
        )
    out: list[PreparedFile] = []
    for item, reference in zip(prepared, references, strict=True):
        if item.content is not None:
            grown = utf8_len(item.element()) - reference
            if total + grown <= limit:
                total += grown
                out.append(item)
                continue
            item = PreparedFile(
                entry=item.entry,
                name=item.name,
                size=item.size,
                path=item.path,
                artifact=item.artifact,
                text_path=item.text_path,
            )
        out.append(item)
    return tuple(out)
