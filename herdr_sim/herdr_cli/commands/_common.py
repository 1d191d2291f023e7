"""Helpers shared by the command groups: option specs, ``KEY=VALUE`` pairs, help text."""

from __future__ import annotations

from orchestrator.client.protocol import AGENT_STATUSES, CLI_READ_SOURCES

from ..errors import UsageError
from ..options import HELP_WORDS, Pairs, Spec, Value, switch
from ..output import CliExit, write_err

__all__ = [
    "CREATE_OPTIONS",
    "HELP_WORDS",
    "READ_SOURCES",
    "STATUSES",
    "TOKEN_OPTIONS",
    "WORKSPACE_FILTER",
    "env_assignment",
    "print_lines",
    "subcommand",
    "token_assignment",
    "unknown_subcommand",
]


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


def _cleared_token(name: str) -> tuple[str, None]:
    return name, None


#: Agent statuses (``agent wait --until``, ``pane report-metadata --state-label``).
STATUSES = AGENT_STATUSES
#: ``--source`` of ``pane read``/``agent read``/``pane wait-output`` -> the wire value.
READ_SOURCES = CLI_READ_SOURCES
#: ``workspace create`` / ``tab create`` (after ``--workspace``), in request-field order.
CREATE_OPTIONS = (
    Value("--cwd"),
    *switch("--focus", "--no-focus"),
    Value("--label"),
    Pairs("--env", convert=env_assignment),
)
#: ``--token NAME=VALUE`` and ``--clear-token NAME`` fill one ``tokens`` map, in order.
TOKEN_OPTIONS = (
    Pairs("--token", "tokens", token_assignment),
    Pairs("--clear-token", "tokens", _cleared_token),
)
#: ``pane list`` / ``tab list``: ``[--workspace ID]``.
WORKSPACE_FILTER = Spec(Value("--workspace", "workspace_id"))


def print_lines(*lines: str) -> None:
    """Print a group's command list to stderr, where Herdr prints it."""
    for line in lines:
        write_err(line)


def subcommand(args: list[str], commands: tuple[str, ...]) -> tuple[str, list[str]]:
    """``(subcommand, its arguments)``; without one, print the group's ``commands``, exit 2."""
    if not args:
        print_lines(*commands)
        raise CliExit(2)
    return args[0], args[1:]


def unknown_subcommand(sub: str | None, commands: tuple[str, ...]) -> int:
    """Print the group's ``commands``: exit 0 when ``sub`` asked for help, else 2."""
    print_lines(*commands)
    return 0 if sub in HELP_WORDS else 2
