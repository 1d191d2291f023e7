"""Pane and workspace metadata reports: tokens, titles, display names and state labels.

Rules are Herdr's (reference §3.6): sources are validated and trimmed, tokens are patched
per key with an optional TTL, a sequenced source ignores stale reports (the API still says
``ok``), presentation fields are kept per source and merged newest-first per field, and
expiry takes effect on a timer so clients see the change as an event.

Presentation records follow Herdr's per-source rules: a report without any ``clear_*`` flag
replaces the source's record outright; a report with one patches the existing record. Each
field remembers when it was reported, and the effective title / display name / state label
is the most recently reported one among the records that are visible (not expired, agent
guard matching the pane's agent, ``applies_to_source`` matching the hook authority).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from itertools import count
from typing import Any, Protocol

from herdr_sim.model.session import Pane, PaneRef, Session, Workspace
from herdr_sim.services import lifecycle
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Bool, F, Int, MapOf, Nullable, Obj, Str
from orchestrator.client.untrusted_text import strip_control

from .events import EventHub

TTL_MAX_MS = 86_400_000
SOURCE_MAX_CHARS = 80
TOKENS_PER_REPORT = 16
TOKENS_PER_RESOURCE = 32
SEQUENCE_SOURCES = 32
TOKEN_VALUE_MAX = 80
STATE_NAMES = ("idle", "working", "blocked", "done", "unknown")

#: report order across every store (a tie-free stand-in for Herdr's report instants)
_ticks = count(1)


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
    """Trim, drop control characters, keep ``limit`` characters, trim again; blank → None."""
    kept = strip_control(value.strip())[:limit].strip()
    return kept or None


def _ascii_lower(text: str) -> str:
    return "".join(ch.lower() if ch.isascii() else ch for ch in text)


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
    #: when each field was last reported (a global tick), for the newest-wins merge
    title_at: int | None = None
    display_agent_at: int | None = None
    state_label_at: dict[str, int] = field(default_factory=dict)
    reported_at: float = 0.0
    ttl: float | None = None

    @property
    def expires_at(self) -> float | None:
        """The monotonic deadline of the whole record, if it has a TTL."""
        return None if self.ttl is None else self.reported_at + self.ttl

    def has_fields(self) -> bool:
        """Something to present."""
        return self.title is not None or self.display_agent is not None or bool(self.state_labels)


@dataclass
class MetaStore:
    """The metadata of one pane or workspace."""

    tokens: dict[str, tuple[str, float | None]] = field(default_factory=dict)
    #: last accepted ``seq`` per source (presentation and token reports alike)
    seqs: dict[str, int] = field(default_factory=dict)
    #: sources that sent sequenced token reports; only these count against the cap
    token_seq_sources: set[str] = field(default_factory=set)
    records: dict[str, Record] = field(default_factory=dict)

    def fresh(self, source: str, seq: int | None) -> bool:
        """A stale sequenced report is ignored."""
        return seq is None or source not in self.seqs or seq > self.seqs[source]

    def accept_seq(self, source: str, seq: int | None, includes_tokens: bool, kind: str) -> None:
        """Remember a sequenced source; at most 32 of them may carry tokens."""
        if seq is None:
            return
        if (
            includes_tokens
            and source not in self.token_seq_sources
            and len(self.token_seq_sources) >= SEQUENCE_SOURCES
        ):
            raise HerdrError(
                errors.METADATA_SEQUENCE_SOURCE_LIMIT,
                f"{kind} metadata may track at most {SEQUENCE_SOURCES} sequenced sources",
            )
        self.seqs[source] = seq
        if includes_tokens:
            self.token_seq_sources.add(source)

    def check_token_limit(self, patch: dict[str, str | None], kind: str) -> None:
        """``metadata_token_limit`` when the patch would leave more than 32 keys."""
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

    def patch_tokens(self, patch: dict[str, str | None], ttl: float | None) -> bool:
        """Apply a token patch; changed? (A new deadline counts as a change, as in Herdr.)"""
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


class MetaHost(Protocol):
    """What metadata needs from the runtime that owns it (the runtime, seen narrowly, so
    this module never imports it)."""

    session: Session
    hub: EventHub

    def meta_for(self, key: tuple[str, int]) -> MetaStore:
        """The metadata store of a pane ``("pane", key)`` or workspace ``("ws", number)``."""
        ...

    def pane_view(self, ref: PaneRef) -> dict[str, Any]:
        """PaneInfo."""
        ...

    def workspace_view(self, ws: Workspace) -> dict[str, Any]:
        """WorkspaceInfo."""
        ...

    def publish_status(self, ref: PaneRef) -> None:
        """Emit ``pane_agent_status_changed``."""
        ...


def _schedule_expiry(rt: MetaHost, ttl: float | None, refresh: Any) -> None:
    if ttl is not None:
        asyncio.get_running_loop().call_later(ttl + 0.001, refresh)


def check_workspace_report(p: dict[str, Any]) -> tuple[str, float | None, dict[str, str | None]]:
    """Validate a workspace report in Herdr's order: source, TTL, tokens."""
    source = normalize_source(p["source"])
    ttl = normalize_ttl(p["ttl_ms"])
    tokens = normalize_tokens(p["tokens"])
    return source, ttl, tokens


def apply_workspace_metadata(rt: MetaHost, ws: Workspace, p: dict[str, Any]) -> bool:
    """Validate and apply a workspace token report; True when the tokens changed."""
    source, ttl, tokens = check_workspace_report(p)
    store = rt.meta_for(("ws", ws.number))
    if not store.fresh(source, p["seq"]):
        return False
    store.check_token_limit(tokens, "workspace")
    store.accept_seq(source, p["seq"], True, "workspace")
    changed = store.patch_tokens(tokens, ttl)
    ws.tokens = store.token_values()

    def refresh() -> None:
        if store.expire() and ws in rt.session.workspaces:
            ws.tokens = store.token_values()
            rt.hub.publish(lifecycle.workspace_metadata_updated(rt.workspace_view(ws)))

    _schedule_expiry(rt, ttl, refresh)
    return changed


def apply_pane_metadata(rt: MetaHost, ref: PaneRef, p: dict[str, Any]) -> None:
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
        name = _ascii_lower(status.strip())
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
    if tokens is not None:
        store.check_token_limit(tokens, "pane")
    store.accept_seq(source, p["seq"], tokens is not None, "pane")
    token_changed = tokens is not None and store.patch_tokens(tokens, ttl)
    if title is not None or display_agent is not None or labels or clears:
        _record_presentation(
            store,
            source,
            Record(agent, applies, title, display_agent, labels, ttl=ttl),
            clear_title=p["clear_title"],
            clear_display_agent=p["clear_display_agent"],
            clear_state_labels=p["clear_state_labels"],
        )
    key = ref.pane.key

    def refresh() -> None:
        store.expire()
        if key in rt.session.panes:
            sync_pane(rt, rt.session.locate(key), store, False)

    sync_pane(rt, ref, store, token_changed)
    _schedule_expiry(rt, ttl, refresh)


def _record_presentation(
    store: MetaStore,
    source: str,
    report: Record,
    *,
    clear_title: bool,
    clear_display_agent: bool,
    clear_state_labels: bool,
) -> None:
    """Herdr's per-source update: replace without clears, patch with them."""
    now, tick = time.monotonic(), next(_ticks)
    existing = store.records.get(source)
    if existing is not None and existing.expires_at is not None and existing.expires_at <= now:
        del store.records[source]
        existing = None
    if not (clear_title or clear_display_agent or clear_state_labels):
        report.title_at = tick if report.title is not None else None
        report.display_agent_at = tick if report.display_agent is not None else None
        report.state_label_at = dict.fromkeys(report.state_labels, tick)
        report.reported_at = now
        store.records[source] = report
        return
    record = existing or Record(
        report.agent, report.applies_to_source, reported_at=now, ttl=report.ttl
    )
    if clear_title:
        record.title, record.title_at = None, None
    if clear_display_agent:
        record.display_agent, record.display_agent_at = None, None
    if clear_state_labels:
        record.state_labels, record.state_label_at = {}, {}
    if report.agent is not None:
        record.agent = report.agent
    if report.applies_to_source is not None:
        record.applies_to_source = report.applies_to_source
    if report.title is not None:
        record.title, record.title_at = report.title, tick
    if report.display_agent is not None:
        record.display_agent, record.display_agent_at = report.display_agent, tick
    for state, label in report.state_labels.items():
        record.state_labels[state] = label
        record.state_label_at[state] = tick
    if report.has_fields() or report.ttl is not None:
        record.reported_at, record.ttl = now, report.ttl
    store.records[source] = record


def _visible(record: Record, pane: Pane, now: float) -> bool:
    """Herdr's validity: something to show, not expired, and both guards matching.

    ``applies_to_source`` must name the source of the pane's current hook authority.
    """
    if not record.has_fields():
        return False
    if record.expires_at is not None and now >= record.expires_at:
        return False
    if record.agent is not None and record.agent != pane.agent:
        return False
    if record.applies_to_source is None:
        return True
    authority = pane.agent_rec.authority
    return authority is not None and authority.source == record.applies_to_source


def sync_pane(rt: MetaHost, ref: PaneRef, store: MetaStore, token_changed: bool) -> None:
    """Recompute a pane's effective metadata and emit what changed."""
    pane = ref.pane
    now = time.monotonic()
    visible = [r for r in store.records.values() if _visible(r, pane, now)]
    titled = [r for r in visible if r.title is not None and r.title_at is not None]
    named = [r for r in visible if r.display_agent is not None and r.display_agent_at is not None]
    title = max(titled, key=lambda r: r.title_at or 0).title if titled else None
    display_agent = (
        max(named, key=lambda r: r.display_agent_at or 0).display_agent if named else None
    )
    stamped = sorted(
        (r.state_label_at[state], state, label)
        for r in visible
        for state, label in r.state_labels.items()
        if state in r.state_label_at
    )
    labels = {state: label for _, state, label in stamped}
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
        rt.hub.publish(lifecycle.pane_updated(rt.pane_view(ref)))
