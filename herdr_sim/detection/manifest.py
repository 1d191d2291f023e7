"""Herdr's agent-detection manifest format: parsing, validation, compilation.

A manifest is a TOML file with ``id``, optional ``version`` (dotted numeric),
``min_engine_version``, ``updated_at``, ``aliases`` and a list of
``[[rules]]``.  A rule has an ``id``, a ``state`` (``idle``, ``working``,
``blocked``, ``unknown``), a ``priority`` (default 0), a ``region`` (default
``whole_recent``), the flags ``visible_idle`` / ``visible_blocker`` /
``visible_working`` / ``skip_state_update``, and matchers: ``contains``
(case-insensitive substrings, all required), ``regex`` (each must match the
region), ``line_regex`` (each must match some line), and nested gates ``all``
(every one must match), ``any`` (at least one, when present) and ``not`` (none
may match).  Gates carry the same matcher fields.

Validation follows Herdr: unknown fields are errors, a manifest needs 1 to 128
rules, a gate nests at most 8 deep, at most 512 gates and 1024 matchers per
manifest, 32 matchers per gate, 512 characters per matcher, every gate needs a
positive matcher, ``skip_state_update`` rules must be ``state = "unknown"``
without visible evidence, regions must be known, ``top_non_empty_lines`` needs
``min_engine_version`` >= 3 when one is declared, and every regex must compile
(Rust syntax, run in linear time by :mod:`herdr_sim.regex`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from herdr_sim.regex import RustRegex, RustRegexError, compile_rust_regex
from orchestrator.client.protocol import RUST_WHITESPACE, parse_agent_label

__all__ = [
    "MANIFEST_ENGINE_VERSION",
    "REGION_NAMES",
    "STATES",
    "Gate",
    "Manifest",
    "ManifestError",
    "Rule",
    "manifest_matches_agent",
    "parse_manifest",
    "parse_manifest_version",
    "read_manifest",
    "validate_region_name",
]

#: The manifest engine version Herdr 0.9.2 implements.
MANIFEST_ENGINE_VERSION = 3

STATES: tuple[str, ...] = ("idle", "working", "blocked", "unknown")

#: Region names that take no argument.
REGION_NAMES: tuple[str, ...] = (
    "whole_recent",
    "after_last_prompt_marker",
    "before_current_prompt_marker",
    "whole_recent_without_current_prompt_marker",
    "current_prompt_block_marker",
    "after_current_prompt_block_marker",
    "prompt_box_body",
    "above_prompt_box",
    "last_non_empty_above_prompt_box",
    "after_last_horizontal_rule",
    "osc_title",
    "osc_progress",
)

MAX_RULES_PER_MANIFEST = 128
MAX_GATE_DEPTH = 8
MAX_TOTAL_GATES = 512
MAX_MATCHERS_PER_GATE = 32
MAX_TOTAL_MATCHERS = 1024
MAX_MATCHER_CHARS = 512
TOP_NON_EMPTY_LINES_ENGINE_VERSION = 3
MAX_TOP_REGION_LINE_COUNT = 0xFFFF

_MANIFEST_FIELDS = ("id", "version", "min_engine_version", "updated_at", "aliases", "rules")
_GATE_FIELDS = ("all", "any", "not", "contains", "regex", "line_regex")
_RULE_FIELDS = (
    "id",
    "state",
    "priority",
    "region",
    "visible_idle",
    "visible_blocker",
    "visible_working",
    "skip_state_update",
    *_GATE_FIELDS,
)


class ManifestError(ValueError):
    """A manifest that Herdr would refuse to load."""


@dataclass(frozen=True)
class Gate:
    """A matcher gate with its compiled regexes (``not`` is ``not_``)."""

    contains: tuple[str, ...] = ()
    regex: tuple[str, ...] = ()
    line_regex: tuple[str, ...] = ()
    all: tuple[Gate, ...] = ()
    any: tuple[Gate, ...] = ()
    not_: tuple[Gate, ...] = ()
    compiled_regex: tuple[RustRegex, ...] = ()
    compiled_line_regex: tuple[RustRegex, ...] = ()

    @property
    def lowered_contains(self) -> tuple[str, ...]:
        """The ``contains`` needles, lower-cased as Herdr compares them."""
        return tuple(needle.lower() for needle in self.contains)

    def has_positive_matcher(self) -> bool:
        """True when the gate has a matcher other than ``not``."""
        return bool(self.contains or self.regex or self.line_regex or self.all or self.any)

    def has_any_matcher(self) -> bool:
        """True when the gate has any matcher at all."""
        return self.has_positive_matcher() or bool(self.not_)


@dataclass(frozen=True)
class Rule:
    """One ``[[rules]]`` entry; ``state`` is ``None`` when the rule omits it."""

    id: str
    state: str | None
    priority: int
    region: str
    visible_idle: bool
    visible_blocker: bool
    visible_working: bool
    skip_state_update: bool
    gate: Gate

    @property
    def effective_state(self) -> str:
        """The state this rule reports (``unknown`` when omitted)."""
        return self.state or "unknown"


@dataclass(frozen=True)
class Manifest:
    """A validated, compiled manifest."""

    id: str
    version: str | None
    min_engine_version: int | None
    updated_at: str | None
    aliases: tuple[str, ...]
    rules: tuple[Rule, ...]


def parse_manifest_version(value: str) -> str:
    """Validate a dotted numeric version (``2026.06.10.1``) and return it trimmed."""
    trimmed = value.strip(RUST_WHITESPACE)
    if not trimmed:
        raise ManifestError("version must not be empty")
    for segment in trimmed.split("."):
        if not segment:
            raise ManifestError(f'version "{trimmed}" contains an empty segment')
        if not (segment.isascii() and segment.isdigit()):
            raise ManifestError(f'version "{trimmed}" must be dotted numeric')
        if int(segment) >= 2**64:
            raise ManifestError(f'version "{trimmed}" contains an oversized segment')
    return trimmed


def _region_count(spec: str, name: str) -> int | None:
    if not (spec.startswith(name + "(") and spec.endswith(")")):
        return None
    inner = spec[len(name) + 1 : -1]
    # Rust's usize parser accepts an optional leading '+'.
    digits = inner.removeprefix("+")
    if not digits or not (digits.isascii() and digits.isdigit()):
        return None
    value = int(digits)
    return value if value < 2**64 else None


def _top_region_count(spec: str) -> int | None:
    prefix = "top_non_empty_lines("
    if not (spec.startswith(prefix) and spec.endswith(")")):
        return None
    inner = spec[len(prefix) : -1]
    if not inner or inner.startswith("0") or not (inner.isascii() and inner.isdigit()):
        return None
    value = int(inner)
    return value if value <= MAX_TOP_REGION_LINE_COUNT else None


def region_line_count(spec: str) -> tuple[str, int] | None:
    """Name and count of a counted region such as ``bottom_non_empty_lines(12)``."""
    trimmed = spec.strip(RUST_WHITESPACE)
    for name in ("bottom_lines", "bottom_non_empty_lines"):
        count = _region_count(trimmed, name)
        if count is not None:
            return name, count
    top = _top_region_count(trimmed)
    if top is not None:
        return "top_non_empty_lines", top
    return None


def validate_region_name(spec: str) -> None:
    """Raise :class:`ManifestError` (message: the trimmed name) for an unknown region."""
    trimmed = spec.strip(RUST_WHITESPACE)
    if trimmed in REGION_NAMES or region_line_count(trimmed) is not None:
        return
    raise ManifestError(trimmed)


def _type_name(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "sequence"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def _check_fields(table: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for key in table:
        if key not in allowed:
            expected = ", ".join(f"`{name}`" for name in allowed)
            raise ManifestError(f"unknown field `{key}`, expected one of {expected}")


def _string(table: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    if key not in table:
        if required:
            raise ManifestError(f"missing field `{key}`")
        return None
    value = table[key]
    if not isinstance(value, str):
        raise ManifestError(f"invalid type: {_type_name(value)}, expected a string for `{key}`")
    return value


def _bool(table: dict[str, Any], key: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise ManifestError(f"invalid type: {_type_name(value)}, expected a boolean for `{key}`")
    return value


def _int(table: dict[str, Any], key: str, *, low: int, high: int) -> int | None:
    if key not in table:
        return None
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ManifestError(f"invalid type: {_type_name(value)}, expected an integer for `{key}`")
    if not low <= value <= high:
        raise ManifestError(f"invalid value: integer `{value}` out of range for `{key}`")
    return value


def _strings(table: dict[str, Any], key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ManifestError(f"invalid type for `{key}`: expected a sequence of strings")
    return tuple(value)


def _gates(table: dict[str, Any], key: str) -> tuple[Gate, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ManifestError(f"invalid type for `{key}`: expected a sequence of tables")
    return tuple(_gate_from_table(item, _GATE_FIELDS) for item in value)


def _gate_from_table(table: dict[str, Any], allowed: tuple[str, ...]) -> Gate:
    _check_fields(table, allowed)
    return Gate(
        contains=_strings(table, "contains"),
        regex=_strings(table, "regex"),
        line_regex=_strings(table, "line_regex"),
        all=_gates(table, "all"),
        any=_gates(table, "any"),
        not_=_gates(table, "not"),
    )


def _rule_from_table(table: dict[str, Any]) -> Rule:
    _check_fields(table, _RULE_FIELDS)
    rule_id = _string(table, "id", required=True)
    assert rule_id is not None
    state = _string(table, "state")
    if state is not None and state not in STATES:
        expected = ", ".join(f"`{name}`" for name in STATES)
        raise ManifestError(f"unknown variant `{state}`, expected one of {expected}")
    priority = _int(table, "priority", low=-(2**31), high=2**31 - 1)
    region = _string(table, "region")
    return Rule(
        id=rule_id,
        state=state,
        priority=priority or 0,
        region="whole_recent" if region is None else region,
        visible_idle=_bool(table, "visible_idle"),
        visible_blocker=_bool(table, "visible_blocker"),
        visible_working=_bool(table, "visible_working"),
        skip_state_update=_bool(table, "skip_state_update"),
        gate=_gate_from_table(
            {key: table[key] for key in _GATE_FIELDS if key in table}, _GATE_FIELDS
        ),
    )


class _Complexity:
    def __init__(self) -> None:
        self.total_gates = 0
        self.total_matchers = 0


def _validate_matcher_limits(gate: Gate, context: str, complexity: _Complexity) -> None:
    count = len(gate.contains) + len(gate.regex) + len(gate.line_regex)
    if count > MAX_MATCHERS_PER_GATE:
        raise ManifestError(
            f"{context} has {count} direct matchers, max is {MAX_MATCHERS_PER_GATE}"
        )
    complexity.total_matchers += count
    if complexity.total_matchers > MAX_TOTAL_MATCHERS:
        raise ManifestError(f"manifest exceeds max matcher count {MAX_TOTAL_MATCHERS}")
    for value in (*gate.contains, *gate.regex, *gate.line_regex):
        if len(value) > MAX_MATCHER_CHARS:
            raise ManifestError(f"{context} matcher exceeds max length {MAX_MATCHER_CHARS}")


def _validate_patterns(patterns: tuple[str, ...], context: str, field: str) -> None:
    for pattern in patterns:
        try:
            compile_rust_regex(pattern)
        except RustRegexError as exc:
            raise ManifestError(
                f'{context} contains invalid {field} pattern "{pattern}": {exc}'
            ) from exc


def _count_gate(depth: int, context: str, complexity: _Complexity) -> None:
    if depth > MAX_GATE_DEPTH:
        raise ManifestError(f"{context} exceeds max gate depth {MAX_GATE_DEPTH}")
    complexity.total_gates += 1
    if complexity.total_gates > MAX_TOTAL_GATES:
        raise ManifestError(f"manifest exceeds max gate count {MAX_TOTAL_GATES}")


def _validate_gate(gate: Gate, context: str, depth: int, complexity: _Complexity) -> None:
    _count_gate(depth, context, complexity)
    _validate_matcher_limits(gate, context, complexity)
    if not gate.has_positive_matcher():
        raise ManifestError(f"{context} must contain a positive matcher")
    _validate_patterns(gate.regex, context, "regex")
    _validate_patterns(gate.line_regex, context, "line_regex")
    for nested in gate.all:
        _validate_gate(nested, "all gate", depth + 1, complexity)
    for nested in gate.any:
        _validate_gate(nested, "any gate", depth + 1, complexity)
    for nested in gate.not_:
        if not nested.has_any_matcher():
            raise ManifestError(f"{context} contains an empty not gate")
        _validate_not_gate(nested, depth + 1, complexity)


def _validate_not_gate(gate: Gate, depth: int, complexity: _Complexity) -> None:
    _count_gate(depth, "not gate", complexity)
    _validate_matcher_limits(gate, "not gate", complexity)
    if not gate.has_any_matcher():
        raise ManifestError("not gate must contain a matcher")
    _validate_patterns(gate.regex, "not gate", "regex")
    _validate_patterns(gate.line_regex, "not gate", "line_regex")
    for nested in gate.all:
        _validate_gate(nested, "not all gate", depth + 1, complexity)
    for nested in gate.any:
        _validate_gate(nested, "not any gate", depth + 1, complexity)
    for nested in gate.not_:
        _validate_not_gate(nested, depth + 1, complexity)


def _validate(manifest: Manifest) -> None:
    if not manifest.rules:
        raise ManifestError("manifest must contain at least one rule")
    if len(manifest.rules) > MAX_RULES_PER_MANIFEST:
        raise ManifestError(
            f"manifest contains {len(manifest.rules)} rules, max is {MAX_RULES_PER_MANIFEST}"
        )
    complexity = _Complexity()
    for rule in manifest.rules:
        if not rule.id.strip(RUST_WHITESPACE):
            raise ManifestError("manifest rule id must not be empty")
        if rule.skip_state_update:
            if rule.state != "unknown":
                raise ManifestError(
                    f'rule {rule.id} uses skip_state_update without state = "unknown"'
                )
            if rule.visible_idle or rule.visible_blocker or rule.visible_working:
                raise ManifestError(
                    f"rule {rule.id} uses skip_state_update with visible state evidence"
                )
        try:
            validate_region_name(rule.region)
        except ManifestError as exc:
            raise ManifestError(f"rule {rule.id} uses invalid region: {exc}") from exc
        if (
            rule.region.strip(RUST_WHITESPACE).startswith("top_non_empty_lines(")
            and manifest.min_engine_version is not None
            and manifest.min_engine_version < TOP_NON_EMPTY_LINES_ENGINE_VERSION
        ):
            raise ManifestError(
                f"rule {rule.id} uses top_non_empty_lines but min_engine_version is below "
                f"{TOP_NON_EMPTY_LINES_ENGINE_VERSION}"
            )
        try:
            _validate_gate(rule.gate, "rule", 0, complexity)
        except ManifestError as exc:
            raise ManifestError(f"rule {rule.id} has invalid matcher gates: {exc}") from exc


def _compile_gate(gate: Gate) -> Gate:
    return Gate(
        contains=gate.contains,
        regex=gate.regex,
        line_regex=gate.line_regex,
        all=tuple(_compile_gate(nested) for nested in gate.all),
        any=tuple(_compile_gate(nested) for nested in gate.any),
        not_=tuple(_compile_gate(nested) for nested in gate.not_),
        compiled_regex=tuple(compile_rust_regex(pattern) for pattern in gate.regex),
        compiled_line_regex=tuple(compile_rust_regex(pattern) for pattern in gate.line_regex),
    )


@lru_cache(maxsize=64)
def parse_manifest(content: str) -> Manifest:
    """Parse, validate and compile manifest text; raise :class:`ManifestError`.

    Kept per text: the result is immutable and its RE2 patterns are safe to share between
    threads, and every simulator of a process loads the same bundled manifests (compiling
    their patterns anew was most of a simulator's start: 13 s of CPU across the test suite).
    """
    try:
        table = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(str(exc)) from exc
    _check_fields(table, _MANIFEST_FIELDS)
    manifest_id = _string(table, "id", required=True)
    assert manifest_id is not None
    version = _string(table, "version")
    rules_value = table.get("rules", [])
    if not isinstance(rules_value, list) or not all(isinstance(r, dict) for r in rules_value):
        raise ManifestError("invalid type for `rules`: expected an array of tables")
    manifest = Manifest(
        id=manifest_id,
        version=None if version is None else parse_manifest_version(version),
        min_engine_version=_int(table, "min_engine_version", low=0, high=2**32 - 1),
        updated_at=_string(table, "updated_at"),
        aliases=_strings(table, "aliases"),
        rules=tuple(_rule_from_table(rule) for rule in rules_value),
    )
    _validate(manifest)
    return Manifest(
        id=manifest.id,
        version=manifest.version,
        min_engine_version=manifest.min_engine_version,
        updated_at=manifest.updated_at,
        aliases=manifest.aliases,
        rules=tuple(
            Rule(
                id=rule.id,
                state=rule.state,
                priority=rule.priority,
                region=rule.region,
                visible_idle=rule.visible_idle,
                visible_blocker=rule.visible_blocker,
                visible_working=rule.visible_working,
                skip_state_update=rule.skip_state_update,
                gate=_compile_gate(rule.gate),
            )
            for rule in manifest.rules
        ),
    )


def read_manifest(path: str | Path) -> Manifest:
    """Read and parse one manifest file."""
    try:
        content = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(str(exc)) from exc
    return parse_manifest(content)


def manifest_matches_agent(manifest: Manifest, label: str) -> bool:
    """True when the manifest's id or an alias names the canonical agent ``label``."""
    return (
        manifest.id == label
        or label in manifest.aliases
        or parse_agent_label(manifest.id) == label
        or any(parse_agent_label(alias) == label for alias in manifest.aliases)
    )
