"""`herdr notification show`: ask the server to pop up a notification."""

from __future__ import annotations

from typing import Any

from ..client import Context
from ..errors import UsageError
from ._common import HELP_WORDS, print_lines, take_value

__all__ = ["run"]

_SHOW_USAGE = (
    "usage: herdr notification show <title> [--body TEXT] "
    "[--position top-left|top-right|bottom-left|bottom-right] [--sound none|done|request]"
)
_POSITIONS = ("top-left", "top-right", "bottom-left", "bottom-right")
_SOUNDS = ("none", "done", "request")


def _help() -> None:
    print_lines("herdr notification commands:", "  " + _SHOW_USAGE.removeprefix("usage: "))


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr notification <subcommand>``."""
    if not args:
        _help()
        return 2
    if args[0] != "show":
        _help()
        return 0 if args[0] in HELP_WORDS else 2
    return ctx.print_method("cli:notification:show", "notification.show", _show_params(args[1:]))


def _show_params(args: list[str]) -> dict[str, Any]:
    if not args or args[0] in HELP_WORDS:
        raise UsageError(_SHOW_USAGE)
    body: str | None = None
    position: str | None = None
    sound = "none"
    index = 1
    while index < len(args):
        arg = args[index]
        if arg == "--body":
            body = take_value(args, index, arg)
        elif arg == "--position":
            value = take_value(args, index, arg)
            if value not in _POSITIONS:
                raise UsageError(
                    f"invalid position: {value} "
                    "(expected top-left, top-right, bottom-left, or bottom-right)"
                )
            position = value
        elif arg == "--sound":
            value = take_value(args, index, arg)
            if value not in _SOUNDS:
                raise UsageError(f"invalid sound: {value} (expected none, done, or request)")
            sound = value
        else:
            raise UsageError(f"unknown option: {arg}")
        index += 2
    params: dict[str, Any] = {"title": args[0]}
    if body is not None:
        params["body"] = body
    if position is not None:
        params["position"] = position
    if sound != "none":
        params["sound"] = sound
    return params
