"""Pane and workspace metadata reports: tokens, titles, display names and state labels.

Rules are Herdr's (reference §3.6): sources are validated and trimmed, tokens are patched
per key with an optional TTL, a sequenced source ignores stale reports (the API still says
``ok``), presentation fields are kept per source and merged, and expiry takes effect on a
timer so clients see the change as an event.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import errors
from .errors import HerdrError
from .params import Bool, F, Int, MapOf, Nullable, Obj, Str

if TYPE_CHECKING:
    from .model.session import PaneRef, Workspace
    from .runtime import Runtime

TTL_MAX_MS = 86_400_000
SOURCE_MAX_CHARS = 80
TOKENS_PER_REPORT = 16
TOKENS_PER_RESOURCE = 32
SEQUENCE_SOURCES = 32
TOKEN_VALUE_MAX = 80
STATE_NAMES = ("idle", "working", "blocked", "done", "unknown")


def metadata_params(target: str) -> Obj:
    """The param spec of ``pane.report_metadata`` / ``workspace.report_metadata``."""
    fields: dict[str, F] = {
        target: F(Str(), required=True),
        "source": F(Str(), required=True),
        "seq": F(Nullable(Int(64))),
        "ttl_ms": F(Nullable(Int(64))),
    }
    if target == "workspace_id":
        fields["tokens"] = F(MapOf(Nullable(Str())), required=True)
        return Obj(fields=fields)
    fields.update(
        {
            "tokens": F(MapOf(Nullable(Str())), default=dict),
            "agent": F(Nullable(Str())),
            "applies_to_source": F(Nullable(Str())),
            "title": F(Nullable(Str())),
            "display_agent": F(Nullable(Str())),
            "state_labels": F(MapOf(Str()), default=dict),
            "clear_title": F(Bool(), default=False),
            "clear_display_agent": F(Bool(), default=False),
            "clear_state_labels": F(Bool(), default=False),
        }
    )
    return Obj(fields=fields)


def normalize_source(value: str) -> str:
    """Trimmed, 1–80 chars of ``[A-Za-z0-9:._-]``, else ``invalid_metadata_source``."""
    value = value.strip()
    if not value:
        message = "metadata source must not be empty"
    elif len(value) > SOURCE_MAX_CHARS:
        message = "metadata source must be 80 characters or fewer"
    elif not all(ch.isascii() and (ch.isalnum() or ch in ":._-") for ch in value):
        message = (
            "metadata source may contain only ASCII letters, digits, colon, dot, underscore, "
            "and hyphen"
        )
    else:
        return value
    raise HerdrError(errors.INVALID_METADATA_SOURCE, message)


def normalize_ttl(ttl_ms: int | None) -> float | None:
    """Seconds, or ``invalid_metadata_ttl`` outside 1..=86,400,000 ms."""
    if ttl_ms is None:
        return None
    if ttl_ms < 1:
        raise HerdrError(errors.INVALID_METADATA_TTL, "metadata ttl_ms must be at least 1")
    if ttl_ms > TTL_MAX_MS:
        raise HerdrError(errors.INVALID_METADATA_TTL, "metadata ttl_ms must be 86400000 or less")
    return ttl_ms / 1000


def _clean_text(value: str, limit: int = TOKEN_VALUE_MAX) -> str | None:
    cleaned = "".join(ch for ch in value.strip() if ch.isprintable())[:limit].strip()
    return cleaned or None


def normalize_tokens(tokens: dict[str, str | None]) -> dict[str, str | None]:
    """Validated token patch: a value to set, or None to clear."""
    if not tokens:
        raise HerdrError(errors.INVALID_METADATA_TOKEN, "missing token to set or clear")
    if len(tokens) > TOKENS_PER_REPORT:
        raise HerdrError(
            errors.INVALID_METADATA_TOKEN,
            f"a metadata report may update at most {TOKENS_PER_REPORT} tokens",
        )
    out: dict[str, str | None] = {}
    for key, value in tokens.items():
        if (
            not key
            or len(key) > 32
            or not all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in key)
        ):
            raise HerdrError(errors.INVALID_METADATA_TOKEN, f"invalid metadata token key: {key}")
        out[key] = None if value is None else _clean_text(value)
    return out


@dataclass
class Record:
    """One source's presentation report on a pane."""

    agent: str | None
    applies_to_source: str | None
    title: str | None = None
    display_agent: str | None = None
    state_labels: dict[str, str] = field(default_factory=dict)
    expires_at: float | None = None
    order: int = 0


@dataclass
class MetaStore:
    """The metadata of one pane or workspace."""

    tokens: dict[str, tuple[str, float | None]] = field(default_factory=dict)
    seqs: dict[str, int] = field(default_factory=dict)
    records: dict[str, Record] = field(default_factory=dict)
    counter: int = 0

    def fresh(self, source: str, seq: int | None) -> bool:
        """A stale sequenced report is ignored."""
        return seq is None or source not in self.seqs or seq > self.seqs[source]

    def accept_seq(self, source: str, seq: int | None) -> None:
        """Remember a sequenced source; at most 32 of them."""
        if seq is None:
            return
        if source not in self.seqs and len(self.seqs) >= SEQUENCE_SOURCES:
            raise HerdrError(
                errors.METADATA_SEQUENCE_SOURCE_LIMIT,
                f"metadata may track at most {SEQUENCE_SOURCES} sequenced sources",
            )
        self.seqs[source] = seq

    def patch_tokens(self, patch: dict[str, str | None], ttl: float | None, kind: str) -> bool:
        """Apply a token patch; changed?"""
        keys = set(self.token_values())
        for key, value in patch.items():
            if value is None:
                keys.discard(key)
            else:
                keys.add(key)
        if len(keys) > TOKENS_PER_RESOURCE:
            raise HerdrError(
                errors.METADATA_TOKEN_LIMIT,
                f"{kind} metadata may contain at most {TOKENS_PER_RESOURCE} tokens",
            )
        expires = None if ttl is None else time.monotonic() + ttl
        changed = False
        for key, value in patch.items():
            if value is None:
                changed |= self.tokens.pop(key, None) is not None
            elif self.tokens.get(key) != (value, expires):
                self.tokens[key] = (value, expires)
                changed = True
        return changed

    def expire(self) -> bool:
        """Drop expired tokens and records; changed?"""
        now = time.monotonic()
        before = (len(self.tokens), len(self.records))
        self.tokens = {k: v for k, v in self.tokens.items() if v[1] is None or v[1] > now}
        self.records = {
            k: r for k, r in self.records.items() if r.expires_at is None or r.expires_at > now
        }
        return before != (len(self.tokens), len(self.records))

    def token_values(self) -> dict[str, str]:
        """Current token values."""
        now = time.monotonic()
        return {k: v for k, (v, exp) in self.tokens.items() if exp is None or exp > now}


def _schedule_expiry(rt: Runtime, ttl: float | None, refresh: Any) -> None:
    if ttl is not None:
        asyncio.get_running_loop().call_later(ttl + 0.001, refresh)


def apply_workspace_metadata(rt: Runtime, ws: Workspace, p: dict[str, Any]) -> bool:
    """Validate and apply a workspace token report; True when the tokens changed."""
    source = normalize_source(p["source"])
    tokens = normalize_tokens(p["tokens"])
    ttl = normalize_ttl(p["ttl_ms"])
    store = rt.meta_for(("ws", ws.number))
    if not store.fresh(source, p["seq"]):
        return False
    store.accept_seq(source, p["seq"])
    changed = store.patch_tokens(tokens, ttl, "workspace")
    ws.tokens = store.token_values()

    def refresh() -> None:
        if store.expire() and ws in rt.session.workspaces:
            ws.tokens = store.token_values()
            rt.hub.publish("workspace_metadata_updated", {"workspace": rt.workspace_view(ws)})

    _schedule_expiry(rt, ttl, refresh)
    return changed


def apply_pane_metadata(rt: Runtime, ref: PaneRef, p: dict[str, Any]) -> None:
    """Validate and apply ``pane.report_metadata`` with Herdr's checks in Herdr's order."""
    agent = p["agent"]
    if agent is not None:
        agent = agent.strip()
        if not agent:
            raise HerdrError(errors.INVALID_AGENT, "agent label must not be empty")
    source = normalize_source(p["source"])
    tokens = normalize_tokens(p["tokens"]) if p["tokens"] else None
    ttl = normalize_ttl(p["ttl_ms"])
    title = None if p["title"] is None else _clean_text(p["title"])
    display_agent = None if p["display_agent"] is None else _clean_text(p["display_agent"])
    applies = p["applies_to_source"]
    if applies is not None:
        applies = normalize_source(applies)
    labels: dict[str, str] = {}
    for status, text in p["state_labels"].items():
        name = status.strip().lower()
        if name not in STATE_NAMES:
            raise HerdrError(errors.INVALID_STATE_LABEL, f"unknown state label: {name}")
        cleaned = _clean_text(text)
        if cleaned is not None:
            labels[name] = cleaned
    if (
        (p["title"] is not None and p["clear_title"])
        or (p["display_agent"] is not None and p["clear_display_agent"])
        or (p["state_labels"] and p["clear_state_labels"])
    ):
        raise HerdrError(
            errors.INVALID_METADATA_REQUEST, "cannot set and clear the same metadata field"
        )
    clears = p["clear_title"] or p["clear_display_agent"] or p["clear_state_labels"]
    if title is None and display_agent is None and not labels and tokens is None and not clears:
        raise HerdrError(errors.INVALID_METADATA_REQUEST, "missing metadata field to set or clear")
    store = rt.meta_for(("pane", ref.pane.key))
    if not store.fresh(source, p["seq"]):
        return
    store.accept_seq(source, p["seq"])
    token_changed = tokens is not None and store.patch_tokens(tokens, ttl, "pane")
    if title is not None or display_agent is not None or labels or clears:
        record = store.records.get(source) or Record(agent, applies)
        store.counter += 1
        record.order = store.counter
        record.agent = agent or record.agent
        record.applies_to_source = applies or record.applies_to_source
        if p["clear_title"]:
            record.title = None
        if p["clear_display_agent"]:
            record.display_agent = None
        if p["clear_state_labels"]:
            record.state_labels = {}
        record.title = title or record.title
        record.display_agent = display_agent or record.display_agent
        record.state_labels.update(labels)
        record.expires_at = None if ttl is None else time.monotonic() + ttl
        store.records[source] = record
    key = ref.pane.key

    def refresh() -> None:
        store.expire()
        if key in rt.session.panes:
            sync_pane(rt, rt.session.locate(key), store, False)

    sync_pane(rt, ref, store, token_changed)
    _schedule_expiry(rt, ttl, refresh)


def sync_pane(rt: Runtime, ref: PaneRef, store: MetaStore, token_changed: bool) -> None:
    """Recompute a pane's effective metadata and emit what changed."""
    pane = ref.pane
    title = display_agent = None
    labels: dict[str, str] = {}
    for record in sorted(store.records.values(), key=lambda r: r.order):
        if record.agent is not None and record.agent != pane.agent:
            continue
        title = record.title or title
        display_agent = record.display_agent or display_agent
        labels.update(record.state_labels)
    tokens = store.token_values()
    if tokens != pane.tokens:
        pane.tokens = tokens
        token_changed = True
    presentation = (title, display_agent, labels)
    if presentation != (pane.title, pane.display_agent, pane.state_labels):
        pane.title, pane.display_agent, pane.state_labels = title, display_agent, labels
        rt.publish_status(ref)
    if token_changed:
        pane.revision += 1
        rt.hub.publish("pane_updated", {"pane": rt.pane_view(ref)})
