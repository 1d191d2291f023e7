"""The simulator's ``herdr api schema``: Herdr's five parts, built at run time.

Herdr prints the bundle compiled into its binary (herdrdev/herdr ``src/cli/api.rs``:
``api_schema``, ``schema_summary_text``); the simulator generates ``request`` from its own
parameter specs and reads the result and event parts from Herdr's published bundle, never
from a copy inside the package.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from herdr_sim.herdr_cli import main
from herdr_sim.schema import build_schema
from pytest_herdr.contracts import ContractChecker
from tests.contract_check import schema_bundle, schema_path

_PARTS = ["error_response", "event", "request", "subscription_event", "success_response"]


def test_schema_has_herdrs_parts_with_the_published_result_and_event_schemas() -> None:
    """``schema_summary_text`` lists Herdr's parts; the result and event parts are Herdr's
    published ones, unchanged, and each source is named."""
    schema = build_schema()
    published = schema_bundle()["schemas"]
    assert sorted(schema["schemas"]) == _PARTS == sorted(published)
    for part in ("success_response", "error_response", "event", "subscription_event"):
        assert schema["schemas"][part] == published[part], part
        assert schema["x-herdr-sim-schema-sources"][part] == str(schema_path())
    assert schema["x-herdr-sim-schema-sources"]["request"] == "the simulator's parameter specs"


def test_the_simulators_schema_checks_results_not_just_envelopes() -> None:
    """A result missing a required field breaks the simulator's own schema now (with only a
    ``request`` part, just the envelope was checked)."""
    checker = ContractChecker(build_schema())
    good = {
        "id": "1",
        "result": {
            "type": "worktree_removed",
            "workspace_id": "w2",
            "path": "/co",
            "forced": False,
        },
    }
    assert checker.check_response(good, "worktree.remove") == []
    bad = {"id": "1", "result": {"type": "worktree_removed", "workspace_id": "w2"}}
    problems = checker.check_response(bad, "worktree.remove")
    assert problems and problems[0].part == "success_response"
    event = {"event": "worktree_removed", "data": {"type": "worktree_removed"}}
    assert checker.check_event(event)


def test_unimplemented_methods_keep_herdrs_request_schema() -> None:
    """Every protocol method is listed; one the simulator refuses carries Herdr's params
    schema (its ``$defs`` included) and the simulator's reason."""
    schema = build_schema()
    checker = ContractChecker(schema)
    unsupported = schema["x-herdr-sim-unsupported"]
    if not unsupported:
        pytest.skip("every protocol method is implemented")
    name = min(unsupported)
    [variant] = [v for v in schema["schemas"]["request"]["oneOf"] if v["title"] == name]
    assert variant["x-herdr-sim-unsupported"] == unsupported[name]
    assert "x-herdr-result-type" not in variant
    assert checker.check_request({"id": "1", "method": name, "params": 5})


def test_without_the_published_bundle_only_our_own_parts_remain(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Nothing of Herdr's is invented: without the file, ``request`` (implemented methods)
    and the simulator's own error envelope."""
    monkeypatch.setenv("HERDR_CONTRACTS_DIR", str(tmp_path))
    schema = build_schema()
    assert sorted(schema["schemas"]) == ["error_response", "request"]
    checker = ContractChecker(schema)
    error = {"id": "x", "error": {"code": "c", "message": "m"}}
    assert checker.check_response(error) == []
    assert all("x-herdr-result-type" in v for v in schema["schemas"]["request"]["oneOf"])


def test_cli_summary_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``herdr api schema`` prints Herdr's summary text; ``--json`` the whole bundle."""
    assert main(["api", "schema"]) == 0
    assert capsys.readouterr().out == (
        "Herdr API schema\n"
        "protocol: 22\n"
        "schema_version: 1\n"
        f"schemas: {', '.join(_PARTS)}\n"
        "\n"
        "Use `herdr api schema --json` to print the full schema.\n"
        "Use `herdr api schema --output PATH` to write it to a file.\n"
    )
    assert main(["api", "schema", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["schemas"]["event"] == schema_bundle()["schemas"]["event"]
