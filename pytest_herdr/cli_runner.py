"""Running the ``herdr`` CLI against a test's server (the ``herdr_cli`` fixture).

Herdr's CLI prints JSON on stdout for reads, nothing for quiet commands, and one JSON error
line on stderr with exit 1 for server errors (exit 2 for usage errors): a result object keeps
all of that, parsed, so a test asserts on ``result.json`` or ``result.error["error"]["code"]``.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .backends import HerdrServer


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
        """The error envelope Herdr prints on stderr, parsed (``{"id":…,"error":{…}}``)."""
        return json.loads(self.stderr.strip().splitlines()[-1])

    @property
    def ok(self) -> bool:
        """Exit code 0."""
        return self.code == 0


class HerdrCli:
    """``herdr_cli(*argv)``: run the server's ``herdr`` with its environment."""

    def __init__(self, server: HerdrServer, timeout: float = 60.0) -> None:
        self.server = server
        self.timeout = timeout

    def __call__(
        self, *argv: str, env: dict[str, str] | None = None, timeout: float | None = None
    ) -> CliResult:
        """Run ``herdr ARGV…``; ``env`` adds to (or overrides) the server's environment."""
        full_env = dict(self.server.env)
        full_env.update(env or {})
        proc = subprocess.run(
            [str(self.server.cli_path), *argv],
            env=full_env,
            capture_output=True,
            text=True,
            timeout=self.timeout if timeout is None else timeout,
            check=False,
        )
        return CliResult(tuple(argv), proc.returncode, proc.stdout, proc.stderr)
