"""Helpers shared by the command groups: option values, ``KEY=VALUE`` pairs, help text."""

from __future__ import annotations

from ..errors import UsageError
from ..output import write_err

__all__ = [
    "HELP_WORDS",
    "env_assignment",
    "print_lines",
    "take_value",
    "token_assignment",
]

#: Words every group accepts as "show my command list" (exit 0).
HELP_WORDS = ("help", "--help", "-h")


def take_value(args: list[str], index: int, flag: str) -> str:
    """The value after ``flag`` at ``args[index]``, or Herdr's ``missing value`` usage error."""
    if index + 1 >= len(args):
        raise UsageError(f"missing value for {flag}")
    return args[index + 1]


def env_assignment(raw: str) -> tuple[str, str]:
    """Parse ``--env KEY=VALUE`` with Herdr's checks (the value may be empty)."""
    key, sep, value = raw.partition("=")
    if not sep:
        raise UsageError("env must use KEY=VALUE")
    if not key:
        raise UsageError("env key must not be empty")
    if "\0" in key or "\0" in value:
        raise UsageError("env must not contain NUL bytes")
    return key, value


def token_assignment(raw: str) -> tuple[str, str]:
    """Parse ``--token NAME=VALUE`` with Herdr's checks."""
    key, sep, value = raw.partition("=")
    if not sep:
        raise UsageError("token must use NAME=VALUE")
    if not key:
        raise UsageError("token name must not be empty")
    return key, value


def print_lines(*lines: str) -> None:
    """Print a group's command list to stderr, where Herdr prints it."""
    for line in lines:
        write_err(line)
