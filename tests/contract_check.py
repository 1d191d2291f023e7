"""The test suite's contract check: every wire line against Herdr's published protocol-22 schema.

The checking itself is :mod:`pytest_herdr.contracts` (one place); this module only knows
where the suite finds Herdr's schema: ``../shared/contracts`` (it is Herdr's, not ours, and is
never copied into the package), or ``$HERDR_CONTRACTS_DIR``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import herdr_sim.schema
from pytest_herdr.contracts import ContractChecker, SchemaBundle

REPO = Path(__file__).resolve().parents[1]


def contracts_dir() -> Path:
    """Where Herdr's schemas and manifests are (the simulator's own lookup)."""
    return herdr_sim.schema.contracts_dir()


def schema_path() -> Path:
    """Herdr's published protocol-22 bundle."""
    return contracts_dir() / "herdr-api.protocol22.schema.json"


@cache
def schema_bundle() -> dict[str, Any]:
    """The protocol-22 bundle as JSON."""
    bundle: dict[str, Any] = json.loads(schema_path().read_text())
    return bundle


@cache
def published_bundle() -> SchemaBundle:
    """The protocol-22 bundle, loaded once (its validators are cached in it)."""
    return SchemaBundle(schema_bundle(), str(schema_path()))


def new_checker() -> ContractChecker:
    """A fresh checker (own coverage and violations) against the published bundle."""
    return ContractChecker(published_bundle())


def violations(kind: str, line: dict[str, Any], method: str | None = None) -> list[str]:
    """Schema errors of one wire line ("request", "response" or "event"), as text."""
    return [
        f"{problem.kind}: {problem.part}: {problem.message} at {list(problem.location)}"
        for problem in new_checker().check(kind, line, method)
    ]
