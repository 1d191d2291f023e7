"""`herdr tab ...`: tab.* socket methods, with Herdr's argument rules."""

from __future__ import annotations

from ..client import Context
from ..errors import UsageError
from ..options import Spec, Value
from ._common import CREATE_OPTIONS, WORKSPACE_FILTER, subcommand, unknown_subcommand

__all__ = ["run"]

_CREATE = Spec(Value("--workspace", "workspace_id"), *CREATE_OPTIONS, defaults={"focus": False})


_HELP = (
    "herdr tab commands:",
    "  herdr tab list [--workspace <workspace_id>]",
    (
        "  herdr tab create [--workspace <workspace_id>] [--cwd PATH] [--label TEXT] "
        "[--env KEY=VALUE] [--focus] [--no-focus]"
    ),
    "  herdr tab get <tab_id>",
    "  herdr tab focus <tab_id>",
    "  herdr tab rename <tab_id> <label>",
    "  herdr tab close <tab_id>",
)


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr tab <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    if sub == "list":
        return ctx.print_method("cli:tab:list", "tab.list", WORKSPACE_FILTER.request(rest))
    if sub == "create":
        return ctx.print_method("cli:tab:create", "tab.create", _CREATE.request(rest))
    if sub in ("get", "focus", "close"):
        if len(rest) != 1:
            raise UsageError(f"usage: herdr tab {sub} <tab_id>")
        return ctx.print_method(f"cli:tab:{sub}", f"tab.{sub}", {"tab_id": rest[0]})
    if sub == "rename":
        if len(rest) < 2:
            raise UsageError("usage: herdr tab rename <tab_id> <label>")
        params = {"tab_id": rest[0], "label": " ".join(rest[1:])}
        return ctx.print_method("cli:tab:rename", "tab.rename", params)
    return unknown_subcommand(sub, _HELP)
