"""`herdr workspace ...`: workspace.* socket methods, with Herdr's argument rules."""

from __future__ import annotations

from ..client import Context
from ..errors import UsageError
from ..options import U64_FATAL, Flag, Lead, Positional, Spec, Value
from ._common import (
    CREATE_OPTIONS,
    TOKEN_OPTIONS,
    subcommand,
    unknown_subcommand,
)

__all__ = ["run"]

_REPORT_METADATA_USAGE = (
    "usage: herdr workspace report-metadata <workspace_id> --source ID "
    "[--token NAME=VALUE] [--clear-token NAME] [--seq N] [--ttl-ms N]"
)
_CLOSE_USAGE = "usage: herdr workspace close <workspace_id> [--group]"


def _nonblank(source: str) -> str | None:
    """``--source`` must not be blank; unlike ``pane``'s, it is sent untrimmed."""
    return source if source.strip() else None


_CREATE = Spec(*CREATE_OPTIONS, defaults={"focus": False})
_REPORT_METADATA = Spec(
    Lead("workspace_id"),
    Value("--source", convert=_nonblank, required=True),
    *TOKEN_OPTIONS,
    Value("--seq", convert=U64_FATAL),
    Value("--ttl-ms", convert=U64_FATAL),
    usage=_REPORT_METADATA_USAGE,
)
#: ``close <id> [--group]``: ``--group`` (Herdr 0.9) also closes the worktree group.
_CLOSE = Spec(
    Positional("workspace_id", required=True),
    Flag("--group", close_group=True),
    usage=_CLOSE_USAGE,
    errors_are_usage=True,
)


_HELP = (
    "herdr workspace commands:",
    "  herdr workspace list",
    "  herdr workspace create [--cwd PATH] [--label TEXT] [--env KEY=VALUE] [--focus] [--no-focus]",
    "  herdr workspace get <workspace_id>",
    "  herdr workspace focus <workspace_id>",
    "  herdr workspace rename <workspace_id> <label>",
    "  " + _REPORT_METADATA_USAGE.removeprefix("usage: "),
    "  herdr workspace close <workspace_id> [--group]",
)


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr workspace <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    if sub == "list":
        if rest:
            raise UsageError("usage: herdr workspace list")
        return ctx.print_method("cli:workspace:list", "workspace.list", {})
    if sub == "create":
        return ctx.print_method("cli:workspace:create", "workspace.create", _CREATE.request(rest))
    if sub in ("get", "focus"):
        if len(rest) != 1:
            raise UsageError(f"usage: herdr workspace {sub} <workspace_id>")
        return ctx.print_method(
            f"cli:workspace:{sub}", f"workspace.{sub}", {"workspace_id": rest[0]}
        )
    if sub == "rename":
        if len(rest) < 2:
            raise UsageError("usage: herdr workspace rename <workspace_id> <label>")
        params = {"workspace_id": rest[0], "label": " ".join(rest[1:])}
        return ctx.print_method("cli:workspace:rename", "workspace.rename", params)
    if sub == "report-metadata":
        values = _REPORT_METADATA.parse(rest)
        if not values["tokens"]:
            raise UsageError("missing token to set or clear")
        return ctx.send_ok("workspace.report_metadata", _REPORT_METADATA.params(values))
    if sub == "close":
        return ctx.print_method("cli:workspace:close", "workspace.close", _CLOSE.request(rest))
    return unknown_subcommand(sub, _HELP)
