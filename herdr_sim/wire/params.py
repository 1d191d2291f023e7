"""Declarative request-parameter specs, checked the way Herdr's serde decoding checks them.

Herdr decodes a request line with serde into a tagged enum: a wrong type, a missing required
field or an unknown enum value fails the whole line, which is answered ``invalid_request``
with an empty id. The specs here reproduce that: :func:`check` returns the params with
defaults filled in, or raises :class:`ParamError` carrying serde's message
("missing field `text`", "invalid type: integer `5`, expected a string", "unknown variant
`x`, expected one of `a`, `b`, `c`"). Unknown extra fields are ignored, as serde does by
default. The same specs generate the simulator's JSON schema (``herdr_sim.schema``).

Params reach serde as buffered ``Content`` (``Request`` flattens ``Method``), and a struct
decoded from content follows serde_derive's generated visitor: a JSON object is read key by
key in input order (the first bad value in *input* order is the error; a repeated field is
``duplicate field `x```; missing fields are reported afterwards in declaration order), and a
JSON array is the struct's sequence form (elements in declaration order; a short array
defaults the ``#[serde(default)]`` fields and is ``invalid length`` otherwise). Values come
from :mod:`herdr_sim.wire.request_json` (objects as :class:`~herdr_sim.wire.request_json.Pairs`);
plain ``dict`` values are accepted too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .request_json import Pairs, describe

_MISSING: Any = object()


class ParamError(ValueError):
    """A parameter problem, with the serde-style detail as its message."""


class Kind:
    """One JSON value shape."""

    expected = "a value"

    def check(self, value: Any, where: str) -> Any:
        """Return the (possibly normalised) value or raise :class:`ParamError`."""
        raise NotImplementedError

    def mismatch(self, value: Any) -> ParamError:
        """The serde "invalid type" error for ``value``."""
        return ParamError(f"invalid type: {describe(value)}, expected {self.expected}")

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

    #: what serde's ``ContentDeserializer::deserialize_enum`` says it wanted
    expected = "string or map"

    def check(self, value: Any, where: str) -> Any:
        pairs = _pairs(value)
        if pairs is not None:  # the externally tagged form: {"variant": null}
            if len(pairs) != 1:
                raise ParamError("invalid value: map, expected map with a single key")
            ((variant, content),) = pairs
            if variant not in self.values:
                raise unknown_variant(variant, self.values)
            if content is not None:
                raise ParamError(f"invalid type: {describe(content)}, expected unit")
            return variant
        if not isinstance(value, str):
            raise self.mismatch(value)
        if value not in self.values:
            raise unknown_variant(value, self.values)
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.values)}


def unknown_variant(value: str, allowed: Sequence[str]) -> ParamError:
    """Serde's message for a string outside an enum's variants (its ``OneOf`` wording)."""
    return ParamError(f"unknown variant `{value}`, {_one_of(allowed)}")


def _one_of(names: Sequence[str]) -> str:
    if not names:
        return "there are no variants"
    quoted = [f"`{name}`" for name in names]
    if len(quoted) == 1:
        return f"expected {quoted[0]}"
    if len(quoted) == 2:
        return f"expected {quoted[0]} or {quoted[1]}"
    return "expected one of " + ", ".join(quoted)


def _pairs(value: Any) -> list[tuple[str, Any]] | None:
    """An object's pairs in input order (duplicates kept for :class:`Pairs`), else None."""
    if isinstance(value, Pairs):
        return value.pairs
    if isinstance(value, dict):
        return list(value.items())
    return None


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
        pairs = _pairs(value)
        if pairs is None:
            raise self.mismatch(value)
        # a HashMap keeps the last of repeated keys, as serde's map visitor inserts them
        return {key: self.value.check(item, where) for key, item in pairs}

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


@dataclass(frozen=True)
class Shape:
    """A Rust struct as serde_derive sees it (:mod:`herdr_sim.wire.request_shapes`): its name,
    its fields in declaration order, those with ``#[serde(default)]`` and the ``Option``
    ones."""

    name: str
    fields: tuple[str, ...]
    defaulted: frozenset[str]
    options: frozenset[str]

    def required(self, field_name: str) -> bool:
        """serde reports this field missing (no default, not an ``Option``)."""
        return field_name not in self.defaulted and field_name not in self.options


@dataclass
class Obj(Kind):
    """A JSON object with named fields (a Rust struct).

    With a :class:`Shape` (the params struct of a method) it is read as serde_derive reads
    that struct: its name in errors, its sequence form, its declaration order, and its own
    idea of which fields may be null or missing — also for fields the simulator does not
    use (their values are not checked). Without one, the fields' own order stands in.
    """

    fields: Mapping[str, F] = field(default_factory=dict)
    shape: Shape | None = None

    @property
    def expected(self) -> str:  # type: ignore[override]
        return f"struct {self.shape.name}" if self.shape is not None else "a map"

    def check(self, value: Any, where: str) -> Any:
        pairs = _pairs(value)
        if pairs is not None:
            return self._from_map(pairs)
        if isinstance(value, list) and self.shape is not None:
            return self._from_sequence(value, self.shape)
        raise self.mismatch(value)

    def _order(self) -> list[str]:
        if self.shape is None:
            return list(self.fields)
        return [
            *self.shape.fields,
            *(name for name in self.fields if name not in self.shape.fields),
        ]

    def _required(self, name: str) -> bool:
        if self.shape is not None and name in self.shape.fields:
            return self.shape.required(name)
        return self.fields[name].required

    def _default(self, name: str) -> Any:
        spec = self.fields.get(name)
        if spec is None:
            return None
        return spec.default() if callable(spec.default) else spec.default

    def _value(self, name: str, raw: Any) -> Any:
        """One field's value: null is absent for an ``Option``, else the kind decides."""
        spec = self.fields[name]
        if raw is None and not isinstance(spec.kind, Nullable):
            if self.shape is not None and name in self.shape.fields:
                null_is_absent = name in self.shape.options
            else:  # serde's `#[serde(default)] Option<T>` fields accept null as absent
                null_is_absent = not spec.required
            if null_is_absent:
                return self._default(name)
        return spec.kind.check(raw, name)

    def _known(self, name: str) -> bool:
        return name in self.fields or (self.shape is not None and name in self.shape.fields)

    def _from_map(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """serde_derive's ``visit_map``: keys in input order, then the missing ones."""
        seen: dict[str, Any] = {}
        for key, raw in pairs:
            if not self._known(key):
                continue  # unknown fields are ignored
            if key in seen:
                raise ParamError(f"duplicate field `{key}`")
            seen[key] = self._value(key, raw) if key in self.fields else None
        out: dict[str, Any] = {}
        for name in self._order():
            if name in seen:
                if name in self.fields:
                    out[name] = seen[name]
            elif self._required(name):
                raise ParamError(f"missing field `{name}`")
            elif name in self.fields:
                out[name] = self._default(name)
        return out

    def _from_sequence(self, items: list[Any], shape: Shape) -> dict[str, Any]:
        """serde_derive's ``visit_seq``: the struct's fields in declaration order."""
        count = len(shape.fields)
        out: dict[str, Any] = {}
        for index, name in enumerate(shape.fields):
            if index < len(items):
                if name in self.fields:
                    out[name] = self._value(name, items[index])
            elif name in shape.defaulted:
                if name in self.fields:
                    out[name] = self._default(name)
            else:
                raise ParamError(
                    f"invalid length {index}, expected struct {shape.name} with "
                    f"{count} element{'' if count == 1 else 's'}"
                )
        if len(items) > count:
            raise ParamError(
                f"invalid length {len(items)}, expected {count} "
                f"element{'' if count == 1 else 's'} in sequence"
            )
        for name in self.fields:  # fields only the simulator has
            if name not in out:
                out[name] = self._default(name)
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
    """An internally tagged enum: ``{"type": "<variant>", …fields}`` (e.g. subscriptions).

    Read as serde's internally tagged visitor reads it: the tag is looked at where it
    stands among the keys (a second one is ``duplicate field``), the other keys are the
    variant's fields."""

    variants: Mapping[str, Obj] = field(default_factory=dict)
    tag: str = "type"
    expected = "internally tagged enum"

    def check(self, value: Any, where: str) -> Any:
        pairs = _pairs(value)
        if pairs is None:
            raise self.mismatch(value)
        variant: str | None = None
        others: list[tuple[str, Any]] = []
        for key, item in pairs:
            if key != self.tag:
                others.append((key, item))
                continue
            if variant is not None:
                raise ParamError(f"duplicate field `{self.tag}`")
            if not isinstance(item, str):
                raise ParamError(f"invalid type: {describe(item)}, expected variant identifier")
            if item not in self.variants:
                raise unknown_variant(item, tuple(self.variants))
            variant = item
        if variant is None:
            raise ParamError(f"missing field `{self.tag}`")
        out: dict[str, Any] = self.variants[variant].check(Pairs(others), where)
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


def shaped(spec: Obj, shape: Shape | None) -> Obj:
    """``spec`` read as the Rust struct ``shape`` describes (unchanged without one)."""
    return spec if shape is None else replace(spec, shape=shape)


def check(spec: Obj, params: Any) -> dict[str, Any]:
    """Validate request params against ``spec``; raise :class:`ParamError` when serde would."""
    result: dict[str, Any] = spec.check(params, "params")
    return result


def finite_or(value: float | None, fallback: float) -> float:
    """Herdr treats non-finite ratios as absent."""
    if value is None or not math.isfinite(value):
        return fallback
    return value
