"""``pane.*`` handlers for terminal I/O: send text and keys, read, wait for output, processes."""

from __future__ import annotations

import re
import time
from typing import Any

from .. import errors
from ..errors import HerdrError
from ..keys import InvalidKeyError, encode_keys
from ..model.session import PaneRef
from ..params import Bool, F, ListOf, Obj, Str
from ..procfs import foreground_processes
from ..registry import method
from ..runtime import Runtime
from .specs import (
    OPT_PANE_TARGET,
    OPT_U32,
    OPT_U64,
    OUTPUT_MATCH,
    READ_FORMAT,
    READ_SOURCE,
    REQ_STR,
)

_BRACKET_OPEN = b"\x1b[200~"
_BRACKET_CLOSE = b"\x1b[201~"


def _encode_keys(rt: Runtime, ref: PaneRef, keys: list[str]) -> bytes:
    """Validate every key before anything is written (Herdr's rule)."""
    terminal = rt.process(ref).terminal
    try:
        return encode_keys(keys, application_cursor=terminal.application_cursor)
    except InvalidKeyError as exc:
        raise errors.invalid_key(exc.key) from None


def write(rt: Runtime, ref: PaneRef, data: bytes) -> None:
    """Queue bytes for the pane's pty and return at once, as Herdr does.

    Herdr hands input to the pane's writer queue and answers without waiting for the
    program to read it, so a pane that never reads (``sleep 100``) does not slow its
    clients; later writes stay in order behind earlier ones. Only a pane whose pty is
    gone answers ``pane_send_failed`` (tokio's "channel closed").
    """
    proc = rt.process(ref)
    try:
        proc.pty.write(data)
    except OSError:
        raise HerdrError(errors.PANE_SEND_FAILED, "channel closed") from None


@method("pane.send_text", Obj(fields={"pane_id": REQ_STR, "text": REQ_STR}), result="ok")
async def send_text(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Write raw UTF-8 text (no bracketed paste, no Enter)."""
    ref = rt.pane(p["pane_id"])
    write(rt, ref, p["text"].encode("utf-8", "surrogatepass"))
    return {"type": "ok"}


@method(
    "pane.send_keys",
    Obj(fields={"pane_id": REQ_STR, "keys": F(ListOf(Str()), required=True)}),
    result="ok",
)
async def send_keys(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Write encoded key presses; one invalid key means nothing is written."""
    ref = rt.pane(p["pane_id"])
    write(rt, ref, _encode_keys(rt, ref, p["keys"]))
    return {"type": "ok"}


@method(
    "pane.send_input",
    Obj(
        fields={
            "pane_id": REQ_STR,
            "text": F(Str(), default=""),
            "keys": F(ListOf(Str()), default=list),
        }
    ),
    result="ok",
)
async def send_input(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Text (bracketed when the app enabled paste mode) then keys, as one write."""
    ref = rt.pane(p["pane_id"])
    keys = _encode_keys(rt, ref, p["keys"])
    text = p["text"].encode("utf-8", "surrogatepass")
    if text and rt.process(ref).terminal.bracketed_paste:
        text = _BRACKET_OPEN + text + _BRACKET_CLOSE
    write(rt, ref, text + keys)
    return {"type": "ok"}


def read_pane(
    rt: Runtime, ref: PaneRef, source: str, lines: int | None, fmt: str
) -> dict[str, Any]:
    """PaneReadResult (``revision`` is always 0, as in Herdr).

    ``strip_ansi`` is accepted by every read-like request but, as in Herdr, never changes
    the text: ``format`` alone decides (the CLI's ``--raw`` also sends ``format: ansi``).
    """
    terminal = rt.process(ref).terminal
    effective_fmt = "text" if source == "detection" else fmt
    text, truncated = terminal.read(source, lines, effective_fmt)  # type: ignore[arg-type]
    return {
        "pane_id": ref.pane_id,
        "workspace_id": ref.workspace.public_id,
        "tab_id": ref.tab_id,
        "source": source,
        "format": fmt,
        "text": text,
        "revision": 0,
        "truncated": truncated,
    }


READ_PARAMS = Obj(
    fields={
        "pane_id": REQ_STR,
        "source": F(READ_SOURCE, required=True),
        "lines": OPT_U32,
        "format": F(READ_FORMAT, default="text"),
        "strip_ansi": F(Bool(), default=True),
    }
)


@method("pane.read", READ_PARAMS, result="pane_read", mutates=False)
async def read(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Read the pane's screen or recent output."""
    ref = rt.pane(p["pane_id"])
    return {
        "type": "pane_read",
        "read": read_pane(rt, ref, p["source"], p["lines"], p["format"]),
    }


def compile_match(match: dict[str, Any]) -> re.Pattern[str] | str:
    """A substring, or a compiled regex (``invalid_regex`` when it does not compile)."""
    if match["type"] == "substring":
        value: str = match["value"]
        return value
    pattern: str = match["value"]
    unsupported = _unsupported_construct(pattern)
    if unsupported is not None:
        raise HerdrError(errors.INVALID_REGEX, _rust_regex_error(pattern, *unsupported))
    try:
        return re.compile(rust_regex_to_python(pattern))
    except re.error as exc:
        message, width = _RUST_ERRORS.get(exc.msg, (None, 1))
        if message is None:
            message, width = (
                ("unrecognized escape sequence", 2)
                if exc.msg.startswith("bad escape")
                else (exc.msg, 1)
            )
        position = min(exc.pos or 0, len(pattern))
        detail = _rust_regex_error(pattern, position, width, message)
        raise HerdrError(errors.INVALID_REGEX, detail) from None


#: Python ``re`` error → (Rust ``regex-syntax`` error text, width of the marked span).
_RUST_ERRORS: dict[str, tuple[str | None, int]] = {
    "missing ), unterminated subpattern": ("unclosed group", 1),
    "unbalanced parenthesis": ("unopened group", 1),
    "unterminated character set": ("unclosed character class", 1),
    "nothing to repeat": ("repetition operator missing expression", 1),
    "bad escape (end of pattern)": (
        "incomplete escape sequence, reached end of pattern prematurely",
        1,
    ),
}


def _unsupported_construct(pattern: str) -> tuple[int, int, str] | None:
    """Look-around and backreferences: Python compiles them, Rust's ``regex`` refuses.

    Returns (position, span width, message) of the first one; ``(?=`` inside a character
    class is literal text.
    """
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            following = pattern[index + 1 : index + 2]
            if following in tuple("123456789"):  # inside a class too (no octal escapes)
                return index, 2, "backreferences are not supported"
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            # A ``]`` right after ``[`` or ``[^`` is a literal.
            index += 2 if pattern[index + 1 : index + 2] == "^" else 1
            if pattern[index : index + 1] == "]":
                index += 1
            continue
        elif char == "(" and pattern.startswith(("?=", "?!", "?<=", "?<!"), index + 1):
            return index, 2, "look-around, including look-ahead and look-behind, is not supported"
        index += 1
    return None


def _rust_regex_error(pattern: str, position: int, width: int, message: str) -> str:
    """The text of Rust's ``regex::Error`` for a one-line pattern (span marked with ``^``)."""
    column = len(pattern[:position].split("\n")[-1])
    line = pattern.split("\n")[pattern[:position].count("\n")]
    marks = " " * column + "^" * max(1, min(width, len(line) - column))
    return f"regex parse error:\n    {line}\n    {marks}\nerror: {message}"


def rust_regex_to_python(pattern: str) -> str:
    """Translate the Rust-regex escapes Python lacks (``\\x{…}``, ``\\z``)."""
    pattern = re.sub(r"\\x\{([0-9A-Fa-f]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", pattern)
    return pattern.replace(r"\z", r"\Z")


def output_match_source(source: str) -> str:
    """Output matching reads ``recent`` as ``recent_unwrapped`` (Herdr's rule)."""
    return "recent_unwrapped" if source == "recent" else source


def first_matching_line(text: str, matcher: re.Pattern[str] | str) -> str | None:
    """Herdr scans line by line, top to bottom; a match never spans lines."""
    for line in text.splitlines():
        if isinstance(matcher, str):
            if matcher in line:
                return line
        elif matcher.search(line):
            return line
    return None


@method(
    "pane.wait_for_output",
    Obj(
        fields={
            "pane_id": REQ_STR,
            "source": F(READ_SOURCE, required=True),
            "lines": OPT_U32,
            "match": OUTPUT_MATCH,
            "timeout_ms": OPT_U64,
            "strip_ansi": F(Bool(), default=True),
        }
    ),
    result="output_matched",
    mutates=False,
)
async def wait_for_output(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Wait until a line of the pane's output matches; existing output counts.

    Like Herdr, ``recent`` is read as ``recent_unwrapped`` and the answer's ``read`` says so.
    """
    matcher = compile_match(p["match"])
    source = output_match_source(p["source"])
    deadline = None if p["timeout_ms"] is None else time.monotonic() + p["timeout_ms"] / 1000
    ref = rt.pane(p["pane_id"])
    while True:
        if ref.pane.key not in rt.session.panes or ref.pane.key not in rt.processes:
            raise errors.pane_not_found(p["pane_id"])
        proc = rt.processes[ref.pane.key]
        result = read_pane(rt, ref, source, p["lines"], "text")
        line = first_matching_line(result["text"], matcher)
        if line is not None:
            return {
                "type": "output_matched",
                "pane_id": ref.pane_id,
                "revision": 0,
                "matched_line": line,
                "read": result,
            }
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise HerdrError(errors.TIMEOUT, "timed out waiting for output match")
        # Wake on new output; the 0.1 s cap keeps Herdr's poll cadence for moved panes.
        await proc.output.wait(0.1 if remaining is None else min(remaining, 0.1))
        ref = rt.session.locate(ref.pane.key) if ref.pane.key in rt.session.panes else ref


@method("pane.process_info", OPT_PANE_TARGET, result="pane_process_info", mutates=False)
async def process_info(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """The pane's shell pid and foreground process group, read from /proc."""
    ref = rt.optional_pane(p["pane_id"])
    proc = rt.process(ref)
    info: dict[str, Any] = {"pane_id": ref.pane_id, "shell_pid": proc.pty.pid}
    pgid = proc.pty.foreground_pgid()
    if pgid is not None:
        info["foreground_process_group_id"] = pgid
        procs = []
        for item in foreground_processes(pgid):
            # Herdr on Linux never fills ``argv0`` (only its macOS probe does).
            entry: dict[str, Any] = {"pid": item.pid, "name": item.name}
            if item.argv:
                entry["argv"] = list(item.argv)
                entry["cmdline"] = " ".join(item.argv)
            if item.cwd is not None:
                entry["cwd"] = item.cwd
            procs.append(entry)
        if procs:
            info["foreground_processes"] = procs
    return {"type": "pane_process_info", "process_info": info}
