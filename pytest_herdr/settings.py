"""The plugin's options, resolved once per session so every fixture reads one typed value.

Each option has three spellings because the plugin serves three kinds of user: a developer
typing ``pytest --herdr-backend real``, a project pinning ``herdr_backend = sim`` in its ini
file, and a CI job that can only set ``HERDR_TEST_BACKEND=real``. Precedence follows that
story: the command line, then the environment (a CI job overrides what the project pinned),
then the ini file, then the default.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

Backend = Literal["sim", "real"]
BACKENDS: tuple[Backend, ...] = ("sim", "real")


@dataclass(frozen=True)
class Option:
    """One plugin option under its three names."""

    flag: str
    ini: str
    env: str
    help: str
    default: str | None = None


BACKEND = Option(
    "--herdr-backend",
    "herdr_backend",
    "HERDR_TEST_BACKEND",
    "which Herdr the herdr_* fixtures start: sim (the embedded simulator) or real",
    "sim",
)
BIN = Option(
    "--herdr-bin",
    "herdr_bin",
    "HERDR_BIN_PATH",
    "the real herdr executable for --herdr-backend real (default: herdr on PATH)",
)
ARTIFACTS = Option(
    "--herdr-artifacts",
    "herdr_artifacts",
    "HERDR_TEST_ARTIFACTS",
    "write an HTML page of every pane per failing test into this directory",
)
SETTLE_MS = Option(
    "--herdr-settle-ms",
    "herdr_settle_ms",
    "HERDR_TEST_SETTLE_MS",
    "the simulator's agent.start settle delay in ms (Herdr's is 3000; tests want less)",
    "200",
)
SCHEMA = Option(
    "--herdr-schema",
    "herdr_schema",
    "HERDR_TEST_SCHEMA",
    "validate every request and response of the herdr_* clients against this schema file "
    "('builtin': the simulator's protocol-22 schema; 'binary': `herdr api schema --json`)",
)
OPTIONS = (BACKEND, BIN, ARTIFACTS, SETTLE_MS, SCHEMA)


def add_options(parser: pytest.Parser) -> None:
    """Register every option in a ``herdr`` group and as an ini key."""
    group = parser.getgroup("herdr", "Herdr simulator and real-Herdr fixtures (pytest-herdr)")
    for option in OPTIONS:
        dest = option.flag.removeprefix("--").replace("-", "_")
        group.addoption(option.flag, dest=dest, default=None, help=f"{option.help} [{option.env}]")
        parser.addini(option.ini, f"{option.help} (default: {option.default})", default=None)


def _raw(config: pytest.Config, option: Option) -> str | None:
    dest = option.flag.removeprefix("--").replace("-", "_")
    value = config.getoption(dest)
    if value is None:
        value = os.environ.get(option.env) or None
    if value is None:
        value = config.getini(option.ini) or None
    if value is None:
        value = option.default
    return None if value is None else str(value)


@dataclass(frozen=True)
class Settings:
    """What the options resolved to."""

    backend: Backend
    herdr_bin: Path | None
    artifacts: Path | None
    settle_ms: int
    schema: str | None

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        """Resolve every option; a bad value is a usage error naming the option."""
        backend = _raw(config, BACKEND)
        if backend not in BACKENDS:
            raise pytest.UsageError(f"{BACKEND.flag}: expected one of sim, real; got {backend!r}")
        settle = _raw(config, SETTLE_MS)
        try:
            settle_ms = int(settle or "0")
        except ValueError:
            settle_ms = -1
        if settle_ms < 0:
            raise pytest.UsageError(f"{SETTLE_MS.flag}: expected milliseconds ≥ 0; got {settle!r}")
        artifacts = _raw(config, ARTIFACTS)
        return cls(
            backend=backend,
            herdr_bin=_find_bin(_raw(config, BIN)),
            artifacts=None if artifacts is None else Path(artifacts).resolve(),
            settle_ms=settle_ms,
            schema=_raw(config, SCHEMA),
        )


def _find_bin(value: str | None) -> Path | None:
    """The real herdr executable: the option's path, or ``herdr`` on PATH (None: not found)."""
    if value is not None:
        found = shutil.which(value) if os.sep not in value else value
        return Path(found) if found else Path(value)
    found = shutil.which("herdr")
    return Path(found) if found else None


SETTINGS_KEY = pytest.StashKey[Settings]()


def settings_of(config: pytest.Config) -> Settings:
    """The session's resolved settings (resolved at configure time)."""
    return config.stash[SETTINGS_KEY]
