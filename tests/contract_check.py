"""Validate every line the simulator emits against Herdr's published protocol-22 schema.

The schema stays in ``../shared/contracts`` (it is Herdr's, not ours); this module loads it
from there, or from ``$HERDR_CONTRACTS_DIR``.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[1]


def contracts_dir() -> Path:
    """Where Herdr's schemas and manifests are."""
    env = os.environ.get("HERDR_CONTRACTS_DIR")
    return Path(env) if env else REPO.parent / "shared" / "contracts"


@cache
def schema_bundle() -> dict[str, Any]:
    """The protocol-22 bundle."""
    path = contracts_dir() / "herdr-api.protocol22.schema.json"
    bundle: dict[str, Any] = json.loads(path.read_text())
    return bundle


@cache
def validator(part: str) -> Draft202012Validator:
    """A validator for one top-level schema of the bundle (refs resolve in the bundle)."""
    schema = dict(schema_bundle())
    schema["$ref"] = f"#/schemas/{part}"
    return Draft202012Validator(schema)


def violations(kind: str, line: dict[str, Any]) -> list[str]:
    """Schema errors of one emitted line ("response" or "event")."""
    if kind == "response":
        part = "error_response" if "error" in line else "success_response"
    elif "." in str(line.get("event", "")):
        part = "subscription_event"
    else:
        part = "event"
    return [
        f"{part}: {error.message} at {list(error.absolute_path)}"
        for error in validator(part).iter_errors(line)
    ]
