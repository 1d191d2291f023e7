"""Running the ``herdr`` CLI against a test's server (the ``herdr_cli`` fixture).

Herdr's CLI prints JSON on stdout for reads, nothing for quiet commands, and one JSON error
line on stderr with exit 1 for server errors (exit 2 for usage errors): a result object keeps
all of that, parsed, so a test asserts on ``result.json`` or ``result.error["error"]["code"]``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CliResult:
    """What one ``herdr`` run did."""

    argv: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    @cached_property
    def json(self) -> Any:
        """stdout parsed as JSON (ValueError if it is not JSON)."""
        return json.loads(self.stdout)

    @cached_property
    def error(self) -> Any:
        """The error envelope Herdr prints on stderr, parsed (``{"id":…,"error":{…}}``).

        Strict: Herdr prints exactly one JSON line there, so anything else is a ValueError.
        """
        return json.loads(self.stderr)

    @property
    def ok(self) -> bool:
        """Exit code 0."""
        return self.code == 0


class HerdrCli:
    """``herdr_cli(*argv)``: run a ``herdr`` executable with a server's environment."""

    def __init__(self, cli_path: Path, env: Mapping[str, str], timeout: float = 60.0) -> None:
        self.cli_path = cli_path
        self.env = dict(env)
        self.timeout = timeout

    def __call__(
        self, *argv: str, env: Mapping[str, str] | None = None, timeout: float | None = None
    ) -> CliResult:
        """Run ``herdr ARGV…``; ``env`` adds to (or overrides) the server's environment."""
        full_env = dict(self.env)
        full_env.update(env or {})
        proc = subprocess.run(
            [str(self.cli_path), *argv],
            env=full_env,
            capture_output=True,
            text=True,
            timeout=self.timeout if timeout is None else timeout,
            check=False,
        )
        return CliResult(tuple(argv), proc.returncode, proc.stdout, proc.stderr)
