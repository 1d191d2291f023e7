"""`herdr pane ...`: pane.* socket methods, with Herdr's argument rules.

Each subcommand builds its params in the declaration order of Herdr's request structs and
leaves out exactly the fields Herdr's serializer skips (absent optionals, empty maps), so a
recording server sees the request real Herdr would send. Herdr 0.9 behaviour on top of
0.8.2's parser: ``pane split`` without a target splits the calling pane
(``$HERDR_PANE_ID``); ``--current`` without ``HERDR_PANE_ID`` is a usage error wherever it
means "the calling pane"; ``report-agent``/``report-agent-session`` accept options before
the pane id, ``--option=value``, and a resume command after ``--`` (``resume_argv``).
"""

from __future__ import annotations

from ..client import Context
from ..errors import UsageError
from ..options import (
    CALLER,
    CALLER_IF_ANY,
    U32,
    U64,
    U64_FATAL,
    Flag,
    Lead,
    Pairs,
    Positional,
    Spec,
    Tail,
    Value,
    choice,
    finite_f32,
    pick,
    switch,
)
from ..output import print_read_response
from ._common import (
    READ_SOURCES,
    STATUSES,
    TOKEN_OPTIONS,
    WORKSPACE_FILTER,
    env_assignment,
    subcommand,
    unknown_subcommand,
)

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["run"]

_READ_USAGE = (
    "usage: herdr pane read <pane_id> [--source visible|recent|recent-unwrapped|detection] "
    "[--lines N] [--format text|ansi] [--ansi] [--raw]"
)
_INPUT_USAGE = "usage: herdr pane input [<pane_id>|--pane ID|--current] --right-click herdr|pane"
_SPLIT_USAGE = (
    "usage: herdr pane split [<pane_id>|--pane ID|--current] --direction right|down "
    "[--ratio FLOAT] [--cwd PATH] [--env KEY=VALUE] [--right-click herdr|pane] [--focus] "
    "[--no-focus]"
)
_NEIGHBOR_USAGE = "usage: herdr pane neighbor --direction left|right|up|down [--pane ID|--current]"
_FOCUS_USAGE = "usage: herdr pane focus --direction left|right|up|down [--pane ID|--current]"
_RESIZE_USAGE = (
    "usage: herdr pane resize --direction left|right|up|down [--amount FLOAT] [--pane ID|--current]"
)
_SWAP_USAGE = (
    "usage: herdr pane swap --direction left|right|up|down [--pane ID|--current]\n"
    "       herdr pane swap --source-pane ID --target-pane ID"
)
_MOVE_USAGE = (
    "usage: herdr pane move <pane_id> --tab <tab_id> --split right|down [--target-pane ID] "
    "[--ratio FLOAT] [--focus|--no-focus]\n"
    "       herdr pane move <pane_id> --new-tab [--workspace ID] [--label TEXT] "
    "[--focus|--no-focus]\n"
    "       herdr pane move <pane_id> --new-workspace [--label TEXT] [--tab-label TEXT] "
    "[--focus|--no-focus]"
)
_WAIT_OUTPUT_USAGE = (
    "usage: herdr pane wait-output <pane_id> (--match TEXT | --regex PATTERN) "
    "[--source visible|recent|recent-unwrapped] [--lines N] [--timeout MS] [--raw]"
)
_REPORT_AGENT_USAGE = (
    "usage: herdr pane report-agent <pane_id> --source ID --agent LABEL "
    "--state idle|working|blocked|unknown [--message TEXT] [--seq N] "
    "[--agent-session-id ID] [--agent-session-path PATH] [-- <resume command...>]"
)
_REPORT_SESSION_USAGE = (
    "usage: herdr pane report-agent-session <pane_id> --source ID --agent LABEL [--seq N] "
    "[--agent-session-id ID] [--agent-session-path PATH] [--session-start-source SOURCE] "
    "[-- <resume command...>]"
)
_RELEASE_USAGE = "usage: herdr pane release-agent <pane_id> --source ID --agent LABEL [--seq N]"
_METADATA_USAGE = (
    "usage: herdr pane report-metadata <pane_id> --source ID [--agent LABEL] "
    "[--applies-to-source ID] [--title TEXT|--clear-title] "
    "[--display-agent TEXT|--clear-display-agent] [--state-label STATUS=TEXT] "
    "[--clear-state-labels] [--token NAME=VALUE] [--clear-token NAME] [--seq N] [--ttl-ms N]"
)


def _state_label(raw: str) -> tuple[str, str]:
    """``--state-label STATUS=TEXT``; the status is trimmed and lower-cased."""
    status, sep, label = raw.partition("=")
    if not sep:
        raise UsageError("expected --state-label STATUS=TEXT")
    status = status.strip().lower()
    if status not in STATUSES:
        raise UsageError(f"unknown state label: {status}")
    return status, label


def _trimmed(source: str) -> str | None:
    """``--source`` is sent trimmed; a blank one counts as missing."""
    return source.strip() or None


def _matcher(kind: str) -> Callable[[str], dict[str, str]]:
    return lambda value: {"type": kind, "value": value}


def _direction(required: str | None = None) -> Value:
    """``--direction left|right|up|down``; ``required`` is the usage shown without it."""
    message = "invalid pane direction: {value} (expected left, right, up, or down)"
    convert = choice(("left", "right", "up", "down"), message)
    return Value("--direction", convert=convert, required=required or False)


_READ_SOURCE = Value("--source", convert=choice(READ_SOURCES, "invalid read source: {value}"))
_RIGHT_CLICK = choice(("herdr", "pane"), "invalid right-click target: {value}")
_RATIO = Value("--ratio", convert=finite_f32("ratio"))
_SOURCE = Value("--source", convert=_trimmed, required=True)
_AGENT = Value("--agent", required=True)
_SEQ = Value("--seq", convert=U64_FATAL)
#: ``--pane ID`` or ``--current``, where ``--current`` leaves the pane to the server (the
#: focused pane) on neighbor/focus/resize/zoom/swap.
_PANE_OR_FOCUSED = (Value("--pane", "pane_id"), Flag("--current", pane_id=None))
_ONE_SELECTOR = "provide only one pane selector"
_ONE_ZOOM_MODE = "provide only one of --toggle, --on, or --off"
_ONE_MATCHER = "--match and --regex are mutually exclusive"

_CURRENT = Spec(
    Value("--pane", "caller_pane_id"),
    Flag("--current", caller_pane_id=CALLER_IF_ANY),
    defaults={"caller_pane_id": CALLER_IF_ANY},
)
_TARGET = Spec(Value("--pane", "pane_id"), Flag("--current", pane_id=CALLER))
_NEIGHBOR = Spec(*_PANE_OR_FOCUSED, _direction(_NEIGHBOR_USAGE))
_FOCUS = Spec(
    *_PANE_OR_FOCUSED, _direction(_FOCUS_USAGE), usage=_FOCUS_USAGE, errors_are_usage=True
)
_RESIZE = Spec(
    *_PANE_OR_FOCUSED,
    _direction(_RESIZE_USAGE),
    Value("--amount", convert=finite_f32("amount")),
)
_ZOOM = Spec(
    Lead("pane_id", optional=True),
    *_PANE_OR_FOCUSED,
    Flag("--toggle", mode="toggle", once=_ONE_ZOOM_MODE),
    Flag("--on", mode="on", once=_ONE_ZOOM_MODE),
    Flag("--off", mode="off", once=_ONE_ZOOM_MODE),
    defaults={"mode": "toggle"},
)
_INPUT = Spec(
    Positional("pane_id", required=True),
    Value("--pane", "pane_id", if_set=_ONE_SELECTOR),
    Flag("--current", pane_id=CALLER, if_set=_ONE_SELECTOR),
    Value("--right-click", convert=_RIGHT_CLICK, required=_INPUT_USAGE),
    usage=_INPUT_USAGE,
    equals=True,
)
_SPLIT = Spec(
    Lead("target_pane_id", optional=True),
    Value("--pane", "target_pane_id"),
    Flag("--current", target_pane_id=CALLER),
    Value(
        "--direction",
        convert=choice(("right", "down"), "invalid split direction: {value}"),
        required=_SPLIT_USAGE,
    ),
    _RATIO,
    Value("--cwd"),
    *switch("--focus", "--no-focus"),
    Value("--right-click", convert=_RIGHT_CLICK),
    Pairs("--env", convert=env_assignment),
    defaults={"focus": False, "right_click": "herdr"},
    equals=("--right-click",),
)
_SWAP = Spec(
    *_PANE_OR_FOCUSED,
    _direction(),
    Value("--source-pane", "source_pane_id"),
    Value("--target-pane", "target_pane_id"),
)
_MOVE = Spec(
    Lead("pane_id"),
    Value("--tab", "tab_id"),
    Flag("--new-tab"),
    Flag("--new-workspace"),
    Value("--workspace", "workspace_id"),
    Value("--target-pane", "target_pane_id"),
    Value(
        "--split",
        convert=choice(
            ("right", "down"), "invalid split direction: {value} (expected right or down)"
        ),
    ),
    _RATIO,
    Value("--label"),
    Value("--tab-label"),
    *switch("--focus", "--no-focus"),
    defaults={"focus": True},
    usage=_MOVE_USAGE,
)
#: ``pane move``'s destinations: the option that selects one, the fields it sends, and the
#: options it must not be given.
_MOVE_DESTINATIONS = {
    "tab": (
        "tab_id",
        ("tab_id", "target_pane_id", "split", "ratio"),
        ("workspace_id", "label", "tab_label"),
    ),
    "new_tab": ("new_tab", ("workspace_id", "label"), ("split", "target_pane_id", "tab_label")),
    "new_workspace": (
        "new_workspace",
        ("label", "tab_label"),
        ("split", "target_pane_id", "workspace_id"),
    ),
}
_READ = Spec(
    Positional("pane_id", required=True),
    _READ_SOURCE,
    Value("--lines", convert=U32),
    Value("--format", convert=choice(("text", "ansi"), "invalid read format: {value}")),
    Flag("--ansi", format="ansi"),
    Flag("--raw", format="ansi", strip_ansi=False),
    defaults={"source": "recent", "format": "text", "strip_ansi": True},
    usage=_READ_USAGE,
    equals=True,
)
_WAIT_OUTPUT = Spec(
    Positional("pane_id", required=True),
    _READ_SOURCE,
    Value("--lines", convert=U32),
    Value(
        "--match",
        "match",
        _matcher("substring"),
        once=_ONE_MATCHER,
        required="missing required --match or --regex",
    ),
    Value("--regex", "match", _matcher("regex"), once=_ONE_MATCHER),
    Value("--timeout", "timeout_ms", U64),
    Flag("--raw", strip_ansi=False),
    defaults={"source": "recent", "strip_ansi": True},
    usage=_WAIT_OUTPUT_USAGE,
    equals=True,
)
#: ``report-agent``/``report-agent-session``: options may precede the pane id, and the
#: agent's resume command follows a literal ``--``.
_REPORTER = (Positional("pane_id", required=True), _SOURCE, _AGENT)
_AGENT_SESSION = (_SEQ, Value("--agent-session-id"), Value("--agent-session-path"))
_RESUME = Tail("resume_argv", missing="missing resume command after --")
_REPORT_AGENT = Spec(
    *_REPORTER,
    Value(
        "--state",
        convert=choice(
            ("idle", "working", "blocked", "unknown"),
            "invalid pane agent state: {value} (expected idle, working, blocked, or unknown)",
            fatal=True,
        ),
        required=True,
    ),
    Value("--message"),
    *_AGENT_SESSION,
    _RESUME,
    usage=_REPORT_AGENT_USAGE,
    equals=True,
)
_REPORT_SESSION = Spec(
    *_REPORTER,
    *_AGENT_SESSION,
    Value("--session-start-source"),
    _RESUME,
    usage=_REPORT_SESSION_USAGE,
    equals=True,
)
_RELEASE = Spec(Lead("pane_id"), _SOURCE, _AGENT, _SEQ, usage=_RELEASE_USAGE)
_CLEARS = ("clear_title", "clear_display_agent", "clear_state_labels")
_METADATA = Spec(
    Lead("pane_id"),
    _SOURCE,
    Value("--agent"),
    Value("--applies-to-source"),
    Value("--title"),
    Value("--display-agent"),
    Pairs("--state-label", "state_labels", _state_label),
    *TOKEN_OPTIONS,
    Flag("--clear-title"),
    Flag("--clear-display-agent"),
    Flag("--clear-state-labels"),
    _SEQ,
    Value("--ttl-ms", convert=U64_FATAL),
    defaults=dict.fromkeys(_CLEARS, False),
    usage=_METADATA_USAGE,
)


_HELP = (
    "herdr pane commands:",
    "  herdr pane list [--workspace <workspace_id>]",
    "  herdr pane current [--pane ID|--current]",
    "  herdr pane get <pane_id>",
    "  herdr pane layout [--pane ID|--current]",
    "  herdr pane process-info [--pane ID|--current]",
    "  " + _NEIGHBOR_USAGE.removeprefix("usage: "),
    "  herdr pane edges [--pane ID|--current]",
    "  " + _FOCUS_USAGE.removeprefix("usage: "),
    "  " + _RESIZE_USAGE.removeprefix("usage: "),
    "  herdr pane zoom [<pane_id>|--pane ID|--current] [--toggle|--on|--off]",
    "  herdr pane rename <pane_id> <label>|--clear",
    (
        "  herdr pane read <pane_id> [--source visible|recent|recent-unwrapped] [--lines N] "
        "[--format text|ansi] [--ansi]"
    ),
    "  " + _INPUT_USAGE.removeprefix("usage: "),
    "  " + _SPLIT_USAGE.removeprefix("usage: "),
    "  herdr pane swap --direction left|right|up|down [--pane ID|--current]",
    "  herdr pane swap --source-pane ID --target-pane ID",
    *("  " + line.strip().removeprefix("usage: ") for line in _MOVE_USAGE.split("\n")),
    "  herdr pane close <pane_id>",
    "  herdr pane send-text <pane_id> <text>",
    "  herdr pane send-keys <pane_id> <key> [key ...]",
    "  " + _WAIT_OUTPUT_USAGE.removeprefix("usage: "),
    "  " + _REPORT_AGENT_USAGE.removeprefix("usage: "),
    "  " + _REPORT_SESSION_USAGE.removeprefix("usage: "),
    "  " + _RELEASE_USAGE.removeprefix("usage: "),
    "  " + _METADATA_USAGE.removeprefix("usage: "),
    "  herdr pane run <pane_id> <command>",
)


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr pane <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    env_pane = ctx.env.get("HERDR_PANE_ID")
    caller = env_pane if env_pane is not None and env_pane.strip() else None
    if sub == "list":
        return ctx.print_method("cli:pane:list", "pane.list", WORKSPACE_FILTER.request(rest))
    if sub in ("get", "close"):
        if len(rest) != 1:
            raise UsageError(f"usage: herdr pane {sub} <pane_id>")
        return ctx.print_method(f"cli:pane:{sub}", f"pane.{sub}", {"pane_id": rest[0]})
    if sub == "current":
        params = _CURRENT.request(rest, caller)
        return ctx.print_method("cli:pane:current", "pane.current", params)
    if sub in ("layout", "process-info", "edges"):
        method = sub.replace("-", "_")
        params = _TARGET.request(rest, caller)
        return ctx.print_method(f"cli:pane:{method}", f"pane.{method}", params)
    if sub == "neighbor":
        return ctx.print_method("cli:pane:neighbor", "pane.neighbor", _NEIGHBOR.request(rest))
    if sub == "focus":
        return ctx.print_method("cli:pane:focus", "pane.focus_direction", _FOCUS.request(rest))
    if sub == "resize":
        return ctx.print_method("cli:pane:resize", "pane.resize", _RESIZE.request(rest))
    if sub == "zoom":
        return ctx.print_method("cli:pane:zoom", "pane.zoom", _ZOOM.request(rest))
    if sub == "rename":
        if len(rest) < 2:
            raise UsageError("usage: herdr pane rename <pane_id> <label>|--clear")
        params = {"pane_id": rest[0]}
        if not (len(rest) == 2 and rest[1] == "--clear"):
            params["label"] = " ".join(rest[1:])
        return ctx.print_method("cli:pane:rename", "pane.rename", params)
    if sub == "read":
        return print_read_response(ctx.send("cli:pane:read", "pane.read", _READ.request(rest)))
    if sub == "input":
        params = _INPUT.request(rest, caller)
        return ctx.print_method("cli:pane:input:set", "pane.input.set", params)
    if sub == "split":
        return ctx.print_method("cli:pane:split", "pane.split", _split_params(rest, caller))
    if sub == "swap":
        return ctx.print_method("cli:pane:swap", "pane.swap", _swap_params(rest))
    if sub == "move":
        return ctx.print_method("cli:pane:move", "pane.move", _move_params(rest))
    if sub == "send-text":
        if len(rest) < 2:
            raise UsageError("usage: herdr pane send-text <pane_id> <text>")
        return ctx.send_ok("pane.send_text", {"pane_id": rest[0], "text": " ".join(rest[1:])})
    if sub == "send-keys":
        if len(rest) < 2:
            raise UsageError("usage: herdr pane send-keys <pane_id> <key> [key ...]")
        return ctx.send_ok("pane.send_keys", {"pane_id": rest[0], "keys": rest[1:]})
    if sub == "run":
        if len(rest) < 2:
            raise UsageError("usage: herdr pane run <pane_id> <command>")
        text = " ".join(rest[1:])
        params = {"pane_id": rest[0]}
        if text:
            params["text"] = text
        params["keys"] = ["Enter"]
        return ctx.send_ok("pane.send_input", params)
    if sub == "wait-output":
        params = _WAIT_OUTPUT.request(rest)
        return ctx.print_method("cli:pane:wait-output", "pane.wait_for_output", params)
    if sub == "report-agent":
        return ctx.send_ok("pane.report_agent", _REPORT_AGENT.request(rest))
    if sub == "report-agent-session":
        return ctx.send_ok("pane.report_agent_session", _REPORT_SESSION.request(rest))
    if sub == "release-agent":
        return ctx.send_ok("pane.release_agent", _RELEASE.request(rest))
    if sub == "report-metadata":
        return ctx.send_ok("pane.report_metadata", _metadata_params(rest))
    return unknown_subcommand(sub, _HELP)


# -- commands with more than one shape ---------------------------------------------------------


def _split_params(args: list[str], caller: str | None) -> dict[str, Any]:
    values = _SPLIT.parse(args, caller)
    if values["target_pane_id"] is None:
        # Herdr 0.9.1: inside a pane, an untargeted split splits the calling pane.
        values["target_pane_id"] = caller
    return _SPLIT.params(values)


def _swap_params(args: list[str]) -> dict[str, Any]:
    values = _SWAP.parse(args)
    direction, pane_id = values["direction"], values["pane_id"]
    source, target = values["source_pane_id"], values["target_pane_id"]
    if direction is not None and source is None and target is None:
        return pick(values, "pane_id", "direction")
    if direction is None and pane_id is None and source is not None and target is not None:
        return pick(values, "source_pane_id", "target_pane_id")
    raise UsageError(_SWAP_USAGE)


def _move_params(args: list[str]) -> dict[str, Any]:
    if not args or args[0].startswith("-"):
        raise UsageError(_MOVE_USAGE)
    values = _MOVE.parse(args)
    kinds = [kind for kind, (key, _, _) in _MOVE_DESTINATIONS.items() if values[key] is not None]
    if len(kinds) != 1:
        raise UsageError(_MOVE_USAGE)
    kind = kinds[0]
    _, fields, forbidden = _MOVE_DESTINATIONS[kind]
    if any(values[key] is not None for key in forbidden) or (
        kind == "tab" and values["split"] is None
    ):
        raise UsageError(_MOVE_USAGE)
    destination = {"type": kind, **pick(values, *fields)}
    return {"pane_id": values["pane_id"], "destination": destination, "focus": values["focus"]}


def _metadata_params(args: list[str]) -> dict[str, Any]:
    values = _METADATA.parse(args)
    applies_to = values["applies_to_source"]
    if applies_to is not None and not applies_to.strip():
        raise UsageError("missing value for --applies-to-source")
    if (
        (values["title"] is not None and values["clear_title"])
        or (values["display_agent"] is not None and values["clear_display_agent"])
        or (values["state_labels"] and values["clear_state_labels"])
    ):
        raise UsageError("cannot set and clear the same metadata field")
    given = pick(values, "title", "display_agent", "state_labels", "tokens")
    if not given and not any(values[key] for key in _CLEARS):
        raise UsageError("missing metadata field to set or clear")
    return _METADATA.params(values)
