"""The command line of the fake ``claude``: real Claude Code 2.1.332's options, read its way.

Claude Code parses its argv with commander.js, so a client that starts it with any of its
options gets a session, and one that passes an option it does not know gets
``error: unknown option '--x'`` (with ``(Did you mean --y?)`` when a visible option is close)
on stderr and exit status 1 — not the usage error (status 2) the other fakes give. The
option table is ``claude --help`` of the installed 2.1.332 (``.ci/install-real-agents``;
docs/simulator/real-agents.md) plus the hidden options that version was seen to accept.

commander's reading, as observed on that binary: an option's required value is the next
argument whatever it looks like (``--tools -p`` gives ``--tools`` the value ``-p``); an
optional value (``--resume [id]``) is taken only when the next argument is no option; a
variadic value (``--add-dir <dirs...>``) goes on over the arguments that are no options;
``--name=value`` gives a value inline, and to a flag without one is an unknown option;
``-abc`` is ``-a -b -c`` when ``-a`` is a flag, else ``-a bc`` when ``-a`` takes a value;
``--`` ends the options. Choices are checked (``--permission-mode``), an unknown
``--effort`` is only a warning, a ``--session-id`` that is no UUID an error.

What the fake does with them: ``--model``, ``--resume``/``-r``, ``--continue``/``-c``,
``--session-id``, ``--append-system-prompt``, ``--permission-mode``, ``--effort``, ``--print``
and the prompt change the session; the rest are accepted and change nothing it simulates.
Two options are the fake's own: ``--scenario FILE`` and ``--kind KIND`` (what every fake
takes).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

__all__ = [
    "CLAUDE_VERSION",
    "ClaudeArgs",
    "ClaudeUsageError",
    "claude_help",
    "parse_claude_args",
]

CLAUDE_VERSION = "2.1.332"

#: how an option takes its value
_FLAG, _VALUE, _OPTIONAL, _VARIADIC = "flag", "value", "optional", "variadic"


@dataclass(frozen=True)
class _Option:
    """One option: its names (short first when it has one), its value and the field it sets."""

    names: tuple[str, ...]
    arity: str
    value_name: str = ""
    dest: str | None = None
    choices: tuple[str, ...] = ()
    hidden: bool = False

    @property
    def long(self) -> str | None:
        return next((n for n in self.names if n.startswith("--")), None)

    def spec(self) -> str:
        """The option as commander names it in errors: ``-n, --name <name>``."""
        value = {_VALUE: f" <{self.value_name}>", _OPTIONAL: f" [{self.value_name}]",
                 _VARIADIC: f" <{self.value_name}...>"}.get(self.arity, "")  # fmt: skip
        return ", ".join(self.names) + value


def _o(names: str, arity: str = _FLAG, value_name: str = "", dest: str | None = None,
       choices: tuple[str, ...] = (), hidden: bool = False) -> _Option:  # fmt: skip
    return _Option(tuple(names.split(",")), arity, value_name, dest, choices, hidden)


PERMISSION_MODES = ("acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan")
EFFORTS = ("low", "medium", "high", "xhigh", "max")

#: ``claude --help`` of Claude Code 2.1.332, in its order; then hidden ones it accepted
_OPTIONS: tuple[_Option, ...] = (
    _o("--add-dir", _VARIADIC, "directories"),
    _o("--agent", _VALUE, "agent"),
    _o("--agents", _VALUE, "json-or-file"),
    _o("--allow-dangerously-skip-permissions"),
    _o("--allowedTools,--allowed-tools", _VARIADIC, "tools"),
    _o("--append-system-prompt", _VALUE, "prompt", "append_system_prompt"),
    _o("--autocompact", _VALUE, "auto|tokens"),
    _o("--ax-screen-reader"),
    _o("--bg,--background"),
    _o("--bare"),
    _o("--betas", _VARIADIC, "betas"),
    _o("--brief"),
    _o("--chrome"),
    _o("--cloud", _OPTIONAL, "description|session_id|url"),
    _o("-c,--continue", dest="continue_"),
    _o("--dangerously-skip-permissions"),
    _o("-d,--debug", _OPTIONAL, "filter"),
    _o("--debug-file", _VALUE, "path"),
    _o("--desktop"),
    _o("--disable-slash-commands"),
    _o("--disallowedTools,--disallowed-tools", _VARIADIC, "tools"),
    _o("--effort", _VALUE, "level", "effort"),
    _o("--environment", _VALUE, "environment_id"),
    _o("--exclude-dynamic-system-prompt-sections"),
    _o("--fallback-model", _VALUE, "model"),
    _o("--file", _VARIADIC, "specs"),
    _o("--fork-session"),
    _o("--forward-subagent-text"),
    _o("--from-pr", _OPTIONAL, "value"),
    _o("-h,--help", dest="help"),
    _o("--ide"),
    _o("--include-hook-events"),
    _o("--include-partial-messages"),
    _o("--input-format", _VALUE, "format", choices=("text", "stream-json")),
    _o("--json-schema", _VALUE, "schema"),
    _o("--max-budget-usd", _VALUE, "amount"),
    _o("--mcp-config", _VARIADIC, "configs"),
    _o("--model", _VALUE, "model", "model"),
    _o("-n,--name", _VALUE, "name"),
    _o("--no-chrome"),
    _o("--no-session-persistence"),
    _o("--output-format", _VALUE, "format", choices=("text", "json", "stream-json")),
    # "default" is accepted too (the real-agent fixture passes it) but not listed
    _o("--permission-mode", _VALUE, "mode", "permission_mode", PERMISSION_MODES),
    _o("--permission-prompts", _VALUE, "target", choices=("host", "none")),
    _o("--plugin-dir", _VALUE, "path"),
    _o("--plugin-url", _VALUE, "url"),
    _o("-p,--print", dest="print_"),
    _o("--prompt-suggestions", _OPTIONAL, "value"),
    _o("--remote-control", _OPTIONAL, "name"),
    _o("--remote-control-session-name-prefix", _VALUE, "prefix"),
    _o("--replay-user-messages"),
    _o("--restricted"),
    _o("-r,--resume", _OPTIONAL, "value", "resume"),
    _o("--safe-mode"),
    _o("--session-id", _VALUE, "uuid", "session_id"),
    _o("--setting-sources", _VALUE, "sources"),
    _o("--settings", _VALUE, "file-or-json"),
    _o("--strict-mcp-config"),
    _o("--system-prompt", _VALUE, "prompt"),
    _o("--system-prompt-snapshot", _VALUE, "on|off", choices=("on", "off")),
    _o("--teleport", _OPTIONAL, "session"),
    _o("--tmux"),
    _o("--tools", _VARIADIC, "tools"),
    _o("--verbose"),
    _o("-v,--version", dest="version"),
    _o("-w,--worktree", _OPTIONAL, "name"),
    # hidden: not in --help, accepted by 2.1.332
    _o("--max-turns", _VALUE, "turns", hidden=True),
    _o("--permission-prompt-tool", _VALUE, "tool", hidden=True),
    _o("--system-prompt-file", _VALUE, "file", hidden=True),
    _o("--append-system-prompt-file", _VALUE, "file", hidden=True),
    _o("--max-thinking-tokens", _VALUE, "tokens", hidden=True),
    _o("--thinking", _VALUE, "mode", choices=("enabled", "adaptive", "disabled"), hidden=True),
    _o("--init", hidden=True),
    _o("--init-only", hidden=True),
    _o("--maintenance", hidden=True),
    # the fake's own
    _o("--scenario", _VALUE, "file", "scenario", hidden=True),
    _o("--kind", _VALUE, "kind", "kind", hidden=True),
)
_BY_NAME = {name: option for option in _OPTIONS for name in option.names}
#: choices an option takes beyond the ones its error lists
_HIDDEN_CHOICES = {"--permission-mode": ("default",)}


class ClaudeUsageError(Exception):
    """What commander prints on stderr for a bad command line; Claude Code exits 1."""

    status = 1


@dataclass
class ClaudeArgs:
    """The options of one fake claude run that change what it does."""

    model: str | None = None
    resume: str | None = None
    #: ``--resume`` without a value (Claude Code's session picker)
    resume_picker: bool = False
    continue_: bool = False
    session_id: str | None = None
    append_system_prompt: str | None = None
    permission_mode: str = "default"
    effort: str | None = None
    print_: bool = False
    help: bool = False
    version: bool = False
    scenario: str | None = None
    kind: str | None = None
    prompt: str | None = None
    #: what Claude Code prints on stderr and goes on (an unknown ``--effort``)
    warnings: list[str] = field(default_factory=list)


def _distance(a: str, b: str) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def _suggestion(flag: str) -> str:
    """commander's ``(Did you mean …?)``: the visible long options at the smallest edit
    distance (at most 3) that keep over 40 % of the longer word."""
    if not flag.startswith("--"):
        return ""
    word = flag[2:]
    best, similar = 3, list[str]()
    for option in _OPTIONS:
        long = option.long
        if option.hidden or long is None or len(long) <= 3:
            continue  # commander makes no one-letter guesses
        candidate = long[2:]
        distance = _distance(word, candidate)
        length = max(len(word), len(candidate))
        if (length - distance) / length > 0.4:
            if distance < best:
                best, similar = distance, [candidate]
            elif distance == best:
                similar.append(candidate)
    names = [f"--{c}" for c in sorted(similar)]
    if len(names) > 1:
        return f"\n(Did you mean one of {', '.join(names)}?)"
    return f"\n(Did you mean {names[0]}?)" if names else ""


def _unknown(arg: str) -> ClaudeUsageError:
    return ClaudeUsageError(f"error: unknown option '{arg}'{_suggestion(arg)}")


def _set(args: ClaudeArgs, option: _Option, value: str | bool | list[str]) -> None:
    if isinstance(value, str) and option.choices:
        allowed = option.choices + _HIDDEN_CHOICES.get(option.long or "", ())
        if value not in allowed:
            raise ClaudeUsageError(
                f"error: option '{option.spec()}' argument '{value}' is invalid. "
                f"Allowed choices are {', '.join(option.choices)}."
            )
    if option.dest is None:
        return
    if option.dest == "resume" and value is True:
        args.resume_picker = True
        return
    setattr(args, option.dest, value)


def _take_value(option: _Option, rest: list[str]) -> str | bool | list[str]:
    """The value of ``option`` from the arguments after it (consumed)."""
    if option.arity == _FLAG:
        return True
    if option.arity == _VALUE:
        if not rest:
            raise ClaudeUsageError(f"error: option '{option.spec()}' argument missing")
        return rest.pop(0)
    if option.arity == _OPTIONAL:
        return rest.pop(0) if rest and not rest[0].startswith("-") else True
    if not rest:
        raise ClaudeUsageError(f"error: option '{option.spec()}' argument missing")
    values = [rest.pop(0)]
    while rest and not rest[0].startswith("-"):
        values.append(rest.pop(0))
    return values


def parse_claude_args(argv: list[str]) -> ClaudeArgs:
    """Read ``argv`` as Claude Code 2.1.332 does; :class:`ClaudeUsageError` when it would
    refuse it (the message is commander's, the status 1)."""
    args = ClaudeArgs()
    positional: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            positional += rest
            break
        if arg.startswith("--"):
            name, eq, inline = arg.partition("=")
            option = _BY_NAME.get(name)
            if option is None or (eq and option.arity == _FLAG):
                raise _unknown(arg)
            if eq and option.arity == _VARIADIC:
                values = [inline]
                while rest and not rest[0].startswith("-"):
                    values.append(rest.pop(0))
                value: str | bool | list[str] = values
            elif eq:
                value = inline
            else:
                value = _take_value(option, rest)
            _set(args, option, value)
        elif arg.startswith("-") and len(arg) > 1:
            option = _BY_NAME.get(arg[:2])
            if option is None:
                raise _unknown(arg)
            if len(arg) > 2:  # -abc: -a -bc (a flag) or -a with the value bc
                if option.arity == _FLAG:
                    rest.insert(0, "-" + arg[2:])
                    _set(args, option, True)
                    continue
                rest.insert(0, arg[2:])
                value = rest.pop(0) if option.arity != _VARIADIC else _take_value(option, rest)
                _set(args, option, value)
                continue
            _set(args, option, _take_value(option, rest))
        else:
            positional.append(arg)
    if args.effort is not None and args.effort.lower() not in EFFORTS:
        args.warnings.append(
            f"Warning: Unknown --effort value '{args.effort}' — ignoring it and using the "
            f"default effort. Valid values: {', '.join(EFFORTS)}."
        )
        args.effort = None
    if args.session_id is not None and not _is_uuid(args.session_id):
        raise ClaudeUsageError("Error: Invalid session ID. Must be a valid UUID.")
    if positional:
        args.prompt = " ".join(positional)
    return args


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36


def claude_help() -> str:
    """``claude --help``, short: the usage line and every option Claude Code lists."""
    lines = [
        "Usage: claude [options] [command] [prompt]",
        "",
        "Claude Code (herdr-sim fake) - starts an interactive session by default",
        "",
        "Options:",
    ]
    lines += [f"  {o.spec()}" for o in _OPTIONS if not o.hidden]
    return "\n".join(lines)
