"""The cassette file: JSON Lines, a header, one record per wire line, an end record.

One record per line keeps a cassette readable in a diff and appendable while it is being
recorded. The first line is the :class:`Header` (format number, the recorder's version, when,
the upstream Herdr's version and protocol, the runtime directories whose paths replay
normalises); then :class:`Record` lines in the order the recorder saw them: a connection
opened, a line sent by the client (``send``) or by Herdr (``recv``), a connection closed (by
whom, and whether a request was left unanswered); the last line is the end record, written
when the recorder stops cleanly. A file without it was cut off (the recorder was killed or
the disk filled) and is refused, as is any line that is not what its place requires:
:class:`CassetteError`.

The file is a secret until redacted, so it is written like the wire log: created 0600,
never through a symlink, never into a FIFO or someone else's file
(:func:`orchestrator.client.file_trust.ownership.open_own_append`), truncated only once it is known
to be ours.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from orchestrator.client.file_trust.ownership import FOREIGN_OWNER, open_own_append

#: the cassette format this module reads and writes
FORMAT = 1
#: the header's marker key: its value is :data:`FORMAT`
MARKER = "herdr_cassette"

Direction = Literal["open", "send", "recv", "close"]
DIRECTIONS: tuple[Direction, ...] = ("open", "send", "recv", "close")
#: who ended a connection: the client, Herdr, or the recorder stopping
Closer = Literal["client", "upstream", "recorder"]
CLOSERS: tuple[Closer, ...] = ("client", "upstream", "recorder")


class CassetteError(ValueError):
    """A cassette that cannot be read: not JSON Lines, a wrong shape, or cut off."""


@dataclass(frozen=True)
class Header:
    """What a cassette was recorded from and by."""

    recorder: str
    recorded_at: str
    upstream_version: str | None
    upstream_protocol: int | None
    #: directories of the recording machine whose paths replay normalises (the upstream
    #: socket's directory, the home directory, and what the recorder was given)
    runtime_dirs: tuple[str, ...] = ()
    #: whether secrets were redacted (``--keep-secrets`` turns it off)
    redacted: bool = True

    def to_json(self) -> dict[str, Any]:
        """The header line's object."""
        return {
            MARKER: FORMAT,
            "recorder": self.recorder,
            "recorded_at": self.recorded_at,
            "upstream": {"version": self.upstream_version, "protocol": self.upstream_protocol},
            "runtime_dirs": list(self.runtime_dirs),
            "redacted": self.redacted,
        }

    @classmethod
    def from_json(cls, value: Any) -> Header:
        """The header of a parsed first line (:class:`CassetteError` when it is not one)."""
        if not isinstance(value, dict) or MARKER not in value:
            raise CassetteError(f"the first line is not a cassette header (no {MARKER!r})")
        if value[MARKER] != FORMAT:
            raise CassetteError(f"cassette format {value[MARKER]!r} (this reader knows {FORMAT})")
        upstream = value.get("upstream")
        dirs = value.get("runtime_dirs", [])
        version = upstream.get("version") if isinstance(upstream, dict) else None
        protocol = upstream.get("protocol") if isinstance(upstream, dict) else None
        if not (
            isinstance(value.get("recorder"), str)
            and isinstance(value.get("recorded_at"), str)
            and isinstance(upstream, dict)
            and (version is None or isinstance(version, str))
            and (protocol is None or (isinstance(protocol, int) and not isinstance(protocol, bool)))
            and isinstance(dirs, list)
            and all(isinstance(item, str) for item in dirs)
            and isinstance(value.get("redacted", True), bool)
        ):
            raise CassetteError("the cassette header has a field of the wrong type")
        return cls(
            recorder=value["recorder"],
            recorded_at=value["recorded_at"],
            upstream_version=version,
            upstream_protocol=protocol,
            runtime_dirs=tuple(dirs),
            redacted=value.get("redacted", True),
        )


@dataclass(frozen=True)
class Record:
    """One event of one connection, ``t`` seconds after the recorder started.

    ``send``/``recv`` carry the wire line: ``line`` is its JSON value, or, for a line that is
    not JSON, ``raw`` its text; ``partial`` marks bytes that ended without a newline.
    ``close`` says who closed (``by``) and whether a request was still unanswered.
    """

    conn: int
    direction: Direction
    t: float
    line: Any = None
    raw: str | None = None
    partial: bool = False
    by: Closer | None = None
    unfinished: bool = False

    def to_json(self) -> dict[str, Any]:
        """The record line's object (fields at their defaults left out)."""
        out: dict[str, Any] = {"conn": self.conn, "dir": self.direction, "t": self.t}
        if self.direction in ("send", "recv"):
            if self.raw is not None:
                out["raw"] = self.raw
            else:
                out["line"] = self.line
            if self.partial:
                out["partial"] = True
        if self.direction == "close":
            out["by"] = self.by
            if self.unfinished:
                out["unfinished"] = True
        return out

    @classmethod
    def from_json(cls, value: Any) -> Record:
        """The record of a parsed line (:class:`CassetteError` when it is not one)."""
        if not isinstance(value, dict):
            raise CassetteError("a record is not a JSON object")
        conn, direction, t = value.get("conn"), value.get("dir"), value.get("t")
        if not (isinstance(conn, int) and not isinstance(conn, bool) and conn >= 1):
            raise CassetteError(f"a record's connection is not a number >= 1: {conn!r}")
        if direction not in DIRECTIONS:
            raise CassetteError(f"a record's direction is not one of {DIRECTIONS}: {direction!r}")
        if not isinstance(t, int | float) or isinstance(t, bool) or t < 0:
            raise CassetteError(f"a record's time offset is not a number >= 0: {t!r}")
        raw = value.get("raw")
        if direction in ("send", "recv") and ("line" in value) == (raw is not None):
            raise CassetteError(f"a {direction} record needs exactly one of 'line' and 'raw'")
        if raw is not None and not isinstance(raw, str):
            raise CassetteError("a record's 'raw' is not text")
        by = value.get("by")
        if direction == "close" and by not in CLOSERS:
            raise CassetteError(f"a close record's 'by' is not one of {CLOSERS}: {by!r}")
        partial, unfinished = value.get("partial", False), value.get("unfinished", False)
        if not isinstance(partial, bool) or not isinstance(unfinished, bool):
            raise CassetteError("a record's 'partial'/'unfinished' is not true or false")
        return cls(
            conn=conn,
            direction=direction,
            t=float(t),
            line=value.get("line"),
            raw=raw,
            partial=partial,
            by=by if direction == "close" else None,
            unfinished=unfinished,
        )


@dataclass(frozen=True)
class Cassette:
    """A whole cassette as read: its header, its records in order, how long it ran."""

    header: Header
    records: tuple[Record, ...] = ()
    #: the end record's time offset
    duration: float = 0.0
    #: records by connection, in order (derived)
    by_conn: dict[int, list[Record]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for record in self.records:
            self.by_conn.setdefault(record.conn, []).append(record)

    def dumps(self) -> str:
        """The cassette's text (what :func:`loads` reads back)."""
        lines = [self.header.to_json(), *(r.to_json() for r in self.records)]
        lines.append({"end": True, "t": self.duration, "connections": len(self.by_conn)})
        return "".join(encode_line(line) for line in lines)


def encode_line(value: dict[str, Any]) -> str:
    """One cassette line: compact JSON (non-ASCII kept as is) and a newline."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def loads(text: str) -> Cassette:
    """Parse a cassette's text; :class:`CassetteError` names the line that is wrong."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        raise CassetteError("the cassette is cut off: its last line has no newline")
    if not lines:
        raise CassetteError("the cassette is empty")
    header = Header.from_json(_parse(lines[0], 1))
    records: list[Record] = []
    for number, text_line in enumerate(lines[1:], start=2):
        value = _parse(text_line, number)
        if isinstance(value, dict) and value.get("end") is True:
            if number != len(lines):
                raise CassetteError(f"line {number}: records after the end record")
            t = value.get("t")
            if not isinstance(t, int | float) or isinstance(t, bool):
                raise CassetteError(f"line {number}: the end record has no time offset")
            return Cassette(header, tuple(records), float(t))
        try:
            records.append(Record.from_json(value))
        except CassetteError as exc:
            raise CassetteError(f"line {number}: {exc}") from None
    raise CassetteError("the cassette is cut off: no end record (the recorder did not finish)")


def load(path: Path) -> Cassette:
    """Read a cassette file (:class:`CassetteError` when it cannot be read or parsed)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CassetteError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CassetteError(f"{path} is not UTF-8 text") from None
    return loads(text)


def _parse(text: str, number: int) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CassetteError(f"line {number} is not JSON: {exc.msg}") from None


class UnsafeCassette(OSError):
    """The cassette's path is not a private regular file of ours."""


class CassetteWriter:
    """Appends a cassette line by line while recording (thread-safe), then its end record.

    Opened 0600 (:func:`~orchestrator.client.file_trust.ownership.open_own_append`: no symlink, no
    FIFO, no file of another user) and truncated after the check, so re-recording replaces a
    cassette of ours and never someone else's file.
    """

    def __init__(self, path: Path, header: Header) -> None:
        def refuse(problem: str, _info: os.stat_result) -> UnsafeCassette:
            if problem == FOREIGN_OWNER:
                return UnsafeCassette(f"cassette {path} is owned by another user")
            return UnsafeCassette(f"cassette {path} is not a regular file")

        self.path = path
        self._fd: int | None = open_own_append(path, refuse)
        os.ftruncate(self._fd, 0)
        self._lock = threading.Lock()
        self._conns: set[int] = set()
        self._write(header.to_json())

    @property
    def finished(self) -> bool:
        """Whether the end record is written (nothing more will be)."""
        return self._fd is None

    def record(self, record: Record) -> None:
        """Append one record (ignored once finished)."""
        self._conns.add(record.conn)
        self._write(record.to_json())

    def finish(self, t: float) -> None:
        """Write the end record and close the file (idempotent)."""
        with self._lock:
            if self._fd is None:
                return
            self._write_locked({"end": True, "t": t, "connections": len(self._conns)})
            fd, self._fd = self._fd, None
            os.close(fd)

    def _write(self, value: dict[str, Any]) -> None:
        with self._lock:
            self._write_locked(value)

    def _write_locked(self, value: dict[str, Any]) -> None:
        if self._fd is None:
            return
        view = memoryview(encode_line(value).encode())
        while view:
            view = view[os.write(self._fd, view) :]
