"""`herdr tab ...`: tab.* socket methods, with Herdr's argument rules."""

from __future__ import annotations

from typing import Any

from ..client import Context
from ..errors import UsageError
from ._common import HELP_WORDS, env_assignment, print_lines, take_value

__all__ = ["run"]


def _help() -> None:
    print_lines(
        "herdr tab commands:",
        "  herdr tab list [--workspace <workspace_id>]",
        "  herdr tab create [--workspace <workspace_id>] [--cwd PATH] [--label TEXT] "
        "[--env KEY=VALUE] [--focus] [--no-focus]",
        "  herdr tab get <tab_id>",
        "  herdr tab focus <tab_id>",
        "  herdr tab rename <tab_id> <label>",
        "  herdr tab close <tab_id>",
    )


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr tab <subcommand>``."""
    if not args:
        _help()
        return 2
    sub, rest = args[0], args[1:]
    if sub == "list":
        params: dict[str, Any] = {}
        index = 0
        while index < len(rest):
            if rest[index] != "--workspace":
                raise UsageError(f"unknown option: {rest[index]}")
            params["workspace_id"] = take_value(rest, index, "--workspace")
            index += 2
        return ctx.print_method("cli:tab:list", "tab.list", params)
    if sub == "create":
        return ctx.print_method("cli:tab:create", "tab.create", _create_params(rest))
    if sub in ("get", "focus", "close"):
        if len(rest) != 1:
            raise UsageError(f"usage: herdr tab {sub} <tab_id>")
        return ctx.print_method(f"cli:tab:{sub}", f"tab.{sub}", {"tab_id": rest[0]})
    if sub == "rename":
        if len(rest) < 2:
            raise UsageError("usage: herdr tab rename <tab_id> <label>")
        params = {"tab_id": rest[0], "label": " ".join(rest[1:])}
        return ctx.print_method("cli:tab:rename", "tab.rename", params)
    _help()
    return 0 if sub in HELP_WORDS else 2


def _create_params(args: list[str]) -> dict[str, Any]:
    workspace_id: str | None = None
    cwd: str | None = None
    label: str | None = None
    focus = False
    env: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--workspace":
            workspace_id = take_value(args, index, arg)
            index += 2
        elif arg == "--cwd":
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
    if workspace_id is not None:
        params["workspace_id"] = workspace_id
    if cwd is not None:
        params["cwd"] = cwd
    params["focus"] = focus
    if label is not None:
        params["label"] = label
    if env:
        params["env"] = env
    return params
