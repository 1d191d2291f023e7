"""`herdr worktree ...`: worktree.* socket methods, by the rules of ``src/cli/worktree.rs``.

Output is always the JSON response (``--json`` is accepted and ignored, as in Herdr). Path
arguments are made absolute on the client side: ``~``/``~/…`` with this process's HOME, a
relative path joined to the current directory. ``--workspace`` and ``--cwd`` together are a
usage error, as are ``open`` without exactly one of ``--path``/``--branch`` and ``remove``
without ``--workspace``.
"""

from __future__ import annotations

import os

from ..client import Context
from ..errors import UsageError
from ..options import Flag, Spec, Value, pick, switch
from ._common import subcommand, unknown_subcommand

__all__ = ["run"]

_LIST_USAGE = "usage: herdr worktree list [--workspace ID | --cwd PATH]"
_CREATE_USAGE = (
    "usage: herdr worktree create [--workspace ID | --cwd PATH] [--branch NAME] [--base REF] "
    "[--path PATH] [--label TEXT] [--focus] [--no-focus]"
)
_OPEN_USAGE = (
    "usage: herdr worktree open [--workspace ID | --cwd PATH] (--path PATH | --branch NAME) "
    "[--label TEXT] [--focus] [--no-focus]"
)
_REMOVE_USAGE = "usage: herdr worktree remove --workspace ID [--force]"

_HELP = (
    "herdr worktree commands:",
    "  " + _LIST_USAGE.removeprefix("usage: "),
    "  " + _CREATE_USAGE.removeprefix("usage: "),
    "  " + _OPEN_USAGE.removeprefix("usage: "),
    "  " + _REMOVE_USAGE.removeprefix("usage: "),
)


def _joined(base: str, rest: str) -> str:
    """``Path::join`` of a relative ``rest`` (no pathlib: it costs the CLI milliseconds)."""
    return f"{base.rstrip('/')}/{rest}"


def _absolute(value: str) -> str:
    """Herdr's ``normalize_path_arg``: expand ``~``, join a relative path to the cwd."""
    home = os.environ.get("HOME")
    if home and value == "~":
        value = home
    elif home and value.startswith("~/"):
        value = _joined(home, value[2:])
    return value if value.startswith("/") else _joined(os.getcwd(), value)  # noqa: PTH109


#: ``--json`` is a hidden no-op: it sets a destination no request carries.
_JSON = Flag("--json", json_noop=True)
_WORKSPACE = Value("--workspace", "workspace_id")
_CWD = Value("--cwd", convert=_absolute)
_FOCUS = switch("--focus", "--no-focus")

_LIST = Spec(_WORKSPACE, _CWD, _JSON)
_CREATE = Spec(
    _WORKSPACE,
    _CWD,
    Value("--branch"),
    Value("--base"),
    Value("--path", convert=_absolute),
    Value("--label"),
    *_FOCUS,
    _JSON,
    defaults={"focus": False},
)
_OPEN = Spec(
    _WORKSPACE,
    _CWD,
    Value("--path", convert=_absolute),
    Value("--branch"),
    Value("--label"),
    *_FOCUS,
    _JSON,
    defaults={"focus": False},
)
_REMOVE = Spec(_WORKSPACE, Flag("--force"), _JSON, defaults={"force": False})


def _params(spec: Spec, args: list[str], usage: str) -> dict[str, object]:
    """Parse ``args``; the request fields in Herdr's order (``--json`` dropped)."""
    values = spec.parse(args)
    if values.get("workspace_id") is not None and values.get("cwd") is not None:
        raise UsageError(usage)
    return pick(values, *(dest for dest in spec.dests if dest != "json_noop"))


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr worktree <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    if sub == "list":
        params = _params(_LIST, rest, _LIST_USAGE)
        return ctx.print_method("cli:worktree:list", "worktree.list", params)
    if sub == "create":
        params = _params(_CREATE, rest, _CREATE_USAGE)
        return ctx.print_method("cli:worktree:create", "worktree.create", params)
    if sub == "open":
        params = _params(_OPEN, rest, _OPEN_USAGE)
        if ("path" in params) == ("branch" in params):
            raise UsageError(_OPEN_USAGE)
        return ctx.print_method("cli:worktree:open", "worktree.open", params)
    if sub == "remove":
        params = _params(_REMOVE, rest, _REMOVE_USAGE)
        if "workspace_id" not in params:
            raise UsageError(_REMOVE_USAGE)
        return ctx.print_method("cli:worktree:remove", "worktree.remove", params)
    return unknown_subcommand(sub, _HELP)
