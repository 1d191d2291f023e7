"""``herdr config ...``: ``check`` validates the config file as Herdr does; ``reset-keys``
rewrites the user's file, which the simulator does not do."""

from __future__ import annotations

from ..client import Context
from ..output import write_out
from ._common import print_lines, subcommand, unknown_subcommand
from .unsupported import unsupported

__all__ = ["run"]

#: Herdr's ``print_config_help`` (src/cli.rs)
_HELP = (
    "herdr config commands:",
    "  herdr config check  validate config.toml and print diagnostics",
    "  herdr config reset-keys  back up config.toml and remove custom keybindings",
)
_CHECK_USAGE = "usage: herdr config check"


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr config <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    if sub == "check":
        return _check(ctx, rest)
    if sub == "reset-keys":
        return unsupported("config reset-keys", "it rewrites your Herdr config.toml")
    return unknown_subcommand(sub, _HELP)


def _check(ctx: Context, rest: list[str]) -> int:
    """Herdr's ``config_check``: ``config: ok``, or ``config: issues found`` and each
    diagnostic, exit 1."""
    if rest:
        print_lines(_CHECK_USAGE)
        return 0 if len(rest) == 1 and rest[0] in ("help", "--help", "-h") else 2
    from ..config_check import check

    diagnostics = check(ctx.env)
    if not diagnostics:
        write_out("config: ok\n")
        return 0
    write_out("config: issues found\n" + "".join(f"{line}\n" for line in diagnostics))
    return 1
