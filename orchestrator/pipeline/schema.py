"""The schema step of the runner: a call's arguments against its tool's JSON Schema.

Why apart: both the runner (:mod:`.call_guard`, for the registry's tools) and
:func:`~orchestrator.pipeline.registry.run_given` (for a server's own tools) check arguments
before anything else looks at them, and a failure is answered in the tool family's own shape
(an AgentResult refusal, an ``invalid_request`` structured error, ``ok: false``), so a bad
call from a model is a business result, never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from orchestrator.core.text_rules import NO_NUL, unsendable
from orchestrator.core.tool import Tool
from orchestrator.pipeline.refusals import render_invalid


@dataclass(frozen=True)
class ArgumentProblem:
    """Why arguments fail a tool's schema: the message and the top-level parameter at fault."""

    message: str
    field: str | None


#: id(tool) → (tool, its schema's validator): built once per tool and process (a Tool is
#: frozen, and the tool is kept so its id cannot be reused by another); bounded for servers
#: that make tools on the fly
_VALIDATORS: dict[int, tuple[Tool, Draft202012Validator]] = {}
_VALIDATORS_MAX = 512


def validator_of(tool: Tool) -> Draft202012Validator:
    """The JSON-Schema validator of ``tool``'s arguments, built on its first call."""
    kept = _VALIDATORS.get(id(tool))
    if kept is not None and kept[0] is tool:
        return kept[1]
    validator = Draft202012Validator(dict(tool.input_schema))
    if len(_VALIDATORS) >= _VALIDATORS_MAX:
        _VALIDATORS.clear()
    _VALIDATORS[id(tool)] = (tool, validator)
    return validator


def argument_error(tool: Tool, arguments: object) -> ArgumentProblem | None:
    if not isinstance(arguments, Mapping):
        return ArgumentProblem("arguments must be a JSON object", None)
    validator = validator_of(tool)
    errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
    if not errors:
        found = unsendable(dict(arguments))
        if found is None:
            return None
        path, reason = found
        return ArgumentProblem(f"{'/'.join(path)}: {reason}", path[0] if path else None)
    first = errors[0]
    where = "/".join(str(part) for part in first.absolute_path)
    said = first.message
    if first.validator == "pattern" and first.validator_value == NO_NUL:
        said = "holds a NUL character, which Herdr cannot carry"  # the value is not echoed
    message = f"{where}: {said}" if where else said
    return ArgumentProblem(message, _field_of(first, arguments))


def _field_of(error: ValidationError, arguments: Mapping[str, Any]) -> str | None:
    """The parameter an error is about: its path, the missing or the unexpected property."""
    if error.absolute_path:
        return str(error.absolute_path[0])
    if error.validator == "required":
        required = error.validator_value if isinstance(error.validator_value, list) else []
        missing = [str(p) for p in required if p not in arguments]
        return missing[0] if missing else None
    if error.validator == "additionalProperties":
        known = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        extra = [str(key) for key in arguments if key not in known]
        return extra[0] if extra else None
    return None


def invalid(tool: Tool, problem: ArgumentProblem) -> dict[str, Any]:
    """A schema failure in the tool family's own shape (an AgentResult refusal for agent tools)."""
    return render_invalid(
        tool, problem.message, problem.field, log_field=in_schema(tool, problem.field)
    )


def in_schema(tool: Tool, field: str | None) -> bool:
    """Whether ``field`` is one of ``tool``'s parameters (else it is the caller's text)."""
    props = tool.input_schema.get("properties") or {}
    return field is None or field in props


def integers(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` with every whole-number float the schema types ``integer`` made an int.

    JSON has one number type: ``5000.0`` validates as an integer, but Herdr's CLI refuses
    ``--timeout 5000.0`` and its socket refuses a float for a ``u64``. Run on validated
    arguments, so every integer parameter of every tool reaches its handler as an int.
    """
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if isinstance(value, float) and "integer" in kinds and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        rest = extra if isinstance(extra, Mapping) else {}
        return {key: integers(props.get(key, rest), item) for key, item in value.items()}
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [integers(items, item) for item in value]
    return value
