"""Every ``herdr`` argv the orchestrator can emit is a form Herdr's own parser accepts.

The simulator's CLI accepting our argv proves little: it was written to accept it. This file
pins each operation of :mod:`orchestrator.client.cli_map` to the grammar of the Herdr
function that parses it, as read in Herdr's source (herdrdev/herdr at 1c76079f, Cargo
version 0.8.2; ``src/cli/*.rs``), and to a table of accepted forms, one row per operation and
flag combination. Then it drives every low-level tool and every typed client method with all
their optional arguments through a recording client, and checks that each argv they emit
(a) parses under that grammar and (b) has the flag combination of a row of the table.

So a new operation without a grammar and a row fails, and so does a change of ours that
emits a flag, a value or a combination Herdr would refuse (``--timeout 5000.0``, an unknown
option, a positional Herdr reads as an option). When a row is added, re-read the function
named in its grammar first.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from orchestrator.client import cli_map
from orchestrator.client.sync import HerdrClient
from orchestrator.client.transports import Exchange
from orchestrator.core.tool import ToolContext
from orchestrator.pipeline.registry import TOOLS, run_tool
from tests import results

HERDR_SOURCE = "herdrdev/herdr 1c76079f (0.8.2)"

#: How a flag's value must read: ``u64``/``u32`` (Rust ``str::parse``), ``f32`` (finite),
#: ``env`` (``KEY=VALUE``, ``parse_env_assignment``), ``text`` (anything), or a set of words.
Value = str | frozenset[str] | None
STATUSES = frozenset({"idle", "working", "blocked", "done", "unknown"})
SOURCES = frozenset({"visible", "recent", "recent-unwrapped", "recent_unwrapped", "detection"})


@dataclass(frozen=True)
class Grammar:
    """What one Herdr subcommand parser accepts."""

    words: tuple[str, ...]
    #: the Herdr function the grammar was read from
    source: str
    #: positional values after the words (ids first, then free text for ``rest``)
    positionals: int = 0
    #: the last positional swallows every remaining argument (``pane run``, ``send-keys``)
    rest: bool = False
    #: flag -> its value (None: a boolean flag)
    flags: Mapping[str, Value] = field(default_factory=dict)
    #: flags also accepted as one ``--flag=value`` token (``expand_equals_args``)
    equals: frozenset[str] = frozenset()
    #: ``--`` ends the options; what follows is passed through (``agent start``)
    separator: bool = False
    #: a positional starting with ``-`` is read as an option by this parser
    dash_is_option: bool = True


def _g(words: str, source: str, **kw: Any) -> Grammar:
    return Grammar(tuple(words.split()), f"{source} ({HERDR_SOURCE})", **kw)


_CREATE = {"--cwd": "text", "--label": "text", "--env": "env", "--focus": None, "--no-focus": None}
GRAMMARS: Mapping[str, Grammar] = {
    "ping": _g(
        "status server", "src/cli/status.rs parse_status_scope_args", flags={"--json": None}
    ),
    "workspace.list": _g("workspace list", "src/cli/workspace.rs workspace_list"),
    "workspace.get": _g("workspace get", "src/cli/workspace.rs workspace_get", positionals=1),
    "workspace.create": _g(
        "workspace create", "src/cli/workspace.rs workspace_create", flags=_CREATE
    ),
    "tab.list": _g("tab list", "src/cli/tab.rs tab_list", flags={"--workspace": "text"}),
    "tab.get": _g("tab get", "src/cli/tab.rs tab_get", positionals=1),
    "tab.create": _g(
        "tab create", "src/cli/tab.rs tab_create", flags={**_CREATE, "--workspace": "text"}
    ),
    "pane.list": _g("pane list", "src/cli/pane.rs pane_list", flags={"--workspace": "text"}),
    "pane.get": _g("pane get", "src/cli/pane.rs pane_get", positionals=1),
    "pane.layout": _g(
        "pane layout", "src/cli/pane.rs parse_optional_current_pane_args", flags={"--pane": "text"}
    ),
    "pane.process_info": _g(
        "pane process-info",
        "src/cli/pane.rs parse_optional_current_pane_args",
        flags={"--pane": "text"},
    ),
    "pane.edges": _g(
        "pane edges", "src/cli/pane.rs parse_optional_current_pane_args", flags={"--pane": "text"}
    ),
    "pane.read": _g(
        "pane read",
        "src/cli/pane.rs parse_pane_read_args",
        positionals=1,
        flags={"--source": SOURCES, "--lines": "u32", "--ansi": None, "--raw": None},
        equals=frozenset({"--source", "--lines"}),
    ),
    "pane.split": _g(
        "pane split",
        "src/cli/pane.rs parse_pane_split_args",
        positionals=1,
        flags={
            "--direction": frozenset({"right", "down"}),
            "--ratio": "f32",
            "--cwd": "text",
            "--env": "env",
            "--focus": None,
            "--no-focus": None,
        },
    ),
    "pane.run": _g("pane run", "src/cli/pane.rs pane_run", positionals=2, rest=True),
    "pane.wait_for_output": _g(
        "pane wait-output",
        "src/cli/pane.rs parse_pane_wait_output_args",
        positionals=1,
        flags={
            "--match": "text",
            "--regex": "text",
            "--source": SOURCES,
            "--lines": "u32",
            "--timeout": "u64",
        },
        equals=frozenset({"--match", "--regex", "--source", "--lines", "--timeout"}),
    ),
    "pane.send_text": _g(
        "pane send-text", "src/cli/pane.rs pane_send_text", positionals=2, rest=True
    ),
    "pane.close": _g("pane close", "src/cli/pane.rs pane_close", positionals=1),
    "agent.list": _g("agent list", "src/cli/agent.rs agent_list"),
    "agent.get": _g("agent get", "src/cli/agent.rs agent_get", positionals=1),
    "agent.read": _g(
        "agent read",
        "src/cli/agent.rs agent_read",
        positionals=1,
        flags={"--source": SOURCES, "--lines": "u32", "--format": "text", "--ansi": None},
    ),
    "agent.start": _g(
        "agent start",
        "src/cli/agent.rs agent_start (kinds: detect::parse_agent_label)",
        positionals=1,
        flags={"--kind": "kind", "--pane": "text", "--timeout": "u64"},
        separator=True,
    ),
    "agent.wait": _g(
        "agent wait",
        "src/cli/agent.rs agent_wait",
        positionals=1,
        flags={"--until": STATUSES, "--timeout": "u64"},
    ),
    "agent.prompt": _g(
        "agent prompt",
        "src/cli/agent.rs agent_prompt (--until/--timeout require --wait)",
        positionals=2,
        flags={"--wait": None, "--until": STATUSES, "--timeout": "u64"},
        dash_is_option=False,
    ),
    "agent.send_keys": _g(
        "agent send-keys", "src/cli/agent.rs agent_send_keys", positionals=2, rest=True
    ),
    "agent.explain": _g(
        "agent explain", "src/cli/agent.rs agent_explain", positionals=1, flags={"--json": None}
    ),
}

#: The accepted forms: one row per operation and flag combination, as cli_map emits them.
FORMS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("ping", {}, ["status", "server", "--json"]),
    ("workspace.list", {}, ["workspace", "list"]),
    ("workspace.get", {"workspace_id": "w1"}, ["workspace", "get", "w1"]),
    (
        "workspace.create",
        {"cwd": "/p", "focus": False},
        ["workspace", "create", "--cwd", "/p", "--no-focus"],
    ),
    (
        "workspace.create",
        {"cwd": "/p", "focus": True},
        ["workspace", "create", "--cwd", "/p", "--focus"],
    ),
    ("workspace.create", {"focus": False}, ["workspace", "create", "--no-focus"]),
    (
        "workspace.create",
        {"cwd": "/p", "label": "L", "env": {"A": "1"}, "focus": False},
        ["workspace", "create", "--cwd", "/p", "--label", "L", "--env", "A=1", "--no-focus"],
    ),
    (
        "workspace.create",
        {"cwd": "/p", "label": "L", "env": {"A": "1"}, "focus": True},
        ["workspace", "create", "--cwd", "/p", "--label", "L", "--env", "A=1", "--focus"],
    ),
    (
        "workspace.create",
        {"cwd": "/p", "label": "L", "focus": False},
        ["workspace", "create", "--cwd", "/p", "--label", "L", "--no-focus"],
    ),
    (
        "workspace.create",
        {"cwd": "/p", "env": {"A": "1"}, "focus": False},
        ["workspace", "create", "--cwd", "/p", "--env", "A=1", "--no-focus"],
    ),
    ("tab.list", {}, ["tab", "list"]),
    ("tab.list", {"workspace_id": "w1"}, ["tab", "list", "--workspace", "w1"]),
    ("tab.get", {"tab_id": "w1:t1"}, ["tab", "get", "w1:t1"]),
    (
        "tab.create",
        {"workspace_id": "w1", "focus": False},
        ["tab", "create", "--workspace", "w1", "--no-focus"],
    ),
    (
        "tab.create",
        {"workspace_id": "w1", "cwd": "/p", "focus": False},
        ["tab", "create", "--workspace", "w1", "--cwd", "/p", "--no-focus"],
    ),
    (
        "tab.create",
        {"workspace_id": "w1", "cwd": "/p", "label": "L", "env": {"A": "1"}, "focus": False},
        [
            "tab",
            "create",
            "--workspace",
            "w1",
            "--cwd",
            "/p",
            "--label",
            "L",
            "--env",
            "A=1",
            "--no-focus",
        ],
    ),
    (
        "tab.create",
        {"workspace_id": "w1", "cwd": "/p", "label": "L", "focus": False},
        ["tab", "create", "--workspace", "w1", "--cwd", "/p", "--label", "L", "--no-focus"],
    ),
    (
        "tab.create",
        {"workspace_id": "w1", "cwd": "/p", "env": {"A": "1"}, "focus": False},
        ["tab", "create", "--workspace", "w1", "--cwd", "/p", "--env", "A=1", "--no-focus"],
    ),
    (
        "tab.create",
        {"workspace_id": "w1", "cwd": "/p", "focus": True},
        ["tab", "create", "--workspace", "w1", "--cwd", "/p", "--focus"],
    ),
    ("pane.list", {}, ["pane", "list"]),
    ("pane.list", {"workspace_id": "w1"}, ["pane", "list", "--workspace", "w1"]),
    ("pane.get", {"pane_id": "w1:p1"}, ["pane", "get", "w1:p1"]),
    ("pane.layout", {"pane_id": "w1:p1"}, ["pane", "layout", "--pane", "w1:p1"]),
    ("pane.process_info", {"pane_id": "w1:p1"}, ["pane", "process-info", "--pane", "w1:p1"]),
    ("pane.edges", {"pane_id": "w1:p1"}, ["pane", "edges", "--pane", "w1:p1"]),
    ("pane.read", {"pane_id": "w1:p1"}, ["pane", "read", "w1:p1"]),
    (
        "pane.read",
        {"pane_id": "w1:p1", "source": "visible"},
        ["pane", "read", "w1:p1", "--source", "visible"],
    ),
    (
        "pane.read",
        {"pane_id": "w1:p1", "source": "recent-unwrapped", "lines": 5},
        ["pane", "read", "w1:p1", "--source", "recent-unwrapped", "--lines", "5"],
    ),
    (
        "pane.split",
        {"target_pane_id": "w1:p1", "direction": "right", "focus": False},
        ["pane", "split", "w1:p1", "--direction", "right", "--no-focus"],
    ),
    (
        "pane.split",
        {"target_pane_id": "w1:p1", "direction": "down", "focus": True},
        ["pane", "split", "w1:p1", "--direction", "down", "--focus"],
    ),
    (
        "pane.split",
        {
            "target_pane_id": "w1:p1",
            "direction": "down",
            "ratio": 0.3,
            "cwd": "/p",
            "env": {"A": "1"},
            "focus": False,
        },
        [
            "pane",
            "split",
            "w1:p1",
            "--direction",
            "down",
            "--ratio",
            "0.3",
            "--cwd",
            "/p",
            "--env",
            "A=1",
            "--no-focus",
        ],
    ),
    (
        "pane.split",
        {
            "target_pane_id": "w1:p1",
            "direction": "right",
            "ratio": 0.25,
            "cwd": "/p",
            "env": {"A": "1"},
            "focus": True,
        },
        [
            "pane",
            "split",
            "w1:p1",
            "--direction",
            "right",
            "--ratio",
            "0.25",
            "--cwd",
            "/p",
            "--env",
            "A=1",
            "--focus",
        ],
    ),
    (
        "pane.split",
        {"target_pane_id": "w1:p1", "direction": "down", "ratio": 0.3, "focus": False},
        ["pane", "split", "w1:p1", "--direction", "down", "--ratio", "0.3", "--no-focus"],
    ),
    (
        "pane.split",
        {"target_pane_id": "w1:p1", "direction": "down", "cwd": "/p", "focus": False},
        ["pane", "split", "w1:p1", "--direction", "down", "--cwd", "/p", "--no-focus"],
    ),
    (
        "pane.split",
        {"target_pane_id": "w1:p1", "direction": "down", "env": {"A": "1"}, "focus": False},
        ["pane", "split", "w1:p1", "--direction", "down", "--env", "A=1", "--no-focus"],
    ),
    (
        "pane.split",
        {"target_pane_id": "w1:p1", "direction": "down", "ratio": 0.3, "cwd": "/p", "focus": False},
        [
            "pane",
            "split",
            "w1:p1",
            "--direction",
            "down",
            "--ratio",
            "0.3",
            "--cwd",
            "/p",
            "--no-focus",
        ],
    ),
    ("pane.run", {"pane_id": "w1:p1", "command": "ls -l"}, ["pane", "run", "w1:p1", "ls -l"]),
    (
        "pane.wait_for_output",
        {"pane_id": "w1:p1", "match": {"type": "substring", "value": "x"}},
        ["pane", "wait-output", "w1:p1", "--match=x"],
    ),
    (
        "pane.wait_for_output",
        {
            "pane_id": "w1:p1",
            "source": "recent",
            "match": {"type": "substring", "value": "x"},
            "timeout_ms": 10,
        },
        ["pane", "wait-output", "w1:p1", "--match=x", "--source", "recent", "--timeout", "10"],
    ),
    (
        "pane.wait_for_output",
        {
            "pane_id": "w1:p1",
            "source": "recent",
            "lines": 3,
            "match": {"type": "regex", "value": "^a"},
            "timeout_ms": 10,
        },
        [
            "pane",
            "wait-output",
            "w1:p1",
            "--regex=^a",
            "--source",
            "recent",
            "--lines",
            "3",
            "--timeout",
            "10",
        ],
    ),
    (
        "pane.wait_for_output",
        {
            "pane_id": "w1:p1",
            "source": "recent",
            "lines": 3,
            "match": {"type": "substring", "value": "x"},
            "timeout_ms": 10,
        },
        [
            "pane",
            "wait-output",
            "w1:p1",
            "--match=x",
            "--source",
            "recent",
            "--lines",
            "3",
            "--timeout",
            "10",
        ],
    ),
    (
        "pane.wait_for_output",
        {
            "pane_id": "w1:p1",
            "source": "recent",
            "match": {"type": "regex", "value": "^a"},
            "timeout_ms": 10,
        },
        ["pane", "wait-output", "w1:p1", "--regex=^a", "--source", "recent", "--timeout", "10"],
    ),
    (
        "pane.wait_for_output",
        {"pane_id": "w1:p1", "source": "recent", "match": {"type": "regex", "value": "^a"}},
        ["pane", "wait-output", "w1:p1", "--regex=^a", "--source", "recent"],
    ),
    (
        "pane.wait_for_output",
        {"pane_id": "w1:p1", "source": "recent", "match": {"type": "substring", "value": "x"}},
        ["pane", "wait-output", "w1:p1", "--match=x", "--source", "recent"],
    ),
    ("pane.send_text", {"pane_id": "w1:p1", "text": "hi"}, ["pane", "send-text", "w1:p1", "hi"]),
    ("pane.close", {"pane_id": "w1:p2"}, ["pane", "close", "w1:p2"]),
    ("agent.list", {}, ["agent", "list"]),
    ("agent.get", {"target": "a"}, ["agent", "get", "a"]),
    ("agent.read", {"target": "a"}, ["agent", "read", "a"]),
    (
        "agent.read",
        {"target": "a", "source": "recent-unwrapped"},
        ["agent", "read", "a", "--source", "recent-unwrapped"],
    ),
    (
        "agent.read",
        {"target": "a", "source": "visible", "lines": 40},
        ["agent", "read", "a", "--source", "visible", "--lines", "40"],
    ),
    (
        "agent.start",
        {"name": "a", "kind": "pi", "pane_id": "w1:p1"},
        ["agent", "start", "a", "--kind", "pi", "--pane", "w1:p1"],
    ),
    (
        "agent.start",
        {"name": "a", "kind": "pi", "pane_id": "w1:p1", "timeout_ms": 5000},
        ["agent", "start", "a", "--kind", "pi", "--pane", "w1:p1", "--timeout", "5000"],
    ),
    (
        "agent.start",
        {"name": "a", "kind": "pi", "pane_id": "w1:p1", "args": ["--x"]},
        ["agent", "start", "a", "--kind", "pi", "--pane", "w1:p1", "--", "--x"],
    ),
    (
        "agent.start",
        {"name": "a", "kind": "pi", "pane_id": "w1:p1", "args": ["--x"], "timeout_ms": 5000},
        [
            "agent",
            "start",
            "a",
            "--kind",
            "pi",
            "--pane",
            "w1:p1",
            "--timeout",
            "5000",
            "--",
            "--x",
        ],
    ),
    ("agent.wait", {"target": "a"}, ["agent", "wait", "a"]),
    ("agent.wait", {"target": "a", "timeout_ms": 9}, ["agent", "wait", "a", "--timeout", "9"]),
    (
        "agent.wait",
        {"target": "a", "until": ["idle", "done"], "timeout_ms": 9},
        ["agent", "wait", "a", "--until", "idle", "--until", "done", "--timeout", "9"],
    ),
    ("agent.wait", {"target": "a", "until": ["idle"]}, ["agent", "wait", "a", "--until", "idle"]),
    ("agent.prompt", {"target": "a", "text": "go"}, ["agent", "prompt", "a", "go"]),
    (
        "agent.prompt",
        {"target": "a", "text": "go", "wait": {}},
        ["agent", "prompt", "a", "go", "--wait"],
    ),
    (
        "agent.prompt",
        {"target": "a", "text": "go", "wait": {"timeout_ms": 9}},
        ["agent", "prompt", "a", "go", "--wait", "--timeout", "9"],
    ),
    (
        "agent.prompt",
        {"target": "a", "text": "go", "wait": {"until": ["idle"], "timeout_ms": 9}},
        ["agent", "prompt", "a", "go", "--wait", "--until", "idle", "--timeout", "9"],
    ),
    (
        "agent.prompt",
        {"target": "a", "text": "go", "wait": {"until": ["idle"]}},
        ["agent", "prompt", "a", "go", "--wait", "--until", "idle"],
    ),
    ("agent.send_keys", {"target": "a", "keys": ["Escape"]}, ["agent", "send-keys", "a", "Escape"]),
    ("agent.explain", {"target": "a"}, ["agent", "explain", "a", "--json"]),
]


# -- the grammar check ---------------------------------------------------------------------------


def _value_ok(kind: Value, value: str) -> bool:
    if isinstance(kind, frozenset):
        return value in kind
    if kind in ("u64", "u32"):
        limit = 2**64 if kind == "u64" else 2**32
        return value.isascii() and value.isdigit() and int(value) < limit
    if kind == "f32":
        try:
            number = float(value)
        except ValueError:
            return False
        return math.isfinite(number) and "_" not in value
    if kind == "env":
        key, sep, _ = value.partition("=")
        return bool(sep) and bool(key)
    if kind == "kind":
        from orchestrator.client.protocol import parse_agent_label

        return parse_agent_label(value) is not None
    return kind == "text"


def herdr_refusal(op: str, argv: Sequence[str]) -> str | None:
    """Why Herdr's parser for ``op`` would refuse ``argv`` (None: it accepts it)."""
    grammar = GRAMMARS[op]
    words = len(grammar.words)
    if tuple(argv[:words]) != grammar.words:
        return f"expected {' '.join(grammar.words)}"
    tokens = list(argv[words:])
    positionals = 0
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if grammar.rest and positionals == grammar.positionals:
            break
        if token == "--" and grammar.separator:
            break
        flag, eq, attached = token.partition("=")
        if eq and flag in grammar.equals:
            if not _value_ok(grammar.flags[flag], attached):
                return f"invalid value for {flag}: {attached}"
            index += 1
            continue
        if token in grammar.flags:
            kind = grammar.flags[token]
            if kind is None:
                index += 1
                continue
            if index + 1 >= len(tokens):
                return f"missing value for {token}"
            if not _value_ok(kind, tokens[index + 1]):
                return f"invalid value for {token}: {tokens[index + 1]}"
            index += 2
            continue
        if positionals < grammar.positionals and not (
            grammar.dash_is_option and token.startswith("-") and positionals == 0
        ):
            positionals += 1
            index += 1
            continue
        return f"unknown option or argument: {token}"
    if positionals < grammar.positionals and not grammar.rest:
        return "missing positional"
    if grammar.rest and positionals < grammar.positionals - 1:
        return "missing positional"
    return None


def shape(op: str, argv: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """An argv's operation and the flags it uses (the table's unit)."""
    grammar = GRAMMARS[op]
    end = argv.index("--") if grammar.separator and "--" in argv else len(argv)
    flags = sorted(
        {
            token.partition("=")[0]
            for token in argv[len(grammar.words) : end]
            if token.partition("=")[0] in grammar.flags
        }
    )
    separated = ("--",) if end < len(argv) else ()
    return op, (*flags, *separated)


# -- what the orchestrator emits ----------------------------------------------------------------


class Recorder:
    """A transport that records each operation's argv and answers a plausible success."""

    name = "recorder"

    def __init__(self) -> None:
        self.argv: list[tuple[str, list[str]]] = []

    def run(
        self, op: cli_map.Operation, params: Mapping[str, Any], timeout: Any = None
    ) -> Exchange:
        argv = op.cli_argv(params)
        self.argv.append((op.name, argv))
        result: dict[str, Any] = {
            "type": "ok",
            "protocol": 22,
            "version": "0.9.2",
            "read": {"text": "", "pane_id": "w1:p1"},
            "agent": {"name": "a", "agent": "pi", "pane_id": "w1:p1", "terminal_id": "t"},
            "pane": {"pane_id": "w1:p1"},
            "tab": {"tab_id": "w1:t1"},
            "workspace": {"workspace_id": "w1"},
            "root_pane": {"pane_id": "w1:p1"},
            "layout": {},
            "process_info": {},
            "edges": {},
            "explain": {},
            "matched_line": "x",
            "workspaces": [],
            "tabs": [],
            "panes": [],
            "agents": [],
        }
        return Exchange(("herdr", *argv), 0, "", "", result, None, "cli")


def _recording_client() -> tuple[HerdrClient, Recorder]:
    recorder = Recorder()
    herdr = HerdrClient(recorder)
    return herdr, recorder


#: Every low-level tool with every optional argument (and each switch both ways).
TOOL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("workspace_list", {}),
    ("workspace_get", {"workspace": "w1"}),
    ("workspace_create", {"cwd": "/p"}),
    ("workspace_create", {"cwd": "/p", "label": "L", "env": {"A": "1"}}),
    ("tab_list", {}),
    ("tab_list", {"workspace": "w1"}),
    ("tab_get", {"tab": "w1:t1"}),
    ("tab_create", {"workspace": "w1", "cwd": "/p"}),
    ("tab_create", {"workspace": "w1", "cwd": "/p", "label": "L", "env": {"A": "1"}}),
    ("pane_list", {}),
    ("pane_list", {"workspace": "w1"}),
    ("pane_get", {"pane": "w1:p1"}),
    ("pane_layout", {"pane": "w1:p1"}),
    ("pane_process_info", {"pane": "w1:p1"}),
    ("pane_edges", {"pane": "w1:p1"}),
    ("pane_read", {"pane": "w1:p1"}),
    ("pane_read", {"pane": "w1:p1", "source": "visible", "lines": 7.0}),
    ("pane_split", {"pane": "w1:p1", "direction": "right"}),
    (
        "pane_split",
        {"pane": "w1:p1", "direction": "down", "ratio": 0.5, "cwd": "/p", "env": {"A": "1"}},
    ),
    ("pane_run", {"pane": "w1:p1", "command": "ls"}),
    ("pane_wait_output", {"pane": "w1:p1", "pattern": "x"}),
    (
        "pane_wait_output",
        {
            "pane": "w1:p1",
            "pattern": "^x",
            "regex": True,
            "source": "visible",
            "lines": 3,
            "timeout": 5000.0,
        },
    ),
    ("pane_send_text", {"pane": "w1:p1", "text": "hi"}),
    ("agent_list", {}),
    ("agent_get", {"agent": "a"}),
    ("agent_read", {"agent": "a"}),
    ("agent_read", {"agent": "a", "lines": 40.0}),
    ("agent_start", {"name": "a", "kind": "pi", "pane": "w1:p1"}),
    (
        "agent_start",
        {"name": "a", "kind": "qwen", "pane": "w1:p1", "args": ["--x"], "timeout": 300000.0},
    ),
    ("agent_wait", {"agent": "a"}),
    ("agent_wait", {"agent": "a", "until": ["idle", "done"], "timeout": 9.0}),
    ("agent_prompt", {"agent": "a", "prompt": "go"}),
    ("agent_prompt", {"agent": "a", "prompt": "go", "wait": False}),
    ("agent_prompt", {"agent": "a", "prompt": "go", "until": ["idle"], "timeout": 9.0}),
    ("agent_explain", {"agent": "a"}),
    ("doctor", {}),
]

#: Every typed client method with every optional argument.
CLIENT_CALLS: list[Callable[[HerdrClient], object]] = [
    lambda c: c.ping(),
    lambda c: c.workspace_create("/p", label="L", env={"A": "1"}, focus=True),
    lambda c: c.workspace_create(),
    lambda c: c.tab_create("w1", "/p", label="L", env={"A": "1"}),
    lambda c: c.tab_list("w1"),
    lambda c: c.pane_list(),
    lambda c: c.pane_split("w1:p1", "right", ratio=0.25, cwd="/p", env={"A": "1"}, focus=True),
    lambda c: c.pane_read("w1:p1", "detection", lines=3),
    lambda c: c.pane_wait_output("w1:p1", "x", regex=True, source="recent", lines=2, timeout_ms=1),
    lambda c: c.pane_run("w1:p1", "ls"),
    lambda c: c.pane_send_text("w1:p1", "x"),
    lambda c: c.pane_close("w1:p1"),
    lambda c: c.agent_send_keys("a", "Escape", "Enter"),
    lambda c: c.agent_read("a", "recent-unwrapped", lines=5),
    lambda c: c.agent_start("a", "claude-code", "w1:p1", args=["--model", "m"], timeout_ms=4000),
    lambda c: c.agent_wait("a", until=["idle"], timeout_ms=3),
    lambda c: c.agent_prompt("a", "go", wait=True, until=["done"], timeout_ms=3),
    lambda c: c.agent_prompt("a", "go"),
    lambda c: c.agent_explain("a"),
]


def _emitted() -> list[tuple[str, list[str]]]:
    herdr, recorder = _recording_client()
    ctx = ToolContext.with_client(herdr, {})
    for name, args in TOOL_CALLS:
        result = run_tool(f"_dsh_herdr_{name}", args, ctx)
        assert result["ok"] or results.field(result, "errorCode") != "invalid_arguments", result
    for call in CLIENT_CALLS:
        # the fake answer may not parse as a typed result; the argv is recorded before that
        with contextlib.suppress(KeyError, TypeError, ValueError):
            call(herdr)
    return recorder.argv


EMITTED = _emitted()


# -- the tests -----------------------------------------------------------------------------------


def test_every_operation_has_a_grammar_and_a_form() -> None:
    assert set(GRAMMARS) == set(cli_map.OPERATIONS)
    assert {row[0] for row in FORMS} == set(cli_map.OPERATIONS)


def test_every_tool_is_driven() -> None:
    assert {f"_dsh_herdr_{name}" for name, _ in TOOL_CALLS} == set(TOOLS)


@pytest.mark.parametrize(("op", "params", "argv"), FORMS)
def test_each_form_is_what_cli_map_emits_and_herdr_accepts(
    op: str, params: dict[str, Any], argv: list[str]
) -> None:
    assert cli_map.operation(op).cli_argv(params) == argv
    assert herdr_refusal(op, argv) is None


def test_the_forms_cover_distinct_flag_combinations() -> None:
    shapes = [shape(op, argv) for op, _, argv in FORMS]
    assert len(shapes) == len(set(shapes)), "two rows of one combination: drop one"


@pytest.mark.parametrize(("op", "argv"), EMITTED, ids=[" ".join(a) for _, a in EMITTED])
def test_every_argv_the_orchestrator_emits_is_a_pinned_form(op: str, argv: list[str]) -> None:
    assert herdr_refusal(op, argv) is None, f"Herdr ({GRAMMARS[op].source}) would refuse it"
    pinned = {shape(o, a) for o, _, a in FORMS}
    assert shape(op, argv) in pinned, "a new flag combination: check it in Herdr, add a row"


def test_every_operation_is_emitted_by_some_caller() -> None:
    assert {op for op, _ in EMITTED} == set(cli_map.OPERATIONS)


@pytest.mark.parametrize(
    ("op", "argv"),
    [
        (
            "pane.wait_for_output",
            ["pane", "wait-output", "w1:p1", "--match=x", "--timeout", "5000.0"],
        ),
        ("pane.read", ["pane", "read", "-x"]),
        ("agent.start", ["agent", "start", "a", "--kind", "wen", "--pane", "w1:p1"]),
        ("agent.prompt", ["agent", "prompt", "a", "go", "--timeout"]),
        ("pane.split", ["pane", "split", "w1:p1", "--direction", "left"]),
        ("workspace.create", ["workspace", "create", "--format", "json"]),
    ],
)
def test_the_grammar_check_refuses_what_herdr_refuses(op: str, argv: list[str]) -> None:
    assert herdr_refusal(op, argv) is not None
