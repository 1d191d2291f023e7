"""``agent.view.set``/``clear``: the transient filter and sort of the agent panel.

Herdr (``src/app/api/agent_view.rs``, rules in ``src/app/agent_view.rs``) validates the view
(``invalid_agent_view``, the first problem in Herdr's order: source, label, filter, sort),
then replaces the one active view and answers it as ``agent_view``. Only a client's agent
panel reads the view, so nothing else changes; ``agent.view.clear`` drops the active view
when no source is given or the source matches, and answers what is active afterwards.

A ``plugin:<id>`` source must name an installed, enabled plugin; the simulator has no plugin
registry, so a valid id is ``plugin_not_found`` "plugin not found", as in a Herdr with no
plugins installed.
"""

from __future__ import annotations

import re
from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import (
    Bool,
    Enum,
    F,
    Kind,
    ListOf,
    Nullable,
    Obj,
    ParamError,
    Str,
    Tagged,
)
from orchestrator.client.protocol import RUST_WHITESPACE
from orchestrator.client.untrusted_text import strip_control

from .specs import OPT_STR, REQ_STR

MAX_FILTER_DEPTH = 8
MAX_FILTER_NODES = 64
MAX_FILTER_VALUES = 32
MAX_SORT_FIELDS = 8
MAX_SOURCE_CHARS = 120
MAX_LABEL_CHARS = 32
PLUGIN_ID_MAX_CHARS = 120

BUILTIN_FIELDS = (
    "status",
    "workspace_id",
    "tab_id",
    "pane_id",
    "agent",
    "seen",
    "state_change_seq",
)
BUILTIN_SORT_FIELDS = (
    "workspace_order", "tab_order", "pane_order", "attention", "status", "agent", "seen",
    "state_change_seq",
)  # fmt: skip
CONTEXTS = ("current_workspace_id", "current_tab_id")
STATUSES = ("idle", "working", "blocked", "done", "unknown")
_IDENT = re.compile(r"[A-Za-z0-9:._-]+")
_TOKEN = re.compile(r"[A-Za-z0-9_-]+")


class _Untagged(Kind):
    """A serde ``#[serde(untagged)]`` enum: the first variant that reads the value wins."""

    def __init__(self, name: str, *variants: Kind) -> None:
        self.name = name
        self.variants = variants

    def check(self, value: Any, where: str) -> Any:
        for variant in self.variants:
            try:
                return variant.check(value, where)
            except ParamError:
                continue
        raise ParamError(f"data did not match any variant of untagged enum {self.name}")

    def schema(self) -> dict[str, Any]:
        return {"anyOf": [variant.schema() for variant in self.variants]}


class _U64(Kind):
    """A JSON integer read as ``u64`` (a float or a boolean is not one)."""

    expected = "u64"

    def check(self, value: Any, where: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64:
            raise self.mismatch(value)
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": 0}


class _FilterRef(Kind):
    """A nested ``AgentViewFilter`` (the type is recursive)."""

    def check(self, value: Any, where: str) -> Any:
        return AGENT_VIEW_FILTER.check(value, where)

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "description": "AgentViewFilter", "required": ["op"]}


def _token_variant() -> Obj:
    return Obj(fields={"token": F(Str(), required=True)})


FIELD = _Untagged("AgentViewField", Enum(values=BUILTIN_FIELDS), _token_variant())
SORT_FIELD = _Untagged("AgentViewSortField", Enum(values=BUILTIN_SORT_FIELDS), _token_variant())
VALUE = _Untagged(
    "AgentViewValue",
    Str(),
    Bool(),
    _U64(),
    Obj(fields={"context": F(Enum(values=CONTEXTS), required=True)}),
)
_FIELD = F(FIELD, required=True)
_NESTED = F(ListOf(_FilterRef()), required=True)
AGENT_VIEW_FILTER = Tagged(
    tag="op",
    variants={
        "all": Obj(fields={"filters": _NESTED}),
        "any": Obj(fields={"filters": _NESTED}),
        "not": Obj(fields={"filter": F(_FilterRef(), required=True)}),
        "eq": Obj(fields={"field": _FIELD, "value": F(VALUE, required=True)}),
        "in": Obj(fields={"field": _FIELD, "values": F(ListOf(VALUE), required=True)}),
        "exists": Obj(fields={"field": _FIELD}),
    },
)
SORT = Obj(
    fields={
        "field": F(SORT_FIELD, required=True),
        "order": F(Enum(values=("asc", "desc")), default="asc"),
    }
)
SET_PARAMS = Obj(
    fields={
        "source": REQ_STR,
        "label": OPT_STR,
        "filter": F(Nullable(AGENT_VIEW_FILTER)),
        "sort": F(ListOf(SORT), default=list),
    }
)


def _invalid(message: str) -> HerdrError:
    return HerdrError(errors.INVALID_AGENT_VIEW, message)


def normalize_source(source: str) -> str:
    """Trimmed; 1–120 characters of ``[A-Za-z0-9:._-]``."""
    source = source.strip(RUST_WHITESPACE)
    if not source or len(source) > MAX_SOURCE_CHARS or not _IDENT.fullmatch(source):
        raise _invalid(
            f"agent view source must be non-empty, at most {MAX_SOURCE_CHARS} characters, and "
            "contain only ASCII letters, digits, colon, dot, underscore, or hyphen"
        )
    return source


def normalize_label(label: str) -> str:
    """Trimmed, then control characters dropped; 1–32 characters left."""
    kept = strip_control(label.strip(RUST_WHITESPACE))
    if not kept or len(kept) > MAX_LABEL_CHARS:
        raise _invalid(
            f"agent view label must be non-empty and at most {MAX_LABEL_CHARS} characters"
        )
    return kept


def _check_token(field: Any) -> None:
    if isinstance(field, dict):
        token = field["token"]
        if not token or len(token.encode()) > 32 or not _TOKEN.fullmatch(token):
            raise _invalid(f"invalid agent view token `{token}`")


def _check_value(field: Any, value: Any) -> None:
    """``validate_field_value``: the value's type must suit the field."""
    _check_token(field)
    if isinstance(value, dict):  # a context
        if (field, value["context"]) in (
            ("workspace_id", "current_workspace_id"),
            ("tab_id", "current_tab_id"),
        ):
            return
        raise _invalid("agent view context type does not match the selected field")
    if (field == "seen" and isinstance(value, bool)) or (
        field == "state_change_seq" and isinstance(value, int) and not isinstance(value, bool)
    ):
        return
    if isinstance(value, str) and (
        isinstance(field, dict) or field not in ("seen", "state_change_seq")
    ):
        if field == "status" and value not in STATUSES:
            raise _invalid(f"unknown agent status `{value}`")
        return
    raise _invalid("agent view value type does not match the selected field")


def _check_filter(node: dict[str, Any], depth: int, nodes: list[int]) -> None:
    """``validate_filter``: depth, node count, non-empty groups, ``in`` sizes, values."""
    if depth > MAX_FILTER_DEPTH:
        raise _invalid(f"agent view filter may be nested at most {MAX_FILTER_DEPTH} levels")
    nodes[0] += 1
    if nodes[0] > MAX_FILTER_NODES:
        raise _invalid(f"agent view filter may contain at most {MAX_FILTER_NODES} nodes")
    op = node["op"]
    if op in ("all", "any"):
        if not node["filters"]:
            raise _invalid("agent view all/any filters must not be empty")
        for child in node["filters"]:
            _check_filter(child, depth + 1, nodes)
    elif op == "not":
        _check_filter(node["filter"], depth + 1, nodes)
    elif op == "eq":
        _check_value(node["field"], node["value"])
    elif op == "in":
        if not node["values"] or len(node["values"]) > MAX_FILTER_VALUES:
            raise _invalid(f"agent view in filters require 1 to {MAX_FILTER_VALUES} values")
        for value in node["values"]:
            _check_value(node["field"], value)
    else:
        _check_token(node["field"])


def _view(rt: Runtime) -> dict[str, Any]:
    active = rt.agent_view_override
    return {
        "type": "agent_view",
        "active": active is not None,
        "source": None if active is None else active["source"],
        "label": None if active is None else active["label"],
    }


@method("agent.view.set", SET_PARAMS, result="agent_view", mutates=False)
async def view_set(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Replace the agent panel's transient view."""
    source = normalize_source(p["source"])
    label = None if p["label"] is None else normalize_label(p["label"])
    if p["filter"] is not None:
        _check_filter(p["filter"], 1, [0])
    if len(p["sort"]) > MAX_SORT_FIELDS:
        raise _invalid(f"agent view sort may contain at most {MAX_SORT_FIELDS} fields")
    for sort in p["sort"]:
        _check_token(sort["field"])
    if source.startswith("plugin:"):
        plugin_id = source.removeprefix("plugin:")
        if not plugin_id or len(plugin_id) > PLUGIN_ID_MAX_CHARS:
            raise _invalid("plugin-owned agent view source has an invalid plugin id")
        raise HerdrError(errors.PLUGIN_NOT_FOUND, "plugin not found")
    rt.agent_view_override = {**p, "source": source, "label": label}
    return _view(rt)


@method("agent.view.clear", Obj(fields={"source": OPT_STR}), result="agent_view", mutates=False)
async def view_clear(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Drop the view (any, or only the one set by ``source``); what is active after."""
    source = None if p["source"] is None else normalize_source(p["source"])
    active = rt.agent_view_override
    if source is None or (active is not None and active["source"] == source):
        rt.agent_view_override = None
    return _view(rt)
