"""``--herdr-schema``: one contract checker for the whole session, and its summary.

Every line of every simulator the fixtures start (clients, the ``herdr`` CLI and agents in
panes alike) and every line of the fixtures' clients of a real Herdr is checked. At the end
the terminal summary says what was exercised and lists the violations, and any violation
fails the session. Under pytest-xdist each worker checks its own lines and sends its counts
and violations to the controller, which reports them together.

``--herdr-coverage-json PATH`` writes the coverage for a CI gate: which methods, result
types, error codes and event kinds were exercised (names and fractions) and the
violations. How many times each was seen is left out of the file: polls and retries make
those counts differ between identical runs, while the names do not.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .settings import Settings

if TYPE_CHECKING:  # jsonschema is imported only when --herdr-schema asks for checks
    from .contracts import ContractChecker

#: what a worker sends its controller (``config.workeroutput``)
WORKER_KEY = "herdr_contracts"
#: violations reported by workers (kept on the controller's checker)
_REMOTE: dict[int, list[str]] = {}
#: the JSON shape of ``--herdr-coverage-json`` (bumped when it changes incompatibly)
COVERAGE_JSON_VERSION = 1
COVERAGE_OPTION = "--herdr-coverage-json"


def add_coverage_option(parser: pytest.Parser) -> None:
    """``--herdr-coverage-json PATH`` (in the ``herdr`` group)."""
    group = parser.getgroup("herdr")
    group.addoption(
        COVERAGE_OPTION,
        dest="herdr_coverage_json",
        default=None,
        metavar="PATH",
        help="with --herdr-schema: write the contract coverage (names exercised, fractions, "
        "violations; stable between identical runs) as JSON to PATH",
    )


def start_contract_checks(config: pytest.Config, settings: Settings) -> ContractChecker:
    """The session's checker: ``builtin`` (the simulator's protocol-22 schema), ``binary``
    (``herdr api schema --json`` of ``--herdr-bin``) or a schema file's path."""
    from .contracts import ContractChecker

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
    from .contracts import Coverage

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


def stable_coverage(checker: ContractChecker) -> dict[str, Any]:
    """The coverage a CI gate can compare between runs: the names exercised and the
    fractions of the schema, without how often each was seen (which polling changes)."""
    data = checker.coverage_json()
    methods, results, events = data["methods"], data["result_types"], data["event_kinds"]

    def part(names: dict[str, int], known: int, covered: int) -> dict[str, Any]:
        return {"names": sorted(names), "covered": covered, "known": known}

    return {
        "version": COVERAGE_JSON_VERSION,
        "schema": data["schema"],
        "methods": {
            **part(methods["exercised"], methods["known"], methods["covered"]),
            "unknown": methods["unknown"],
        },
        "result_types": part(results["answered"], results["known"], results["covered"]),
        "error_codes": {"names": sorted(data["error_codes"])},
        "event_kinds": part(events["seen"], events["known"], events["covered"]),
        "violations": sorted(violations_text(checker)),
    }


def write_coverage(config: pytest.Config, checker: ContractChecker) -> Path | None:
    """With ``--herdr-coverage-json PATH``, on the controller: write :func:`stable_coverage`."""
    target = config.getoption("herdr_coverage_json", None)
    if target is None or hasattr(config, "workeroutput"):
        return None
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(stable_coverage(checker), indent=2) + "\n", encoding="utf-8")
    return path
