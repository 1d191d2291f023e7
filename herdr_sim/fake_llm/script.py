"""What the fake LLM answers: a script of turns, each with a condition and a reply.

A real coding agent under test talks to the fake LLM instead of a provider, so a test decides
every model answer: text, tool calls, an HTTP error, a delay. Scripts are plain data (a JSON or
TOML file, or Python objects) and are checked completely when they are loaded, so a typo fails
the test at once with the place of the mistake instead of as a puzzling agent screen later.

Matching rule: each request takes the first turn, in script order, that is not used up and
whose ``when`` fits the request; the turn is then used up unless it says ``repeat``. With no
``when`` clauses a script is simply answered turn after turn. When no turn fits, the
``fallback`` answers (by default an HTTP 500 naming the request), so a script that ran out
shows as a provider error in the agent, and in the request log as unmatched.

File format (TOML shown; JSON has the same shape)::

    [[turns]]
    when = { user_contains = "hello" }
    text = "Hello from the fake model."

    [[turns]]
    when = { user_regex = "run (echo|ls)" }
    tool_calls = [{ name = "bash", arguments = { command = "echo hi" } }]

    [[turns]]
    when = { tool_result = true }
    text = "The command printed hi."

    [[turns]]
    error = { status = 429, message = "slow down" }
    delay = 0.2
    repeat = true
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Match", "Script", "ScriptError", "ToolCall", "Turn"]


class ScriptError(ValueError):
    """A fake-LLM script that cannot be understood; the message says where."""


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model makes: the agent's tool ``name`` with JSON ``arguments``."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""  # empty: the server numbers it (call_1, call_2, …)


@dataclass(frozen=True)
class Match:
    """When a turn applies; every given condition must hold (none given: always)."""

    #: a substring of the last user message's text
    user_contains: str | None = None
    #: a regular expression searched in the last user message's text
    user_regex: str | None = None
    #: True: the request carries a tool result after the last user message; False: it doesn't
    tool_result: bool | None = None
    #: a substring of the newest tool result's text (implies a tool result is present)
    tool_result_contains: str | None = None

    def __post_init__(self) -> None:
        if self.user_regex is not None:
            try:
                re.compile(self.user_regex)
            except re.error as exc:
                raise ScriptError(f"user_regex {self.user_regex!r}: {exc}") from exc

    def fits(self, last_user_text: str, tool_results: Sequence[str]) -> bool:
        """Whether a request with this last user text and newest tool results fits."""
        if self.user_contains is not None and self.user_contains not in last_user_text:
            return False
        if self.user_regex is not None and not re.search(self.user_regex, last_user_text):
            return False
        if self.tool_result is not None and bool(tool_results) != self.tool_result:
            return False
        return not (
            self.tool_result_contains is not None
            and not (tool_results and self.tool_result_contains in tool_results[-1])
        )


@dataclass(frozen=True)
class Turn:
    """One model answer. ``error`` (an HTTP status and message) excludes text and tool calls."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    when: Match = field(default_factory=Match)
    #: seconds to wait before answering (the agent shows "working" meanwhile)
    delay: float = 0.0
    #: (status, message): answer with this HTTP error in the API's error format
    error: tuple[int, str] | None = None
    #: answer every fitting request, never used up
    repeat: bool = False
    #: reported token counts; None: estimated from the text sizes (4 characters a token)
    input_tokens: int | None = None
    output_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.error is not None:
            status, _ = self.error
            if not 400 <= status <= 599:
                raise ScriptError(f"error status {status} is not an HTTP error (400-599)")
            if self.text or self.tool_calls:
                raise ScriptError("a turn with an error has no text or tool_calls")
        elif not self.text and not self.tool_calls:
            raise ScriptError("a turn needs text, tool_calls or an error")
        if self.delay < 0:
            raise ScriptError(f"delay {self.delay} is negative")

    @property
    def finish(self) -> str:
        """``tool_calls`` when the model calls tools, else ``stop``."""
        return "tool_calls" if self.tool_calls else "stop"


DEFAULT_FALLBACK_MESSAGE = "fake LLM: no scripted turn fits this request"


@dataclass
class Script:
    """Turns in order, plus the ``fallback`` answer when none fits."""

    turns: list[Turn] = field(default_factory=list)
    fallback: Turn = field(
        default_factory=lambda: Turn(error=(500, DEFAULT_FALLBACK_MESSAGE), repeat=True)
    )

    # -- building in Python -------------------------------------------------------------
    def reply(self, text: str, **options: Any) -> Script:
        """Add a text answer (``when=Match(...)``, ``delay=…``, ``repeat=True`` …)."""
        self.turns.append(Turn(text=text, **options))
        return self

    def call_tool(self, name: str, arguments: Mapping[str, Any], **options: Any) -> Script:
        """Add an answer that calls one tool (``text=…`` may come with it)."""
        self.turns.append(Turn(tool_calls=(ToolCall(name, dict(arguments)),), **options))
        return self

    def fail(self, status: int, message: str, **options: Any) -> Script:
        """Add an HTTP error answer."""
        self.turns.append(Turn(error=(status, message), **options))
        return self

    # -- loading -------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Read a ``.json`` or ``.toml`` script file; errors name the file and the place."""
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ScriptError(f"{file}: {exc.strerror or exc}") from exc
        try:
            data = tomllib.loads(text) if file.suffix == ".toml" else json.loads(text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise ScriptError(
                f"{file}: not valid {'TOML' if file.suffix == '.toml' else 'JSON'}: {exc}"
            ) from exc
        try:
            return cls.from_data(data)
        except ScriptError as exc:
            raise ScriptError(f"{file}: {exc}") from exc

    @classmethod
    def from_data(cls, data: Any) -> Script:
        """A script from parsed JSON/TOML: ``{"turns": [...], "fallback": {...}}``."""
        if not isinstance(data, dict):
            raise ScriptError("a script is a table with a `turns` list")
        _no_unknown(data, {"turns", "fallback"}, "script")
        turns = data.get("turns", [])
        if not isinstance(turns, list):
            raise ScriptError("`turns` must be a list of tables")
        script = cls(turns=[_turn(item, f"turns[{i}]") for i, item in enumerate(turns)])
        if "fallback" in data:
            script.fallback = _turn(data["fallback"], "fallback")
        return script


_TURN_KEYS = {
    "text", "tool_calls", "when", "delay", "error", "repeat", "input_tokens", "output_tokens",
}  # fmt: skip
_MATCH_KEYS = {"user_contains", "user_regex", "tool_result", "tool_result_contains"}


def _no_unknown(table: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise ScriptError(
            f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )


def _typed(value: Any, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise ScriptError(f"{where}: must be {what}, not {value!r}")
    if not isinstance(value, kind):
        raise ScriptError(f"{where}: must be {what}, not {value!r}")
    return value


def _turn(item: Any, where: str) -> Turn:
    if not isinstance(item, dict):
        raise ScriptError(f"{where}: a turn is a table, not {item!r}")
    _no_unknown(item, _TURN_KEYS, where)
    options: dict[str, Any] = {}
    if "text" in item:
        options["text"] = _typed(item["text"], str, f"{where}.text", "a string")
    if "tool_calls" in item:
        calls = _typed(item["tool_calls"], list, f"{where}.tool_calls", "a list")
        options["tool_calls"] = tuple(
            _tool_call(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls)
        )
    if "when" in item:
        options["when"] = _match(item["when"], f"{where}.when")
    if "delay" in item:
        options["delay"] = float(_typed(item["delay"], (int, float), f"{where}.delay", "seconds"))
    if "error" in item:
        error = _typed(item["error"], dict, f"{where}.error", "{status, message}")
        _no_unknown(error, {"status", "message"}, f"{where}.error")
        status = _typed(error.get("status"), int, f"{where}.error.status", "an HTTP status")
        message = _typed(error.get("message", "error"), str, f"{where}.error.message", "text")
        options["error"] = (status, message)
    if "repeat" in item:
        options["repeat"] = _typed(item["repeat"], bool, f"{where}.repeat", "true or false")
    for key in ("input_tokens", "output_tokens"):
        if key in item:
            options[key] = _typed(item[key], int, f"{where}.{key}", "a token count")
    try:
        return Turn(**options)
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from exc


def _tool_call(item: Any, where: str) -> ToolCall:
    call = _typed(item, dict, where, "a table {name, arguments}")
    _no_unknown(call, {"name", "arguments", "id"}, where)
    name = _typed(call.get("name"), str, f"{where}.name", "a tool name")
    if not name:
        raise ScriptError(f"{where}.name: must not be empty")
    arguments = _typed(call.get("arguments", {}), dict, f"{where}.arguments", "a table")
    call_id = _typed(call.get("id", ""), str, f"{where}.id", "a string")
    return ToolCall(name, arguments, call_id)


def _match(item: Any, where: str) -> Match:
    table = _typed(item, dict, where, "a table of conditions")
    _no_unknown(table, _MATCH_KEYS, where)
    options: dict[str, Any] = {}
    for key in ("user_contains", "user_regex", "tool_result_contains"):
        if key in table:
            options[key] = _typed(table[key], str, f"{where}.{key}", "a string")
    if "tool_result" in table:
        options["tool_result"] = _typed(table["tool_result"], bool, f"{where}.tool_result", "bool")
    try:
        return Match(**options)
    except ScriptError as exc:
        raise ScriptError(f"{where}: {exc}") from exc
