"""Durable result artifacts: every terminal result of a managed agent, kept with provenance.

Why: seed 002 delivers a terminal result exactly once, then cleans the agent up, yet the
result must stay reusable — a later ``files`` entry ``result:<label>#<n>`` hands it to
another agent with its provenance (label, definition, cwd, pi session). So the result is
persisted *before* delivery, and delivery itself is recorded durably, so a controller
restarted at any step neither loses a result nor delivers it twice.

Layout under the store root (``<managed root>/results``, 0700, ours only):

* ``artifacts/<requestId>.json`` — one artifact per assignment (its task record id), 0600,
  written atomically; persisting the same request again returns the stored artifact
  (idempotent), and a *different* result for a stored request is refused, never overwritten.
* ``texts/<requestId>.md`` — the result's text alone, written before the artifact: the file
  a ``files`` reference element names when the text is not inlined.
* ``refs/<sha256(owner)[:32]>/<label>/<n>`` — the semantic ref ``result:<label>#<n>``: a
  0600 file holding the request id, linked into place complete (never half written) and
  never overwritten; ``n`` is 1 + the highest index of
  that owner and label, so an index is never reused. A crash between reserving ``n`` and
  writing the artifact is healed by the retry, which finds its own reservation.
* ``delivered/<requestId>`` — created exclusively and fsynced by :meth:`mark_delivered`:
  the first caller, in any process, before or after a restart, gets ``True``; all later
  ones ``False``.

Two ref forms (reference A.9): the *semantic* ``result:<label>#<n>`` is scoped to the owner
that received the completion (another controller's ``scout#1`` is not ours:
``target_not_found``); the *canonical* ``result:<requestId>`` (the assignment's UUID, not
guessable) is a logical reference already supplied as evidence — a delegating agent forwards
it to its own children — so it resolves for any owner of this store; an unknown one is
``invalid_request`` (canonical refs are opaque). A malformed ref is ``invalid_request``.

Writers take an exclusive ``flock`` on the root directory; every file is read with
:mod:`orchestrator.client.file_trust.private_files` rules (no link followed, regular files only,
bounded).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from orchestrator.client.file_trust import locks
from orchestrator.client.file_trust.private_files import (
    UnsafeFile,
    ensure_private_dir,
    open_dir,
    publish_new,
    read_bounded,
    write_atomic,
)
from orchestrator.managed.errors import ManagedAgentError
from orchestrator.managed.labels import LABEL_RE
from orchestrator.managed.model_text import (
    MODEL_TEXT_MAX_BYTES,
    MODEL_TEXT_MAX_LINES,
    BoundedText,
    bound_head,
)

__all__ = [
    "ARTIFACT_LIMIT_BYTES",
    "CANONICAL_REF_RE",
    "RESULT_REF_RE",
    "ResultArtifact",
    "ResultDelivery",
    "ResultStatus",
    "ResultStore",
    "delivery_text",
    "is_result_ref",
    "render_delivery",
]

ResultStatus = Literal["completed", "failed"]
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_UUID_RE = re.compile(_UUID)
#: ``result:<label>#<n>`` (n ≥ 1, no leading zero), the label by the label grammar
RESULT_REF_RE = re.compile(r"result:(" + LABEL_RE.pattern + r")#([1-9][0-9]{0,8})")
#: ``result:<requestId>``, the assignment's UUID
CANONICAL_REF_RE = re.compile(r"result:(" + _UUID + r")")
#: the largest artifact file read back (a 4 MiB result text, JSON-escaped, plus provenance)
ARTIFACT_LIMIT_BYTES = 32 << 20
ARTIFACT_VERSION = 1
INVALID_REF_HINT = "Copy the exact result ref shown by the agent completion."
_FIELDS = {
    "version",
    "ownerSessionId",
    "label",
    "index",
    "definition",
    "cwd",
    "piSessionId",
    "piSessionFile",
    "requestId",
    "runId",
    "status",
    "text",
    "createdAt",
}


@dataclass(frozen=True)
class ResultArtifact:
    """One persisted terminal result and where it came from."""

    owner_session_id: str
    label: str
    index: int
    definition: str
    cwd: str
    pi_session_id: str | None
    pi_session_file: str | None
    request_id: str
    run_id: str
    status: ResultStatus
    text: str
    created_at: float

    @property
    def ref(self) -> str:
        """The semantic ref the owner sees: ``result:<label>#<index>``."""
        return f"result:{self.label}#{self.index}"

    @property
    def canonical_ref(self) -> str:
        """The canonical ref, valid for any owner of the store: ``result:<requestId>``."""
        return f"result:{self.request_id}"

    def to_record(self) -> dict[str, Any]:
        return {
            "version": ARTIFACT_VERSION,
            "ownerSessionId": self.owner_session_id,
            "label": self.label,
            "index": self.index,
            "definition": self.definition,
            "cwd": self.cwd,
            "piSessionId": self.pi_session_id,
            "piSessionFile": self.pi_session_file,
            "requestId": self.request_id,
            "runId": self.run_id,
            "status": self.status,
            "text": self.text,
            "createdAt": self.created_at,
        }

    def details(self) -> dict[str, Any]:
        """The provenance for a delivery's or a file element's structured details."""
        return {
            "agentLabel": self.label,
            "resultIndex": self.index,
            "agentDefinition": self.definition,
            "cwd": self.cwd,
            "piSessionId": self.pi_session_id,
            "piSessionFile": self.pi_session_file,
            "requestId": self.request_id,
            "runId": self.run_id,
            "status": self.status,
            "resultRef": self.ref,
            "canonicalResultRef": self.canonical_ref,
        }


class _Corrupt(ValueError):
    """An artifact file that is not a record this module wrote."""


def _string(raw: dict[str, Any], key: str, *, optional: bool = False) -> str | None:
    value = raw.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or (not value and not optional):
        raise _Corrupt(f"{key} is not a non-empty string")
    return value


def _decode(data: bytes) -> ResultArtifact:
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Corrupt(f"not a JSON record ({exc})") from None
    if not isinstance(raw, dict):
        raise _Corrupt("not a JSON object")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise _Corrupt(f"unknown field(s): {', '.join(unknown)}")
    if raw.get("version") != ARTIFACT_VERSION or isinstance(raw.get("version"), bool):
        raise _Corrupt(f"version is {raw.get('version')!r}, not {ARTIFACT_VERSION}")
    index = raw.get("index")
    if isinstance(index, bool) or not isinstance(index, int) or index < 1:
        raise _Corrupt("index is not a positive integer")
    created = raw.get("createdAt")
    if (
        isinstance(created, bool)
        or not isinstance(created, int | float)
        or not math.isfinite(created)
    ):
        raise _Corrupt("createdAt is not a finite number")
    status = raw.get("status")
    if status not in ("completed", "failed"):
        raise _Corrupt(f"status {status!r} is not completed or failed")
    text = raw.get("text")
    if not isinstance(text, str):
        raise _Corrupt("text is not a string")
    label = _string(raw, "label") or ""
    request_id = _string(raw, "requestId") or ""
    if not LABEL_RE.fullmatch(label) or not _UUID_RE.fullmatch(request_id):
        raise _Corrupt("label or requestId is malformed")
    return ResultArtifact(
        owner_session_id=_string(raw, "ownerSessionId") or "",
        label=label,
        index=index,
        definition=_string(raw, "definition") or "",
        cwd=_string(raw, "cwd") or "",
        pi_session_id=_string(raw, "piSessionId", optional=True),
        pi_session_file=_string(raw, "piSessionFile", optional=True),
        request_id=request_id,
        run_id=_string(raw, "runId") or "",
        status=cast("ResultStatus", status),
        text=text,
        created_at=float(created),
    )


def _owner_key(owner_session_id: str) -> str:
    return hashlib.sha256(owner_session_id.encode("utf-8")).hexdigest()[:32]


def is_result_ref(entry: str) -> bool:
    """Whether a ``files`` entry is meant as a result ref (it starts with ``result:``)."""
    return entry.startswith("result:")


class ResultStore:
    """The result artifacts under ``root`` (see the module docstring for the layout)."""

    def __init__(self, root: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.root = Path(root)
        self._clock = clock

    # -- plumbing ------------------------------------------------------------------------

    def _fail(self, message: str, operation: str, path: Path | None = None) -> ManagedAgentError:
        return ManagedAgentError(
            "internal_failure",
            message,
            operation=operation,
            next_action="inspect the result store file named here; it was left in place",
            details={"path": str(path)} if path is not None else None,
        )

    @contextlib.contextmanager
    def _dir(self, relative: str, operation: str, *, create: bool) -> Iterator[int]:
        """A descriptor of ``root/relative``, every component below the root link-checked."""
        parts = [p for p in relative.split("/") if p]
        current = self.root
        fds: list[int] = []
        try:
            with contextlib.ExitStack() as stack:
                for part in parts:
                    current = current / part
                    fds.append(stack.enter_context(open_dir(current, create=create)))
                yield fds[-1] if fds else stack.enter_context(open_dir(self.root))
        except UnsafeFile as exc:
            raise self._fail(f"unsafe result store directory: {exc.strerror}", operation) from None

    @contextlib.contextmanager
    def _locked(self, operation: str) -> Iterator[None]:
        try:
            ensure_private_dir(self.root)
        except (UnsafeFile, NotADirectoryError) as exc:
            raise self._fail(
                f"unsafe result store root: {exc.strerror or exc}", operation, self.root
            ) from None
        with self._dir("", operation, create=False) as fd:
            locks.acquire(fd)  # on the root's descriptor: released when it is closed
            yield

    def _read_small(self, path: Path, limit: int, operation: str) -> bytes | None:
        """The bytes of ``path`` (None when missing); a link, non-regular or oversized file
        is an ``internal_failure`` naming it."""
        try:
            read = read_bounded(path, limit + 1)
        except FileNotFoundError:
            return None
        except UnsafeFile as exc:
            raise self._fail(f"unsafe result store file: {exc.strerror}", operation, path) from None
        except NotADirectoryError:
            return None
        if read.truncated or read.size > limit:
            raise self._fail(f"result store file is over {limit} bytes: {path}", operation, path)
        return read.data

    def text_path(self, request_id: str) -> Path:
        """The result's plain text (0600), the file a reference element points an agent at."""
        return self.root / "texts" / f"{request_id}.md"

    def _artifact_path(self, request_id: str) -> Path:
        return self.root / "artifacts" / f"{request_id}.json"

    def _load(self, request_id: str, operation: str) -> ResultArtifact | None:
        path = self._artifact_path(request_id)
        data = self._read_small(path, ARTIFACT_LIMIT_BYTES, operation)
        if data is None:
            return None
        try:
            artifact = _decode(data)
        except _Corrupt as exc:
            raise self._fail(f"corrupt result artifact {path}: {exc}", operation, path) from None
        if artifact.request_id != request_id:
            raise self._fail(f"result artifact {path} names another request", operation, path)
        return artifact

    def _ref_dir(self, owner_session_id: str, label: str) -> str:
        return f"refs/{_owner_key(owner_session_id)}/{label}"

    def _ref_target(
        self, owner_session_id: str, label: str, index: int, operation: str
    ) -> str | None:
        path = self.root / self._ref_dir(owner_session_id, label) / str(index)
        data = self._read_small(path, 64, operation)
        if data is None:
            return None
        text = data.decode("utf-8", "replace").strip()
        if not _UUID_RE.fullmatch(text):
            raise self._fail(f"corrupt result ref reservation {path}", operation, path)
        return text

    # -- persisting ----------------------------------------------------------------------

    def persist(
        self,
        *,
        owner_session_id: str,
        label: str,
        definition: str,
        cwd: str,
        pi_session_id: str | None,
        pi_session_file: str | None,
        request_id: str,
        run_id: str,
        status: ResultStatus,
        text: str,
        created_at: float | None = None,
    ) -> ResultArtifact:
        """Persist the terminal result of assignment ``request_id`` and return its artifact.

        Idempotent: the same request persisted again returns the stored artifact (same
        index). A different result for a stored request is an ``internal_failure`` (the
        stored one is kept). Bad provenance (a label off the grammar, a request or run id
        that is not a UUID, an unknown status, an empty owner) is ``invalid_request``.
        """
        operation = "result persist"
        self._check_provenance(owner_session_id, label, request_id, run_id, status, operation)
        with self._locked(operation):
            existing = self._load(request_id, operation)
            if existing is not None:
                same = (
                    existing.owner_session_id == owner_session_id
                    and existing.label == label
                    and existing.run_id == run_id
                    and existing.status == status
                    and existing.text == text
                )
                if not same:
                    raise self._fail(
                        f"a different result is already stored for request {request_id}",
                        operation,
                        self._artifact_path(request_id),
                    )
                return existing
            index = self._reserve_index(owner_session_id, label, request_id, operation)
            artifact = ResultArtifact(
                owner_session_id=owner_session_id,
                label=label,
                index=index,
                definition=definition,
                cwd=cwd,
                pi_session_id=pi_session_id,
                pi_session_file=pi_session_file,
                request_id=request_id,
                run_id=run_id,
                status=status,
                text=text,
                created_at=float(self._clock() if created_at is None else created_at),
            )
            data = json.dumps(artifact.to_record(), ensure_ascii=False, sort_keys=True)
            payload = data.encode("utf-8", "surrogatepass")
            if len(payload) > ARTIFACT_LIMIT_BYTES:
                raise self._fail(
                    f"result of request {request_id} is {len(payload)} bytes; the store keeps "
                    f"at most {ARTIFACT_LIMIT_BYTES}",
                    operation,
                )
            with self._dir("artifacts", operation, create=True):
                pass
            with self._dir("texts", operation, create=True):
                pass
            try:
                # the plain text first: an artifact that exists always has its text file
                write_atomic(self.text_path(request_id), text.encode("utf-8", "surrogatepass"))
                write_atomic(self._artifact_path(request_id), payload)
            except OSError as exc:
                raise self._fail(
                    f"result artifact could not be written: {exc.strerror or exc}",
                    operation,
                    self._artifact_path(request_id),
                ) from None
            return artifact

    @staticmethod
    def _check_provenance(
        owner: str, label: str, request_id: str, run_id: str, status: str, operation: str
    ) -> None:
        problems = []
        if not isinstance(owner, str) or not owner:
            problems.append("owner_session_id is empty")
        if not isinstance(label, str) or not LABEL_RE.fullmatch(label):
            problems.append(f"label {label!r} is not a valid agent label")
        for name, value in (("request_id", request_id), ("run_id", run_id)):
            if not isinstance(value, str) or not _UUID_RE.fullmatch(value):
                problems.append(f"{name} {value!r} is not a lowercase UUID")
        if status not in ("completed", "failed"):
            problems.append(f"status {status!r} is not completed or failed")
        if problems:
            raise ManagedAgentError(
                "invalid_request",
                "Invalid result provenance: " + "; ".join(problems),
                operation=operation,
            )

    def _reserve_index(self, owner: str, label: str, request_id: str, operation: str) -> int:
        """This request's index for (owner, label): its own earlier reservation when a crash
        left one, else 1 + the highest reserved index, created exclusively."""
        relative = self._ref_dir(owner, label)
        with self._dir(relative, operation, create=True) as fd:
            names = os.listdir(fd)  # noqa: PTH208 - listing by descriptor, not path
            indices = sorted(int(n) for n in names if n.isdigit() and not n.startswith("0"))
            for index in indices:
                if self._ref_target(owner, label, index, operation) == request_id:
                    return index
            index = (indices[-1] if indices else 0) + 1
            # complete or absent (the link fails if the name exists), so a crash never
            # leaves a half-written reservation
            try:
                publish_new(fd, str(index), f"{request_id}\n".encode())
            except OSError as exc:
                raise self._fail(
                    f"result ref could not be reserved: {exc.strerror or exc}",
                    operation,
                    self.root / relative / str(index),
                ) from None
            return index

    # -- reading -------------------------------------------------------------------------

    def get(self, request_id: str) -> ResultArtifact | None:
        """The artifact of ``request_id``, or None when none is stored."""
        if not _UUID_RE.fullmatch(request_id):
            return None
        return self._load(request_id, "result read")

    def resolve(
        self, ref: str, *, owner_session_id: str, operation: str = "files"
    ) -> ResultArtifact:
        """The artifact a ``files`` ref names.

        ``result:<label>#<n>``: the owner's own ref, else ``target_not_found``;
        ``result:<requestId>``: any stored artifact, else ``invalid_request``; anything else
        starting ``result:`` is ``invalid_request`` ("Invalid result ref: …").
        """
        semantic = RESULT_REF_RE.fullmatch(ref) if isinstance(ref, str) else None
        canonical = CANONICAL_REF_RE.fullmatch(ref) if isinstance(ref, str) else None
        if semantic is not None:
            label, index = semantic.group(1), int(semantic.group(2))
            request_id = self._ref_target(owner_session_id, label, index, operation)
            artifact = self._load(request_id, operation) if request_id else None
            if artifact is None:
                raise ManagedAgentError(
                    "target_not_found",
                    f"Result ref {ref} is not available to this controller",
                    operation=operation,
                    next_action="Use a result ref shown in one of this controller's own agent "
                    "completions, or a canonical result ref supplied as evidence.",
                    details={"ref": ref},
                )
            if (artifact.owner_session_id, artifact.label, artifact.index) != (
                owner_session_id,
                label,
                index,
            ):
                raise ManagedAgentError(
                    "target_ambiguous",
                    f"Result ref {ref} conflicts with the stored artifact of request "
                    f"{artifact.request_id}",
                    operation=operation,
                    details={"ref": ref, "requestId": artifact.request_id},
                )
            return artifact
        if canonical is not None:
            artifact = self._load(canonical.group(1), operation)
            if artifact is None:
                raise ManagedAgentError(
                    "invalid_request",
                    f"Unknown result ref: {ref}. {INVALID_REF_HINT}",
                    operation=operation,
                    details={"ref": ref},
                )
            return artifact
        raise ManagedAgentError(
            "invalid_request",
            f"Invalid result ref: {ref}. {INVALID_REF_HINT}",
            operation=operation,
            details={"ref": ref},
        )

    # -- delivery ------------------------------------------------------------------------

    def mark_delivered(self, request_id: str) -> bool:
        """Record that the result of ``request_id`` was delivered: ``True`` for the first
        caller only (in any process, across restarts; the mark is fsynced before returning),
        ``False`` for every later one."""
        operation = "result delivery"
        if not isinstance(request_id, str) or not _UUID_RE.fullmatch(request_id):
            raise ManagedAgentError(
                "invalid_request",
                f"request id {request_id!r} is not a lowercase UUID",
                operation=operation,
            )
        with self._locked(operation), self._dir("delivered", operation, create=True) as fd:
            try:  # fsynced, the name too: a delivery is never repeated after a power cut
                publish_new(fd, request_id, f"{self._clock()}\n".encode())
            except FileExistsError:
                return False  # something is there already (a planted link is never followed)
            except OSError as exc:
                raise self._fail(
                    f"delivery mark could not be written: {exc.strerror or exc}",
                    operation,
                    self.root / "delivered" / request_id,
                ) from None
            return True

    def is_delivered(self, request_id: str) -> bool:
        """Whether :meth:`mark_delivered` has been called for ``request_id``."""
        if not _UUID_RE.fullmatch(request_id):
            return False
        path = self.root / "delivered" / request_id
        try:
            os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return False
        return True


@dataclass(frozen=True)
class ResultDelivery:
    """The model-visible delivery of a result and the bound its agent text went through."""

    text: str
    bound: BoundedText

    @property
    def truncated(self) -> bool:
        """Whether the agent's text was cut (the full text stays the result artifact)."""
        return self.bound.truncated


def render_delivery(
    artifact: ResultArtifact,
    *,
    retired: bool = False,
    max_bytes: int = MODEL_TEXT_MAX_BYTES,
    max_lines: int = MODEL_TEXT_MAX_LINES,
) -> ResultDelivery:
    """The model-visible delivery of a result, in seed 002's wording::

        Agent result · agent=<label> · definition=<name> · session=<id> · status=<status>
        Result ref: result:<label>#<n>

    then the agent's text, bounded for the model (reference A.13: its head, at most
    ``max_bytes`` and ``max_lines``, by :func:`~orchestrator.managed.model_text.bound_head`)
    with, when cut, a notice naming the result ref that holds the full text (the artifact
    is persisted whole before any delivery), then, for a session retired under context
    pressure, the instruction to delegate a fresh agent instead of continuing it.
    """
    session = artifact.pi_session_id or "?"
    header = (
        f"Agent result · agent={artifact.label} · definition={artifact.definition} · "
        f"session={session} · status={artifact.status}"
    )
    lines = [header, f"Result ref: {artifact.ref}"]
    bound = bound_head(artifact.text, max_bytes=max_bytes, max_lines=max_lines)
    text = bound.text
    if bound.truncated:
        text = (
            f"{bound.text}\n\n[Result truncated: {bound.shown_lines} of {bound.total_lines} "
            f"lines, {bound.shown_bytes} of {bound.total_bytes} bytes shown. The full result "
            f"is {artifact.ref}; pass it in files to read it or hand it on.]"
        )
    blocks = ["\n".join(lines), text if text else "(empty result)"]
    if retired:
        blocks.append(
            "This agent's session was retired after context pressure: do not continue it "
            "with agent_continue. Delegate a fresh agent instead and pass it this result "
            f"({artifact.ref}) and the relevant files."
        )
    return ResultDelivery("\n\n".join(blocks), bound)


def delivery_text(
    artifact: ResultArtifact,
    *,
    retired: bool = False,
    max_bytes: int = MODEL_TEXT_MAX_BYTES,
    max_lines: int = MODEL_TEXT_MAX_LINES,
) -> str:
    """The text of :func:`render_delivery`."""
    return render_delivery(artifact, retired=retired, max_bytes=max_bytes, max_lines=max_lines).text
