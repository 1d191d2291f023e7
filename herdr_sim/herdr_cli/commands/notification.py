"""`herdr notification show`: ask the server to pop up a notification."""

from __future__ import annotations

from ..client import Context
from ..errors import UsageError
from ..options import Lead, Spec, Value, choice
from ._common import HELP_WORDS, subcommand, unknown_subcommand

__all__ = ["run"]

_SHOW_USAGE = (
    "usage: herdr notification show <title> [--body TEXT] "
    "[--position top-left|top-right|bottom-left|bottom-right] [--sound none|done|request]"
)
_SHOW = Spec(
    Lead("title"),
    Value("--body"),
    Value(
        "--position",
        convert=choice(
            ("top-left", "top-right", "bottom-left", "bottom-right"),
            "invalid position: {value} "
            "(expected top-left, top-right, bottom-left, or bottom-right)",
        ),
    ),
    # `none` is the default, which Herdr's serializer leaves out.
    Value(
        "--sound",
        convert=choice(
            {"none": None, "done": "done", "request": "request"},
            "invalid sound: {value} (expected none, done, or request)",
        ),
    ),
    usage=_SHOW_USAGE,
)


_HELP = ("herdr notification commands:", "  " + _SHOW_USAGE.removeprefix("usage: "))


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr notification <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    if sub != "show":
        return unknown_subcommand(sub, _HELP)
    if not rest or rest[0] in HELP_WORDS:
        raise UsageError(_SHOW_USAGE)
    return ctx.print_method("cli:notification:show", "notification.show", _SHOW.request(rest))
