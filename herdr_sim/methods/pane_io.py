"""``pane.*`` handlers for terminal I/O: send text and keys, read, wait for output, processes."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from herdr_sim.host.keys import InvalidKeyError, encode_keys
from herdr_sim.host.procfs import ProcInfo, children_of, foreground_processes, group_members_under
from herdr_sim.host.pty import subreaper_enabled
from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Bool, F, ListOf, Obj, Str
from orchestrator.client.poll import Deadline

from ..model.session import PaneRef
from ..regex import RustRegex, RustRegexError, compile_rust_regex, run_matching
from ..terminal import Terminal
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
    if rt.detection is not None:  # the job this input starts is watched for a while
        rt.detection.typed(ref.pane.key)


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
    text, truncated = read_terminal(rt.process(ref).terminal, source, lines, fmt)
    return read_result(ref, source, fmt, text, truncated)


def read_terminal(terminal: Terminal, source: str, lines: int | None, fmt: str) -> tuple[str, bool]:
    """The ``(text, truncated)`` of :func:`read_pane`, from the pane's terminal."""
    effective_fmt = "text" if source == "detection" else fmt
    return terminal.read(source, lines, effective_fmt)  # type: ignore[arg-type]


def read_result(ref: PaneRef, source: str, fmt: str, text: str, truncated: bool) -> dict[str, Any]:
    """The PaneReadResult of :func:`read_pane` for text already read."""
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


#: A compiled ``OutputMatch``: a substring, or a Rust-syntax regex run in linear time.
Matcher = RustRegex | str


def compile_match(match: dict[str, Any]) -> Matcher:
    """A substring, or a compiled regex (``invalid_regex`` with Rust's text when refused).

    Herdr compiles with Rust's ``regex`` crate (``src/api/wait.rs``,
    ``src/api/subscriptions.rs``): no look-around, no backreferences, linear-time matching.
    """
    if match["type"] == "substring":
        value: str = match["value"]
        return value
    try:
        return compile_rust_regex(match["value"])
    except RustRegexError as exc:
        raise HerdrError(errors.INVALID_REGEX, str(exc)) from None


def output_match_source(source: str) -> str:
    """Output matching reads ``recent`` as ``recent_unwrapped`` (Herdr's rule)."""
    return "recent_unwrapped" if source == "recent" else source


def first_matching_line(text: str, matcher: Matcher) -> str | None:
    """Herdr scans line by line, top to bottom; a match never spans lines."""
    for line in text.splitlines():
        if isinstance(matcher, str):
            if matcher in line:
                return line
        elif matcher.search(line):
            return line
    return None


#: A match already running when a wait's deadline comes gets this long to finish: Herdr
#: matches once before it looks at its deadline, so ``timeout_ms: 0`` still sees the output
#: already there.
MATCH_GRACE_S = 0.5


#: Texts up to this many characters are matched on the loop: matching is linear in the
#: text (RE2), so this is microseconds, while the hop to a matching thread and back costs
#: a thread wake-up and two GIL hand-offs, each of which can wait out the interpreter's
#: 5 ms switch interval; a pane's visible screen (93 x 39) is about 3,600 characters.
INLINE_MATCH_CHARS = 8192


async def find_matching_line(text: str, matcher: Matcher, bound: float | None = None) -> str | None:
    """:func:`first_matching_line`: on the loop for a short text (:data:`INLINE_MATCH_CHARS`),
    else in a matching thread so other clients are served meanwhile; :class:`TimeoutError`
    when a threaded match takes longer than ``bound`` seconds."""
    if len(text) <= INLINE_MATCH_CHARS:
        return first_matching_line(text, matcher)
    return await asyncio.wait_for(run_matching(first_matching_line, text, matcher), bound)


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
    matcher = await run_matching(compile_match, p["match"])
    source = output_match_source(p["source"])
    deadline = Deadline(None if p["timeout_ms"] is None else p["timeout_ms"] / 1000)
    ref = rt.pane(p["pane_id"])
    while True:
        if ref.pane.key not in rt.session.panes or ref.pane.key not in rt.processes:
            raise errors.pane_not_found(p["pane_id"])
        proc = rt.processes[ref.pane.key]
        result = read_pane(rt, ref, source, p["lines"], "text")
        remaining = deadline.remaining()
        bound = None if remaining is None else max(remaining, MATCH_GRACE_S)
        try:
            line = await find_matching_line(result["text"], matcher, bound)
        except TimeoutError:
            raise HerdrError(errors.TIMEOUT, "timed out waiting for output match") from None
        if line is not None:
            return {
                "type": "output_matched",
                "pane_id": ref.pane_id,
                "revision": 0,
                "matched_line": line,
                "read": result,
            }
        remaining = deadline.remaining()
        if remaining is not None and remaining <= 0:
            raise HerdrError(errors.TIMEOUT, "timed out waiting for output match")
        # Wake on new output; the 0.1 s cap keeps Herdr's poll cadence for moved panes.
        await proc.output.wait(0.1 if remaining is None else min(remaining, 0.1))
        ref = rt.session.locate(ref.pane.key) if ref.pane.key in rt.session.panes else ref


def _foreground_members(rt: Runtime, shell_pid: int, pgid: int) -> list[ProcInfo]:
    """The live members of the pane's foreground group, as a scan of every process finds them.

    A group's members are in its session: the pane shell's descendants, or — their parent
    gone — re-parented to the nearest subreaper, which is this process when the runtime
    adopts orphans (every pane was spawned after the flag was set). So the forest under the
    shell, the group leader and this process's children that are no pane shells holds them
    all, and is walked instead of reading every process on the machine (issue 17: a fleet's
    start watch asks this a few times a second per agent, and a whole-machine scan blocked
    the server's loop ~10 ms each time on a busy machine)."""
    if rt.config.adopt_orphans and subreaper_enabled():
        children = children_of(os.getpid())
        if children is not None:
            shells = {other.pty.pid for other in rt.processes.values()}
            orphans = [pid for pid in children if pid not in shells]
            found = group_members_under(pgid, [shell_pid, pgid, *orphans])
            if found is not None:
                return found
    return foreground_processes(pgid)


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
        for item in _foreground_members(rt, proc.pty.pid, pgid):
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
