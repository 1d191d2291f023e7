"""`herdr api ...`: the live session snapshot and the bundled API schema.

Real Herdr bundles its JSON schema in the binary; the simulator's equivalent is the schema
it builds for itself (:func:`herdr_sim.schema.build_schema`), printed in the same layout
(two-space indentation, sorted keys, trailing newline).
"""

from __future__ import annotations

import sys

from ..client import Context
from ..errors import FatalError, UsageError
from ..output import rust_os_error, write_out
from ._common import HELP_WORDS, print_lines, subcommand, unknown_subcommand

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["run", "schema_text"]

_SCHEMA_USAGE = "usage: herdr api schema [--json | --output PATH]"


_HELP = (
    "herdr api commands:",
    "  herdr api snapshot",
    "  herdr api schema [--json | --output PATH]",
)


def run(ctx: Context, args: list[str]) -> int:
    """Dispatch ``herdr api <subcommand>``."""
    sub, rest = subcommand(args, _HELP)
    if sub == "snapshot":
        if rest:
            raise UsageError("usage: herdr api snapshot")
        return ctx.print_method("cli:api:snapshot", "session.snapshot", {})
    if sub == "schema":
        return _schema(rest)
    return unknown_subcommand(sub, _HELP)


def _load_schema() -> dict[str, Any]:
    if sys.flags.no_site:
        # The installed `herdr` script runs Python with -S for a fast start; the schema
        # builder may need third-party packages, so enable site-packages only now.
        import site

        site.main()
    from herdr_sim.schema import build_schema

    return build_schema()


def schema_text() -> str:
    """The full schema document as ``herdr api schema --json`` prints it."""
    import json

    return json.dumps(_load_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _summary() -> str:
    schema = _load_schema()
    names = ", ".join(sorted(schema.get("schemas", {})))
    return (
        "Herdr API schema\n"
        f"protocol: {schema.get('protocol')}\n"
        f"schema_version: {schema.get('schema_version')}\n"
        f"schemas: {names}\n"
        "\n"
        "Use `herdr api schema --json` to print the full schema.\n"
        "Use `herdr api schema --output PATH` to write it to a file.\n"
    )


def _schema(args: list[str]) -> int:
    if not args:
        write_out(_summary())
    elif args == ["--json"]:
        write_out(schema_text())
    elif len(args) == 2 and args[0] == "--output":
        from pathlib import Path

        try:
            Path(args[1]).write_text(schema_text(), encoding="utf-8")
        except OSError as err:
            raise FatalError(rust_os_error(err), str(err)) from None
        write_out(f"wrote API schema to {args[1]}\n")
    elif args == ["--output"]:
        raise UsageError("missing value for --output")
    elif len(args) == 1 and args[0] in HELP_WORDS:
        print_lines(_SCHEMA_USAGE)
    elif len(args) == 1 and args[0].startswith("-"):
        raise UsageError(f"unknown option: {args[0]}")
    else:
        raise UsageError(_SCHEMA_USAGE)
    return 0
