"""The simulator's own API schema, generated from its method registry.

``herdr-sim api schema`` and the simulator's ``herdr api schema`` print it. It has the shape
of Herdr's published bundle (``protocol``, ``schema_version``, ``schemas.request``) and says
which protocol methods the simulator implements and which it answers with
``not_supported_by_simulator``.
"""

from __future__ import annotations

from typing import Any

from ._version import HERDR_VERSION, PROTOCOL
from .methods import load_all
from .registry import PROTOCOL_22_METHODS, UNSUPPORTED


def build_schema() -> dict[str, Any]:
    """A JSON-Schema bundle describing every request the simulator accepts."""
    methods = load_all()
    variants = []
    for name in PROTOCOL_22_METHODS:
        entry = methods.get(name)
        if entry is None:
            continue
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
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Herdr API (herdr-sim)",
        "protocol": PROTOCOL,
        "schema_version": 1,
        "x-herdr-version": HERDR_VERSION,
        "schemas": {"request": {"oneOf": variants}},
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
            f"{len(methods)} are implemented, {len(UNSUPPORTED)} answer "
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
