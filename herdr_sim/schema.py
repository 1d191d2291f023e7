"""The simulator's API schema: what ``herdr api schema`` of the simulator prints.

Herdr's ``herdr api schema --json`` prints the JSON schema bundle compiled into its binary
(``protocol``, ``schema_version`` and five ``schemas``: ``request``, ``success_response``,
``error_response``, ``event``, ``subscription_event``; ``src/cli/api.rs``). The simulator
builds the same layout at run time from two sources, and names them under
``x-herdr-sim-schema-sources``:

* ``request`` is generated from the simulator's own parameter specs, one variant per method
  it implements (each naming its result ``type`` as ``x-herdr-result-type``);
* the result and event shapes cannot be derived from the simulator's code, and the package
  never carries a copy of Herdr's file: they are read, unchanged, from Herdr's published
  protocol-22 bundle where one is found (:func:`contracts_dir`), which also supplies the
  request variants of the methods the simulator answers ``not_supported_by_simulator``
  (listed under ``x-herdr-sim-unsupported``). Without that file the schema has ``request``
  and an ``error_response`` generated from the simulator's own error envelope.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from herdr_sim._version import HERDR_VERSION, PROTOCOL
from herdr_sim.methods import load_all

from .registry import PROTOCOL_22_METHODS, UNSUPPORTED

__all__ = [
    "PUBLISHED_SCHEMA",
    "build_schema",
    "contracts_dir",
    "published_bundle",
    "supported_methods_markdown",
]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"
#: Herdr's published protocol-22 bundle, by its name in the contracts directory.
PUBLISHED_SCHEMA = "herdr-api.protocol22.schema.json"
#: The parts only Herdr's published bundle describes (results and events).
_PUBLISHED_PARTS = ("success_response", "error_response", "event", "subscription_event")


def contracts_dir() -> Path:
    """Where Herdr's published data (schema bundles, detection manifests) is looked for:
    ``$HERDR_CONTRACTS_DIR``, else ``shared/contracts`` beside this project's checkout."""
    env = os.environ.get("HERDR_CONTRACTS_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "contracts"


def published_bundle() -> tuple[dict[str, Any], Path] | None:
    """Herdr's published protocol-22 bundle and its path, when one is readable."""
    path = contracts_dir() / PUBLISHED_SCHEMA
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("protocol") != PROTOCOL:
        return None
    if not isinstance(document.get("schemas"), dict):
        return None
    return document, path


def _error_response() -> dict[str, Any]:
    """The error envelope every simulator error is sent in (:class:`~.errors.HerdrError`)."""
    return {
        "$schema": _DRAFT,
        "title": "ErrorResponse",
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "error": {
                "type": "object",
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                "required": ["code", "message"],
            },
        },
        "required": ["id", "error"],
    }


def _published_variants(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    variants: dict[str, dict[str, Any]] = {}
    for variant in request.get("oneOf", []):
        name = variant.get("properties", {}).get("method", {}).get("const")
        if isinstance(name, str):
            variants[name] = variant
    return variants


def build_schema() -> dict[str, Any]:
    """The simulator's schema bundle (see the module docstring for where each part is from)."""
    methods = load_all()
    found = published_bundle()
    published: dict[str, Any] = found[0]["schemas"] if found is not None else {}
    published_request: dict[str, Any] = published.get("request", {})
    by_method = _published_variants(published_request)
    variants = []
    for name in PROTOCOL_22_METHODS:
        entry = methods.get(name)
        if entry is not None:
            variants.append(
                {
                    "type": "object",
                    "title": name,
                    "description": entry.summary,
                    "properties": {
                        "id": {"type": "string"},
                        "method": {"const": name},
                        "params": entry.params.schema(),
                    },
                    "required": ["id", "method", "params"],
                    "x-herdr-result-type": entry.result_type,
                }
            )
        elif name in by_method:
            variants.append(
                {"title": name, **by_method[name], "x-herdr-sim-unsupported": UNSUPPORTED[name]}
            )
    request: dict[str, Any] = {
        "$schema": _DRAFT,
        "title": "Request",
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "oneOf": variants,
    }
    if "$defs" in published_request:
        # the parameter types the published variants of unimplemented methods refer to
        request["$defs"] = published_request["$defs"]
    schemas: dict[str, Any] = {"request": request}
    sources = {"request": "the simulator's parameter specs"}
    for part in _PUBLISHED_PARTS:
        if part in published:
            schemas[part] = published[part]
            sources[part] = str(found[1]) if found is not None else ""
    if "error_response" not in schemas:
        schemas["error_response"] = _error_response()
        sources["error_response"] = "the simulator's error envelope"
    return {
        "$schema": _DRAFT,
        "title": "Herdr API (herdr-sim)",
        "protocol": PROTOCOL,
        "schema_version": 1,
        "x-herdr-version": HERDR_VERSION,
        "schemas": dict(sorted(schemas.items())),
        "x-herdr-sim-schema-sources": dict(sorted(sources.items())),
        "x-herdr-sim-unsupported": dict(sorted(UNSUPPORTED.items())),
    }


def supported_methods_markdown() -> str:
    """docs/simulator/supported-methods.md, generated so it cannot drift from the code."""
    methods = load_all()
    lines = [
        "# Supported methods",
        "",
        (
            "Generated from the simulator's method registry by "
            "`python -m herdr_sim docs supported-methods`; do not edit by hand."
        ),
        "",
        (
            f"Protocol {PROTOCOL} has {len(PROTOCOL_22_METHODS)} methods: "
            f"{len(methods)} are implemented, {len(UNSUPPORTED)} "
            f"{'answers' if len(UNSUPPORTED) == 1 else 'answer'} "
            "`not_supported_by_simulator`."
        ),
        "",
        "| method | status | result type / reason |",
        "| --- | --- | --- |",
    ]
    for name in PROTOCOL_22_METHODS:
        if name in methods:
            entry = methods[name]
            lines.append(f"| `{name}` | implemented | `{entry.result_type}` — {entry.summary} |")
        else:
            lines.append(f"| `{name}` | not supported | {UNSUPPORTED[name]} |")
    return "\n".join(lines) + "\n"
