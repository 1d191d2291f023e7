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

import math
from typing import Any

from ..client import Context
from ..errors import UsageError
from ..flags import (
    expand_equals,
    fatal_other,
    invalid_value,
    parse_f32,
    parse_unsigned,
    u64_or_fatal,
)
from ..output import print_read_response
from ._common import HELP_WORDS, env_assignment, print_lines, take_value, token_assignment

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
_CURRENT_NEEDS_ENV = "--current requires HERDR_PANE_ID"
_READ_SOURCES = {
    "visible": "visible",
    "recent": "recent",
    "recent-unwrapped": "recent_unwrapped",
    "recent_unwrapped": "recent_unwrapped",
    "detection": "detection",
}
_DIRECTIONS = ("left", "right", "up", "down")
_STATUSES = ("idle", "working", "blocked", "done", "unknown")
_AGENT_STATES = ("idle", "working", "blocked", "unknown")


def _help() -> None:
    print_lines(
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
        "  herdr pane read <pane_id> [--source visible|recent|recent-unwrapped] [--lines N] "
        "[--format text|ansi] [--ansi]",
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
    if not args:
        _help()
        return 2
    sub, rest = args[0], args[1:]
    env_pane = ctx.env.get("HERDR_PANE_ID")
    caller = env_pane if env_pane is not None and env_pane.strip() else None
    if sub == "list":
        params: dict[str, Any] = {}
        index = 0
        while index < len(rest):
            if rest[index] != "--workspace":
                raise UsageError(f"unknown option: {rest[index]}")
            params["workspace_id"] = take_value(rest, index, "--workspace")
            index += 2
        return ctx.print_method("cli:pane:list", "pane.list", params)
    if sub in ("get", "close"):
        if len(rest) != 1:
            raise UsageError(f"usage: herdr pane {sub} <pane_id>")
        return ctx.print_method(f"cli:pane:{sub}", f"pane.{sub}", {"pane_id": rest[0]})
    if sub == "current":
        target = _current_caller(rest, caller)
        params = {} if target is None else {"caller_pane_id": target}
        return ctx.print_method("cli:pane:current", "pane.current", params)
    if sub in ("layout", "process-info", "edges"):
        method = sub.replace("-", "_")
        target = _optional_caller_target(rest, caller)
        params = {} if target is None else {"pane_id": target}
        return ctx.print_method(f"cli:pane:{method}", f"pane.{method}", params)
    if sub == "neighbor":
        return ctx.print_method("cli:pane:neighbor", "pane.neighbor", _neighbor_params(rest))
    if sub == "focus":
        try:
            params = _neighbor_params(rest)
        except UsageError:
            raise UsageError(_FOCUS_USAGE) from None
        return ctx.print_method("cli:pane:focus", "pane.focus_direction", params)
    if sub == "resize":
        return ctx.print_method("cli:pane:resize", "pane.resize", _resize_params(rest))
    if sub == "zoom":
        return ctx.print_method("cli:pane:zoom", "pane.zoom", _zoom_params(rest))
    if sub == "rename":
        if len(rest) < 2:
            raise UsageError("usage: herdr pane rename <pane_id> <label>|--clear")
        params = {"pane_id": rest[0]}
        if not (len(rest) == 2 and rest[1] == "--clear"):
            params["label"] = " ".join(rest[1:])
        return ctx.print_method("cli:pane:rename", "pane.rename", params)
    if sub == "read":
        return print_read_response(ctx.send("cli:pane:read", "pane.read", _read_params(rest)))
    if sub == "input":
        return ctx.print_method("cli:pane:input:set", "pane.input.set", _input_params(rest, caller))
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
        return ctx.print_method(
            "cli:pane:wait-output", "pane.wait_for_output", _wait_output_params(rest)
        )
    if sub == "report-agent":
        return ctx.send_ok("pane.report_agent", _report_agent_params(rest, session_only=False))
    if sub == "report-agent-session":
        return ctx.send_ok(
            "pane.report_agent_session", _report_agent_params(rest, session_only=True)
        )
    if sub == "release-agent":
        return ctx.send_ok("pane.release_agent", _release_params(rest))
    if sub == "report-metadata":
        return ctx.send_ok("pane.report_metadata", _metadata_params(rest))
    _help()
    return 0 if sub in HELP_WORDS else 2


# -- target selection --------------------------------------------------------------------


def _current_caller(args: list[str], caller: str | None) -> str | None:
    """``pane current``: the calling pane by default, ``--pane`` overrides."""
    target = caller
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--pane":
            target = take_value(args, index, arg)
            index += 2
        elif arg == "--current":
            target = caller
            index += 1
        else:
            raise UsageError(f"unknown option: {arg}")
    return target


def _optional_caller_target(args: list[str], caller: str | None) -> str | None:
    """``layout``/``process-info``/``edges``: ``--current`` is the calling pane."""
    target: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--pane":
            target = take_value(args, index, arg)
            index += 2
        elif arg == "--current":
            if caller is None:
                raise UsageError(_CURRENT_NEEDS_ENV)
            target = caller
            index += 1
        else:
            raise UsageError(f"unknown option: {arg}")
    return target


def _direction(value: str) -> str:
    if value not in _DIRECTIONS:
        raise UsageError(f"invalid pane direction: {value} (expected left, right, up, or down)")
    return value


def _neighbor_params(args: list[str]) -> dict[str, Any]:
    pane_id: str | None = None
    direction: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--pane":
            pane_id = take_value(args, index, arg)
            index += 2
        elif arg == "--current":
            pane_id = None
            index += 1
        elif arg == "--direction":
            direction = _direction(take_value(args, index, arg))
            index += 2
        else:
            raise UsageError(f"unknown option: {arg}")
    if direction is None:
        raise UsageError(_NEIGHBOR_USAGE)
    params: dict[str, Any] = {} if pane_id is None else {"pane_id": pane_id}
    params["direction"] = direction
    return params


def _finite_f32(value: str, what: str) -> float:
    number = parse_f32(value)
    if number is None or not math.isfinite(number):
        raise UsageError(f"invalid {what}: {value}")
    return number


def _resize_params(args: list[str]) -> dict[str, Any]:
    pane_id: str | None = None
    direction: str | None = None
    amount: float | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--pane":
            pane_id = take_value(args, index, arg)
            index += 2
        elif arg == "--current":
            pane_id = None
            index += 1
        elif arg == "--direction":
            direction = _direction(take_value(args, index, arg))
            index += 2
        elif arg == "--amount":
            amount = _finite_f32(take_value(args, index, arg), "amount")
            index += 2
        else:
            raise UsageError(f"unknown option: {arg}")
    if direction is None:
        raise UsageError(_RESIZE_USAGE)
    params: dict[str, Any] = {} if pane_id is None else {"pane_id": pane_id}
    params["direction"] = direction
    if amount is not None:
        params["amount"] = amount
    return params


def _zoom_params(args: list[str]) -> dict[str, Any]:
    pane_id: str | None = None
    mode = "toggle"
    mode_seen = False
    index = 0
    if args and not args[0].startswith("--"):
        pane_id = args[0]
        index = 1
    while index < len(args):
        arg = args[index]
        if arg == "--pane":
            pane_id = take_value(args, index, arg)
            index += 2
        elif arg == "--current":
            pane_id = None
            index += 1
        elif arg in ("--toggle", "--on", "--off"):
            if mode_seen:
                raise UsageError("provide only one of --toggle, --on, or --off")
            mode, mode_seen = arg[2:], True
            index += 1
        else:
            raise UsageError(f"unknown option: {arg}")
    params: dict[str, Any] = {} if pane_id is None else {"pane_id": pane_id}
    params["mode"] = mode
    return params


def _right_click(value: str) -> str:
    if value not in ("herdr", "pane"):
        raise UsageError(f"invalid right-click target: {value}")
    return value


def _input_params(args: list[str], caller: str | None) -> dict[str, Any]:
    args = expand_equals(args, ("--pane", "--right-click"))
    pane_id: str | None = None
    right_click: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("--pane", "--current"):
            if pane_id is not None:
                raise UsageError("provide only one pane selector")
            if arg == "--pane":
                pane_id = take_value(args, index, arg)
                index += 2
            else:
                if caller is None:
                    raise UsageError(_CURRENT_NEEDS_ENV)
                pane_id = caller
                index += 1
        elif arg == "--right-click":
            right_click = _right_click(take_value(args, index, arg))
            index += 2
        elif arg.startswith("-"):
            raise UsageError(f"unknown option: {arg}")
        else:
            if pane_id is not None:
                raise UsageError(f"unexpected argument: {arg}")
            pane_id = arg
            index += 1
    if pane_id is None or right_click is None:
        raise UsageError(_INPUT_USAGE)
    return {"pane_id": pane_id, "right_click": right_click}


def _split_params(args: list[str], caller: str | None) -> dict[str, Any]:
    args = expand_equals(args, ("--right-click",))
    pane_id: str | None = None
    direction: str | None = None
    ratio: float | None = None
    cwd: str | None = None
    focus = False
    right_click = "herdr"
    env: dict[str, str] = {}
    index = 0
    if args and not args[0].startswith("--"):
        pane_id = args[0]
        index = 1
    while index < len(args):
        arg = args[index]
        if arg == "--pane":
            pane_id = take_value(args, index, arg)
            index += 2
        elif arg == "--current":
            if caller is None:
                raise UsageError(_CURRENT_NEEDS_ENV)
            pane_id = caller
            index += 1
        elif arg == "--direction":
            value = take_value(args, index, arg)
            if value not in ("right", "down"):
                raise UsageError(f"invalid split direction: {value}")
            direction = value
            index += 2
        elif arg == "--ratio":
            ratio = _finite_f32(take_value(args, index, arg), "ratio")
            index += 2
        elif arg == "--cwd":
            cwd = take_value(args, index, arg)
            index += 2
        elif arg == "--right-click":
            right_click = _right_click(take_value(args, index, arg))
            index += 2
        elif arg in ("--focus", "--no-focus"):
            focus = arg == "--focus"
            index += 1
        elif arg == "--env":
            key, value = env_assignment(take_value(args, index, arg))
            env[key] = value
            index += 2
        else:
            raise UsageError(f"unknown option: {arg}")
    if direction is None:
        raise UsageError(_SPLIT_USAGE)
    if pane_id is None:
        # Herdr 0.9.1: inside a pane, an untargeted split splits the calling pane.
        pane_id = caller
    params: dict[str, Any] = {}
    if pane_id is not None:
        params["target_pane_id"] = pane_id
    params["direction"] = direction
    if ratio is not None:
        params["ratio"] = ratio
    if cwd is not None:
        params["cwd"] = cwd
    params["focus"] = focus
    params["right_click"] = right_click
    if env:
        params["env"] = env
    return params


def _swap_params(args: list[str]) -> dict[str, Any]:
    pane_id: str | None = None
    direction: str | None = None
    source: str | None = None
    target: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--pane":
            pane_id = take_value(args, index, arg)
            index += 2
        elif arg == "--current":
            pane_id = None
            index += 1
        elif arg == "--direction":
            direction = _direction(take_value(args, index, arg))
            index += 2
        elif arg == "--source-pane":
            source = take_value(args, index, arg)
            index += 2
        elif arg == "--target-pane":
            target = take_value(args, index, arg)
            index += 2
        else:
            raise UsageError(f"unknown option: {arg}")
    explicit = source is not None or target is not None
    if direction is not None and not explicit:
        params: dict[str, Any] = {} if pane_id is None else {"pane_id": pane_id}
        params["direction"] = direction
        return params
    if direction is None and pane_id is None and source is not None and target is not None:
        return {"source_pane_id": source, "target_pane_id": target}
    raise UsageError(_SWAP_USAGE)


def _move_params(args: list[str]) -> dict[str, Any]:
    if not args or args[0].startswith("-"):
        raise UsageError(_MOVE_USAGE)
    tab_id: str | None = None
    new_tab = new_workspace = False
    workspace_id: str | None = None
    target_pane: str | None = None
    split: str | None = None
    ratio: float | None = None
    label: str | None = None
    tab_label: str | None = None
    focus = True
    index = 1
    while index < len(args):
        arg = args[index]
        if arg in ("--new-tab", "--new-workspace", "--focus", "--no-focus"):
            if arg == "--new-tab":
                new_tab = True
            elif arg == "--new-workspace":
                new_workspace = True
            else:
                focus = arg == "--focus"
            index += 1
            continue
        if arg == "--tab":
            tab_id = take_value(args, index, arg)
        elif arg == "--workspace":
            workspace_id = take_value(args, index, arg)
        elif arg == "--target-pane":
            target_pane = take_value(args, index, arg)
        elif arg == "--split":
            value = take_value(args, index, arg)
            if value not in ("right", "down"):
                raise UsageError(f"invalid split direction: {value} (expected right or down)")
            split = value
        elif arg == "--ratio":
            ratio = _finite_f32(take_value(args, index, arg), "ratio")
        elif arg == "--label":
            label = take_value(args, index, arg)
        elif arg == "--tab-label":
            tab_label = take_value(args, index, arg)
        else:
            raise UsageError(f"unknown option: {arg}")
        index += 2
    if (tab_id is not None) + new_tab + new_workspace != 1:
        raise UsageError(_MOVE_USAGE)
    destination: dict[str, Any]
    if tab_id is not None:
        if split is None or workspace_id is not None or label is not None:
            raise UsageError(_MOVE_USAGE)
        if tab_label is not None:
            raise UsageError(_MOVE_USAGE)
        destination = {"type": "tab", "tab_id": tab_id}
        if target_pane is not None:
            destination["target_pane_id"] = target_pane
        destination["split"] = split
        if ratio is not None:
            destination["ratio"] = ratio
    elif new_tab:
        if split is not None or target_pane is not None or tab_label is not None:
            raise UsageError(_MOVE_USAGE)
        destination = {"type": "new_tab"}
        if workspace_id is not None:
            destination["workspace_id"] = workspace_id
        if label is not None:
            destination["label"] = label
    else:
        if split is not None or target_pane is not None or workspace_id is not None:
            raise UsageError(_MOVE_USAGE)
        destination = {"type": "new_workspace"}
        if label is not None:
            destination["label"] = label
        if tab_label is not None:
            destination["tab_label"] = tab_label
    return {"pane_id": args[0], "destination": destination, "focus": focus}


# -- reading -------------------------------------------------------------------------------


def _read_params(args: list[str]) -> dict[str, Any]:
    args = expand_equals(args, ("--source", "--lines", "--format"))
    pane_id: str | None = None
    source = "recent"
    lines: int | None = None
    fmt = "text"
    strip_ansi = True
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--source":
            value = take_value(args, index, arg)
            if value not in _READ_SOURCES:
                raise UsageError(f"invalid read source: {value}")
            source = _READ_SOURCES[value]
            index += 2
        elif arg == "--lines":
            value = take_value(args, index, arg)
            lines = parse_unsigned(value, 32)
            if lines is None:
                raise UsageError(invalid_value(arg, value))
            index += 2
        elif arg == "--format":
            value = take_value(args, index, arg)
            if value not in ("text", "ansi"):
                raise UsageError(f"invalid read format: {value}")
            fmt = value
            index += 2
        elif arg == "--ansi":
            fmt = "ansi"
            index += 1
        elif arg == "--raw":
            fmt, strip_ansi = "ansi", False
            index += 1
        elif arg.startswith("-"):
            raise UsageError(f"unknown option: {arg}")
        else:
            if pane_id is not None:
                raise UsageError(f"unexpected argument: {arg}")
            pane_id = arg
            index += 1
    if pane_id is None:
        raise UsageError(_READ_USAGE)
    params: dict[str, Any] = {"pane_id": pane_id, "source": source}
    if lines is not None:
        params["lines"] = lines
    params["format"] = fmt
    params["strip_ansi"] = strip_ansi
    return params


def _wait_output_params(args: list[str]) -> dict[str, Any]:
    args = expand_equals(args, ("--match", "--regex", "--source", "--lines", "--timeout"))
    pane_id: str | None = None
    source = "recent"
    lines: int | None = None
    timeout_ms: int | None = None
    strip_ansi = True
    matcher: dict[str, str] | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("--match", "--regex"):
            value = take_value(args, index, arg)
            if matcher is not None:
                raise UsageError("--match and --regex are mutually exclusive")
            matcher = {"type": "regex" if arg == "--regex" else "substring", "value": value}
            index += 2
        elif arg == "--source":
            value = take_value(args, index, arg)
            if value not in _READ_SOURCES:
                raise UsageError(f"invalid read source: {value}")
            source = _READ_SOURCES[value]
            index += 2
        elif arg in ("--lines", "--timeout"):
            value = take_value(args, index, arg)
            number = parse_unsigned(value, 32 if arg == "--lines" else 64)
            if number is None:
                raise UsageError(invalid_value(arg, value))
            if arg == "--lines":
                lines = number
            else:
                timeout_ms = number
            index += 2
        elif arg == "--raw":
            strip_ansi = False
            index += 1
        elif arg.startswith("-"):
            raise UsageError(f"unknown option: {arg}")
        else:
            if pane_id is not None:
                raise UsageError(f"unexpected argument: {arg}")
            pane_id = arg
            index += 1
    if pane_id is None:
        raise UsageError(_WAIT_OUTPUT_USAGE)
    if matcher is None:
        raise UsageError("missing required --match or --regex")
    params: dict[str, Any] = {"pane_id": pane_id, "source": source}
    if lines is not None:
        params["lines"] = lines
    params["match"] = matcher
    if timeout_ms is not None:
        params["timeout_ms"] = timeout_ms
    params["strip_ansi"] = strip_ansi
    return params


# -- agent reporting ------------------------------------------------------------------------


def _agent_state(value: str) -> str:
    if value not in _AGENT_STATES:
        raise fatal_other(
            f"invalid pane agent state: {value} (expected idle, working, blocked, or unknown)"
        )
    return value


def _required_source(source: str | None) -> str:
    trimmed = source.strip() if source is not None else ""
    if not trimmed:
        raise UsageError("missing required --source")
    return trimmed


def _report_agent_params(args: list[str], *, session_only: bool) -> dict[str, Any]:
    """``report-agent`` / ``report-agent-session`` with Herdr 0.9's parsing.

    Options may come before the pane id and as ``--option=value``; everything after a
    literal ``--`` is the agent's resume command, sent as ``resume_argv``.
    """
    usage = _REPORT_SESSION_USAGE if session_only else _REPORT_AGENT_USAGE
    resume: list[str] | None = None
    if "--" in args:
        split_at = args.index("--")
        args, resume = args[:split_at], args[split_at + 1 :]
        if not resume:
            raise UsageError("missing resume command after --")
    value_options = ["--source", "--agent", "--seq", "--agent-session-id", "--agent-session-path"]
    value_options += ["--session-start-source"] if session_only else ["--state", "--message"]
    args = expand_equals(args, tuple(value_options))
    values: dict[str, str] = {}
    pane_id: str | None = None
    seq: int | None = None
    state: str | None = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in value_options:
            value = take_value(args, index, arg)
            if arg == "--state":
                state = _agent_state(value)
            elif arg == "--seq":
                seq = u64_or_fatal(arg, value)
            else:
                values[arg] = value
            index += 2
        elif arg.startswith("-"):
            raise UsageError(f"unknown option: {arg}")
        elif pane_id is None:
            pane_id = arg
            index += 1
        else:
            raise UsageError(f"unexpected argument: {arg}")
    if pane_id is None:
        raise UsageError(usage)
    source = _required_source(values.get("--source"))
    agent = values.get("--agent")
    if agent is None:
        raise UsageError("missing required --agent")
    if not session_only and state is None:
        raise UsageError("missing required --state")
    params: dict[str, Any] = {"pane_id": pane_id, "source": source, "agent": agent}
    if state is not None:
        params["state"] = state
    if "--message" in values:
        params["message"] = values["--message"]
    if seq is not None:
        params["seq"] = seq
    for flag in ("--agent-session-id", "--agent-session-path", "--session-start-source"):
        if flag in values:
            params[flag[2:].replace("-", "_")] = values[flag]
    if resume is not None:
        params["resume_argv"] = resume
    return params


def _release_params(args: list[str]) -> dict[str, Any]:
    if not args:
        raise UsageError(_RELEASE_USAGE)
    source: str | None = None
    agent: str | None = None
    seq: int | None = None
    index = 1
    while index < len(args):
        arg = args[index]
        if arg == "--source":
            source = take_value(args, index, arg)
        elif arg == "--agent":
            agent = take_value(args, index, arg)
        elif arg == "--seq":
            seq = u64_or_fatal(arg, take_value(args, index, arg))
        else:
            raise UsageError(f"unknown option: {arg}")
        index += 2
    checked_source = _required_source(source)
    if agent is None:
        raise UsageError("missing required --agent")
    params: dict[str, Any] = {"pane_id": args[0], "source": checked_source, "agent": agent}
    if seq is not None:
        params["seq"] = seq
    return params


def _metadata_params(args: list[str]) -> dict[str, Any]:
    if not args:
        raise UsageError(_METADATA_USAGE)
    texts: dict[str, str] = {}
    state_labels: dict[str, str] = {}
    tokens: dict[str, str | None] = {}
    clears = {"--clear-title": False, "--clear-display-agent": False, "--clear-state-labels": False}
    numbers: dict[str, int] = {}
    index = 1
    while index < len(args):
        arg = args[index]
        if arg in clears:
            clears[arg] = True
            index += 1
            continue
        if arg in ("--source", "--agent", "--applies-to-source", "--title", "--display-agent"):
            texts[arg] = take_value(args, index, arg)
        elif arg == "--state-label":
            status, sep, label = take_value(args, index, arg).partition("=")
            if not sep:
                raise UsageError("expected --state-label STATUS=TEXT")
            status = status.strip().lower()
            if status not in _STATUSES:
                raise UsageError(f"unknown state label: {status}")
            state_labels[status] = label
        elif arg == "--token":
            key, value = token_assignment(take_value(args, index, arg))
            tokens[key] = value
        elif arg == "--clear-token":
            tokens[take_value(args, index, arg)] = None
        elif arg in ("--seq", "--ttl-ms"):
            numbers[arg] = u64_or_fatal(arg, take_value(args, index, arg))
        else:
            raise UsageError(f"unknown option: {arg}")
        index += 2
    source = _required_source(texts.get("--source"))
    applies_to = texts.get("--applies-to-source")
    if applies_to is not None and not applies_to.strip():
        raise UsageError("missing value for --applies-to-source")
    title, display = texts.get("--title"), texts.get("--display-agent")
    if (
        (title is not None and clears["--clear-title"])
        or (display is not None and clears["--clear-display-agent"])
        or (state_labels and clears["--clear-state-labels"])
    ):
        raise UsageError("cannot set and clear the same metadata field")
    nothing_set = title is None and display is None and not state_labels and not tokens
    if nothing_set and not any(clears.values()):
        raise UsageError("missing metadata field to set or clear")
    params: dict[str, Any] = {"pane_id": args[0], "source": source}
    for flag, key in (
        ("--agent", "agent"),
        ("--applies-to-source", "applies_to_source"),
        ("--title", "title"),
        ("--display-agent", "display_agent"),
    ):
        if flag in texts:
            params[key] = texts[flag]
    if state_labels:
        params["state_labels"] = state_labels
    if tokens:
        params["tokens"] = tokens
    params["clear_title"] = clears["--clear-title"]
    params["clear_display_agent"] = clears["--clear-display-agent"]
    params["clear_state_labels"] = clears["--clear-state-labels"]
    if "--seq" in numbers:
        params["seq"] = numbers["--seq"]
    if "--ttl-ms" in numbers:
        params["ttl_ms"] = numbers["--ttl-ms"]
    return params
