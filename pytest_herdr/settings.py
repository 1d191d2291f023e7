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
PANE_PATH = Option(
    "--herdr-pane-path",
    "herdr_pane_path",
    "HERDR_TEST_PANE_PATH",
    "directories put first on PATH in every pane (and CLI run) of the herdr_* servers, "
    f"'{os.pathsep}'-separated: where your own agent's executable is",
)
TIME_SCALE = Option(
    "--herdr-time-scale",
    "herdr_time_scale",
    "HERDR_TEST_TIME_SCALE",
    "run the simulator's Herdr timers (settle and submit delays, detection, default waits) "
    "and the plugin's default waits at this factor, their order kept: 0.1 is ten times faster",
    "1",
)
RECORD = Option(
    "--herdr-record",
    "herdr_record",
    "HERDR_TEST_RECORD",
    "with --herdr-backend real: record every test's exchanges with Herdr into a cassette in "
    "this directory, one per test named by its node id (replay: herdr-sim replay)",
)
OPTIONS = (BACKEND, BIN, ARTIFACTS, SETTLE_MS, SCHEMA, PANE_PATH, TIME_SCALE, RECORD)

#: the ``--herdr-schema`` values that are not a file, and what each checks against
SCHEMA_CHOICES = {
    "builtin": "the simulator's protocol-22 schema",
    "binary": "`herdr api schema --json` of --herdr-bin",
}


def add_options(parser: pytest.Parser) -> None:
    """Register every option in a ``herdr`` group and as an ini key."""
    group = parser.getgroup("herdr", "Herdr simulator and real-Herdr fixtures (pytest-herdr)")
    for option in OPTIONS:
        dest = option.flag.removeprefix("--").replace("-", "_")
        group.addoption(option.flag, dest=dest, default=None, help=f"{option.help} [{option.env}]")
        parser.addini(option.ini, f"{option.help} (default: {option.default})", default=None)


def _raw(config: pytest.Config, option: Option) -> str | None:
    return _raw_from(config, option)[0]


def _raw_from(config: pytest.Config, option: Option) -> tuple[str | None, Path]:
    """The option's value and the directory a relative path in it is relative to: the
    invocation directory for the command line and the environment, the rootdir (where the
    ini file is) for the ini key."""
    dest = option.flag.removeprefix("--").replace("-", "_")
    here = config.invocation_params.dir
    value = config.getoption(dest)
    if value is None:
        value = os.environ.get(option.env) or None
    if value is None:
        value = config.getini(option.ini) or None
        here = config.rootpath
    if value is None:
        value = option.default
    return (None if value is None else str(value)), here


@dataclass(frozen=True)
class Settings:
    """What the options resolved to."""

    backend: Backend
    herdr_bin: Path | None
    artifacts: Path | None
    settle_ms: int
    schema: str | None
    #: absolute directories first on every pane's PATH (``--herdr-pane-path``)
    pane_path: tuple[Path, ...] = ()
    #: the factor the simulators' Herdr timers run at (``--herdr-time-scale``; 1: real time)
    time_scale: float = 1.0
    #: where each test's cassette goes (``--herdr-record``; real backend only)
    record: Path | None = None

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
        record, record_here = _raw_from(config, RECORD)
        if record is not None and backend != "real":
            raise pytest.UsageError(
                f"{RECORD.flag} records a real Herdr: use it with {BACKEND.flag} real"
            )
        return cls(
            backend=backend,
            herdr_bin=_find_bin(_raw(config, BIN)),
            artifacts=None if artifacts is None else Path(artifacts).resolve(),
            settle_ms=settle_ms,
            schema=_check_schema(_raw(config, SCHEMA)),
            pane_path=_pane_path(*_raw_from(config, PANE_PATH)),
            time_scale=_time_scale(_raw(config, TIME_SCALE)),
            record=None if record is None else (record_here / record).resolve(),
        )


def _time_scale(value: str | None) -> float:
    """``--herdr-time-scale``: a finite number > 0."""
    from herdr_sim.timers import check_time_scale

    try:
        return check_time_scale(float(value or "1"))
    except ValueError:
        raise pytest.UsageError(
            f"{TIME_SCALE.flag}: expected a number > 0 (1: Herdr's real time, 0.1: ten times "
            f"faster); got {value!r}"
        ) from None


def _check_schema(value: str | None) -> str | None:
    """``--herdr-schema``: one of :data:`SCHEMA_CHOICES` or an existing file; anything else
    is a usage error listing what it may be."""
    if value is None or value in SCHEMA_CHOICES or Path(value).is_file():
        return value
    choices = "; ".join(f"{name} ({what})" for name, what in SCHEMA_CHOICES.items())
    raise pytest.UsageError(
        f"{SCHEMA.flag}: {value!r} is not a schema file (no such file) nor one of the "
        f"built-in values; valid values: {choices}; or the path of a JSON schema file"
    )


def _pane_path(value: str | None, here: Path) -> tuple[Path, ...]:
    """``--herdr-pane-path``: each entry made absolute (against ``here``); a missing
    directory is a usage error (an agent not found on PATH would fail much later and less
    clearly)."""
    if not value:
        return ()
    entries = [here / entry for entry in value.split(os.pathsep) if entry]
    missing = [str(entry) for entry in entries if not entry.is_dir()]
    if missing:
        raise pytest.UsageError(f"{PANE_PATH.flag}: no such directory: {', '.join(missing)}")
    return tuple(entry.resolve() for entry in entries)


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
