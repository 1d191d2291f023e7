"""``--herdr-schema``: one contract checker for the whole session, and its summary.

Every line of every simulator the fixtures start (clients, the ``herdr`` CLI and agents in
panes alike) and every line of the fixtures' clients of a real Herdr is checked. At the end
the terminal summary says what was exercised and lists the violations, and any violation
fails the session. Under pytest-xdist each worker checks its own lines and sends its counts
and violations to the controller, which reports them together.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from .contracts import ContractChecker, Coverage
from .settings import Settings

#: what a worker sends its controller (``config.workeroutput``)
WORKER_KEY = "herdr_contracts"
#: violations reported by workers (kept on the controller's checker)
_REMOTE: dict[int, list[str]] = {}


def start_contract_checks(config: pytest.Config, settings: Settings) -> ContractChecker:
    """The session's checker: ``builtin`` (the simulator's protocol-22 schema), ``binary``
    (``herdr api schema --json`` of ``--herdr-bin``) or a schema file's path."""
    schema = settings.schema
    if schema == "builtin":
        return ContractChecker()
    if schema == "binary":
        if settings.herdr_bin is None:
            raise pytest.UsageError("--herdr-schema binary needs --herdr-bin (or herdr on PATH)")
        try:
            return ContractChecker.from_binary(settings.herdr_bin)
        except RuntimeError as exc:
            raise pytest.UsageError(f"--herdr-schema binary: {exc}") from None
    try:
        return ContractChecker.from_path(str(schema))
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(f"--herdr-schema {schema}: {exc}") from None


def worker_output(config: pytest.Config, checker: ContractChecker) -> None:
    """On an xdist worker: hand the counts and violations to the controller."""
    output: dict[str, Any] | None = getattr(config, "workeroutput", None)
    if output is None:
        return
    cov = checker.coverage
    output[WORKER_KEY] = {
        "counts": {name: dict(getattr(cov, name)) for name in _COUNTERS},
        "violations": [str(violation) for violation in checker.violations],
    }


_COUNTERS = ("methods", "result_types", "error_codes", "event_kinds", "lines")


def merge_worker(checker: ContractChecker, node_output: dict[str, Any]) -> None:
    """On the controller: add one worker's counts and violations."""
    data = node_output.get(WORKER_KEY)
    if not data:
        return
    other = Coverage(**{name: Counter(data["counts"].get(name, {})) for name in _COUNTERS})
    checker.coverage.merge(other)
    _REMOTE.setdefault(id(checker), []).extend(data["violations"])


def violations_text(checker: ContractChecker) -> list[str]:
    """Every violation, local and from workers, as text."""
    return [str(violation) for violation in checker.violations] + _REMOTE.get(id(checker), [])


def summarize(terminalreporter: Any, checker: ContractChecker) -> None:
    """The terminal summary: coverage, then every violation."""
    terminalreporter.write_sep("-", "herdr contract checks")
    terminalreporter.write_line(checker.coverage_summary())
    problems = violations_text(checker)
    if problems:
        terminalreporter.write_sep("-", f"herdr contract violations ({len(problems)})", red=True)
        for problem in problems[:50]:
            terminalreporter.write_line(problem)
