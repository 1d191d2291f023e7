"""Declarative request-parameter specs, checked the way Herdr's serde decoding checks them.

Herdr decodes a request line with serde into a tagged enum: a wrong type, a missing required
field or an unknown enum value fails the whole line, which is answered ``invalid_request``
with an empty id. The specs here reproduce that: :func:`check` returns the params with
defaults filled in, or raises :class:`ParamError` carrying a serde-style message
("missing field `text`", "invalid type: integer `5`, expected a string", "unknown variant
`x`, expected one of `a`, `b`"). Unknown extra fields are ignored, as serde does by default.
The same specs generate the simulator's JSON schema (``herdr_sim.schema``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_MISSING: Any = object()


class ParamError(ValueError):
    """A parameter problem, with the serde-style detail as its message."""


def _describe(value: Any) -> str:
    """Serde's wording for the JSON value it found (used in "invalid type" messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f"string {json.dumps(value)}"
    if isinstance(value, list):
        return "sequence"
    return "map"


class Kind:
    """One JSON value shape."""

    expected = "a value"

    def check(self, value: Any, where: str) -> Any:
        """Return the (possibly normalised) value or raise :class:`ParamError`."""
        raise NotImplementedError

    def mismatch(self, value: Any) -> ParamError:
        """The serde "invalid type" error for ``value``."""
        return ParamError(f"invalid type: {_describe(value)}, expected {self.expected}")

    def schema(self) -> dict[str, Any]:
        """This shape as a JSON Schema fragment."""
        raise NotImplementedError


class Str(Kind):
    """A JSON string."""

    expected = "a string"

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, str):
            raise self.mismatch(value)
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string"}


class Bool(Kind):
    """A JSON boolean."""

    expected = "a boolean"

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, bool):
            raise self.mismatch(value)
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


@dataclass
class Int(Kind):
    """An unsigned integer of ``bits`` bits (Herdr's params are u8/u16/u32/u64/usize)."""

    bits: int = 64

    @property
    def expected(self) -> str:  # type: ignore[override]
        return f"u{self.bits}" if self.bits != 0 else "usize"

    def check(self, value: Any, where: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.mismatch(value)
        limit = 2 ** (self.bits or 64)
        if value < 0 or value >= limit:
            raise ParamError(f"invalid value: integer `{value}`, expected {self.expected}")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": 0}


class Float(Kind):
    """A JSON number read as f32/f64."""

    expected = "f32"

    def check(self, value: Any, where: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.mismatch(value)
        return float(value)

    def schema(self) -> dict[str, Any]:
        return {"type": "number"}


@dataclass
class Enum(Kind):
    """A unit-variant enum encoded as one of a fixed set of strings."""

    values: tuple[str, ...] = ()

    @property
    def expected(self) -> str:  # type: ignore[override]
        return "a string"

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, str):
            raise self.mismatch(value)
        if value not in self.values:
            raise unknown_variant(value, self.values)
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.values)}


def unknown_variant(value: str, allowed: Sequence[str]) -> ParamError:
    """Serde's message for a string outside an enum's variants."""
    names = ", ".join(f"`{name}`" for name in allowed)
    return ParamError(f"unknown variant `{value}`, expected one of {names}")


@dataclass
class ListOf(Kind):
    """A JSON array whose items all have one shape."""

    item: Kind = field(default_factory=Str)
    expected = "a sequence"

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, list):
            raise self.mismatch(value)
        return [self.item.check(item, where) for item in value]

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": self.item.schema()}


@dataclass
class MapOf(Kind):
    """A JSON object used as a string-keyed map (env, tokens, state labels)."""

    value: Kind = field(default_factory=Str)
    expected = "a map"

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, dict):
            raise self.mismatch(value)
        return {key: self.value.check(item, where) for key, item in value.items()}

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": self.value.schema()}


@dataclass
class Nullable(Kind):
    """``Option<T>``: null is accepted and means absent."""

    inner: Kind = field(default_factory=Str)

    def check(self, value: Any, where: str) -> Any:
        if value is None:
            return None
        return self.inner.check(value, where)

    def schema(self) -> dict[str, Any]:
        return {"anyOf": [self.inner.schema(), {"type": "null"}]}


@dataclass(frozen=True)
class F:
    """One field of an object: its shape, and whether it is required or its default."""

    kind: Kind
    required: bool = False
    default: Any = None


@dataclass
class Obj(Kind):
    """A JSON object with named fields (a Rust struct)."""

    fields: Mapping[str, F] = field(default_factory=dict)
    expected = "a map"

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, dict):
            raise self.mismatch(value)
        out: dict[str, Any] = {}
        for name, spec in self.fields.items():
            if name not in value:
                if spec.required:
                    raise ParamError(f"missing field `{name}`")
                default = spec.default
                out[name] = default() if callable(default) else default
                continue
            raw = value[name]
            if raw is None and not spec.required and not isinstance(spec.kind, Nullable):
                # serde's `#[serde(default)] Option<T>` fields accept null as absent.
                default = spec.default
                out[name] = default() if callable(default) else default
                continue
            out[name] = spec.kind.check(raw, name)
        return out

    def schema(self) -> dict[str, Any]:
        props = {name: spec.kind.schema() for name, spec in self.fields.items()}
        required = [name for name, spec in self.fields.items() if spec.required]
        out: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        return out


@dataclass
class Tagged(Kind):
    """An internally tagged enum: ``{"type": "<variant>", …fields}`` (e.g. subscriptions)."""

    variants: Mapping[str, Obj] = field(default_factory=dict)
    tag: str = "type"
    expected = "internally tagged enum"

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, dict):
            raise self.mismatch(value)
        if self.tag not in value:
            raise ParamError(f"missing field `{self.tag}`")
        variant = value[self.tag]
        if not isinstance(variant, str) or variant not in self.variants:
            raise unknown_variant(str(variant), tuple(self.variants))
        out: dict[str, Any] = self.variants[variant].check(value, where)
        out[self.tag] = variant
        return out

    def schema(self) -> dict[str, Any]:
        options = []
        for name, obj in self.variants.items():
            sch = obj.schema()
            sch.setdefault("properties", {})[self.tag] = {"const": name}
            sch["required"] = [self.tag, *sch.get("required", [])]
            options.append(sch)
        return {"oneOf": options}


def check(spec: Obj, params: Any) -> dict[str, Any]:
    """Validate request params against ``spec``; raise :class:`ParamError` when serde would."""
    result: dict[str, Any] = spec.check(params, "params")
    return result


def finite_or(value: float | None, fallback: float) -> float:
    """Herdr treats non-finite ratios as absent."""
    if value is None or not math.isfinite(value):
        return fallback
    return value
