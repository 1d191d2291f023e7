"""`herdr workspace ...`: workspace.* socket methods, with Herdr's argument rules."""

from __future__ import annotations

from typing import Any

from ..client import Context
from ..errors import UsageError
from ..flags import u64_or_fatal
from ._common import HELP_WORDS, env_assignment, print_lines, take_value, token_assignment

__all__ = ["run"]

_REPORT_METADATA_USAGE = (
    "usage: herdr workspace report-metadata <workspace_id> --source ID "
    "[--token NAME=VALUE] [--clear-token NAME] [--seq N] [--ttl-ms N]"
)
_CLOSE_USAGE = "usage: herdr workspace close <workspace_id> [--group]"


def _help() -> None:
    print_lines(
        "herdr workspace commands:",
        "  herdr workspace list",
        "  herdr workspace create [--cwd PATH] [--label TEXT] [--env KEY=VALUE] [--focus] "
        "[--no-focus]",
        "  herdr workspace get <workspace_id>",
        "  herdr workspace focus <workspace_id>",
        "  herdr workspace rename <workspace_id> <label>",
        "  " + _REPORT_METADATA_USAGE.removeprefix("usage: "),
        "  herdr workspace close <workspace_id> [--group]",
    )


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr workspace <subcommand>``."""
    if not args:
        _help()
        return 2
    sub, rest = args[0], args[1:]
    if sub == "list":
        if rest:
            raise UsageError("usage: herdr workspace list")
        return ctx.print_method("cli:workspace:list", "workspace.list", {})
    if sub == "create":
        return ctx.print_method("cli:workspace:create", "workspace.create", _create_params(rest))
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
        return ctx.send_ok("workspace.report_metadata", _report_metadata_params(rest))
    if sub == "close":
        return ctx.print_method("cli:workspace:close", "workspace.close", _close_params(rest))
    _help()
    return 0 if sub in HELP_WORDS else 2


def _create_params(args: list[str]) -> dict[str, Any]:
    cwd: str | None = None
    label: str | None = None
    focus = False
    env: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--cwd":
            cwd = take_value(args, index, arg)
            index += 2
        elif arg == "--label":
            label = take_value(args, index, arg)
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
    params: dict[str, Any] = {}
    if cwd is not None:
        params["cwd"] = cwd
    params["focus"] = focus
    if label is not None:
        params["label"] = label
    if env:
        params["env"] = env
    return params


def _report_metadata_params(args: list[str]) -> dict[str, Any]:
    if not args:
        raise UsageError(_REPORT_METADATA_USAGE)
    source: str | None = None
    tokens: dict[str, str | None] = {}
    seq: int | None = None
    ttl_ms: int | None = None
    index = 1
    while index < len(args):
        arg = args[index]
        if arg == "--source":
            source = take_value(args, index, arg)
        elif arg == "--token":
            key, value = token_assignment(take_value(args, index, arg))
            tokens[key] = value
        elif arg == "--clear-token":
            tokens[take_value(args, index, arg)] = None
        elif arg == "--seq":
            seq = u64_or_fatal(arg, take_value(args, index, arg))
        elif arg == "--ttl-ms":
            ttl_ms = u64_or_fatal(arg, take_value(args, index, arg))
        else:
            raise UsageError(f"unknown option: {arg}")
        index += 2
    if source is None or not source.strip():
        raise UsageError("missing required --source")
    if not tokens:
        raise UsageError("missing token to set or clear")
    params: dict[str, Any] = {"workspace_id": args[0], "source": source, "tokens": tokens}
    if seq is not None:
        params["seq"] = seq
    if ttl_ms is not None:
        params["ttl_ms"] = ttl_ms
    return params


def _close_params(args: list[str]) -> dict[str, Any]:
    """``close <id> [--group]``: ``--group`` (Herdr 0.9) also closes the worktree group."""
    workspace_id: str | None = None
    group = False
    for arg in args:
        if arg == "--group":
            group = True
        elif arg.startswith("-") or workspace_id is not None:
            raise UsageError(_CLOSE_USAGE)
        else:
            workspace_id = arg
    if workspace_id is None:
        raise UsageError(_CLOSE_USAGE)
    params: dict[str, Any] = {"workspace_id": workspace_id}
    if group:
        params["close_group"] = True
    return params
