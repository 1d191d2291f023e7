"""`herdr terminal ...`: the outer-terminal title commands; raw terminal streams are not
available in the simulator."""

from __future__ import annotations

from ..client import Context
from ..errors import UsageError
from ._common import subcommand, unknown_subcommand
from .unsupported import unsupported

__all__ = ["run"]

_TITLE_USAGE = ("usage: herdr terminal title set <title>", "       herdr terminal title clear")


_SESSION_USAGE = (
    "usage: herdr terminal session control <target> [--takeover] [--cols N] [--rows N]",
    "usage: herdr terminal session observe <target> [--cols N] [--rows N]",
)

_HELP = (
    "herdr terminal commands:",
    "  herdr terminal attach <terminal_id> [--takeover]",
    "  herdr terminal session control <target> [--takeover] [--cols N] [--rows N]",
    "  herdr terminal session observe <target> [--cols N] [--rows N]",
    "  herdr terminal title set <title>",
    "  herdr terminal title clear",
    "  detach from direct attach with ctrl+b q; send literal ctrl+b with ctrl+b ctrl+b",
)


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr terminal <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    if sub == "title":
        action = rest[0] if rest else None
        if action == "set":
            if len(rest) != 2:
                raise UsageError(_TITLE_USAGE[0])
            params = {"title": rest[1]}
            return ctx.print_method("cli:terminal:title:set", "client.window_title.set", params)
        if action == "clear":
            if len(rest) != 1:
                raise UsageError("usage: herdr terminal title clear")
            return ctx.print_method("cli:terminal:title:clear", "client.window_title.clear", {})
        return unknown_subcommand(action, _TITLE_USAGE)
    if sub == "session" and (not rest or rest[0] not in ("control", "observe")):
        # Herdr's `terminal_session` (src/cli.rs): both usages; help is exit 0, else 2
        return unknown_subcommand(rest[0] if rest else None, _SESSION_USAGE)
    if sub in ("attach", "session"):
        return unsupported(f"terminal {sub}", "it streams a terminal to an attached client")
    return unknown_subcommand(sub, _HELP)
