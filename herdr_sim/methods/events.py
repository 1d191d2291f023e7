"""``events.subscribe`` (a streaming connection) and ``events.wait``.

Subscriptions carry live events only (Herdr 0.9). Lifecycle subscriptions forward hub
events in the underscore envelope; the filtered ones (``pane.agent_status_changed``,
``pane.output_matched``, ``pane.scroll_changed``) use the dot envelope without ``type``.
Each stream polls its subscriptions round by round as Herdr does
(:mod:`herdr_sim.methods.subscriptions`), waking on events, state changes and output
rather than on a timer alone. ``events.wait`` is one such status subscription, polled
until it matches.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from herdr_sim.registry import Send, method, streams
from herdr_sim.services.events import Signal, wait_any
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Bool, F, ListOf, Nullable, Obj, Tagged
from orchestrator.client.poll import Deadline

from ..regex import run_matching
from .pane_io import compile_match
from .specs import AGENT_STATUS, OPT_STR, OPT_U32, OPT_U64, OUTPUT_MATCH, READ_SOURCE, REQ_STR
from .subscriptions import (
    Active,
    LifecycleSubscription,
    OutputSubscription,
    ScrollSubscription,
    StatusSubscription,
)

LIFECYCLE = (
    "workspace.created", "workspace.updated", "workspace.metadata_updated", "workspace.renamed",
    "workspace.moved", "workspace.reordered", "workspace.closed", "workspace.focused",
    "worktree.created", "worktree.opened", "worktree.removed", "tab.created", "tab.closed",
    "tab.focused", "tab.renamed", "tab.moved", "pane.created", "pane.closed", "pane.updated",
    "pane.focused", "pane.moved", "pane.exited", "pane.agent_detected", "layout.updated",
)  # fmt: skip

_variants: dict[str, Obj] = {name: Obj(fields={}) for name in LIFECYCLE}
_variants["pane.output_matched"] = Obj(
    fields={
        "pane_id": REQ_STR,
        "source": F(READ_SOURCE, required=True),
        "lines": OPT_U32,
        "match": OUTPUT_MATCH,
        "strip_ansi": F(Bool(), default=True),
    }
)
_variants["pane.agent_status_changed"] = Obj(
    fields={"pane_id": REQ_STR, "agent_status": F(Nullable(AGENT_STATUS))}
)
_variants["pane.scroll_changed"] = Obj(fields={"pane_id": REQ_STR})

SUBSCRIBE_PARAMS = Obj(
    fields={"subscriptions": F(ListOf(Tagged(variants=_variants)), required=True)}
)

EVENT_KINDS = (
    "workspace_created", "workspace_updated", "workspace_closed", "workspace_renamed",
    "workspace_moved", "workspace_focused", "tab_created", "tab_closed", "tab_renamed",
    "tab_moved", "tab_focused", "pane_created", "pane_closed", "pane_focused", "pane_moved",
    "pane_output_changed", "pane_exited", "pane_agent_detected",
)  # fmt: skip
#: ``events.wait`` match fields per event kind (Herdr's ``EventMatch``): a required id names
#: what to watch; optional ones narrow it
_WAIT_FIELDS: dict[str, dict[str, F]] = {
    "workspace_created": {"workspace_id": OPT_STR},
    "workspace_updated": {"workspace_id": REQ_STR},
    "workspace_closed": {"workspace_id": REQ_STR},
    "workspace_renamed": {"workspace_id": REQ_STR, "label": OPT_STR},
    "workspace_moved": {"workspace_id": REQ_STR},
    "workspace_focused": {"workspace_id": REQ_STR},
    "tab_created": {"tab_id": OPT_STR, "workspace_id": OPT_STR},
    "tab_closed": {"tab_id": REQ_STR},
    "tab_renamed": {"tab_id": REQ_STR, "label": OPT_STR},
    "tab_moved": {"tab_id": REQ_STR},
    "tab_focused": {"tab_id": REQ_STR},
    "pane_created": {"pane_id": OPT_STR, "workspace_id": OPT_STR},
    "pane_closed": {"pane_id": REQ_STR},
    "pane_focused": {"pane_id": REQ_STR},
    "pane_moved": {"pane_id": REQ_STR},
    "pane_output_changed": {"pane_id": REQ_STR, "min_revision": OPT_U64},
    "pane_exited": {"pane_id": REQ_STR},
    "pane_agent_detected": {"pane_id": REQ_STR, "agent": OPT_STR},
}
_wait_variants: dict[str, Obj] = {name: Obj(fields=_WAIT_FIELDS[name]) for name in EVENT_KINDS}
_wait_variants["pane_agent_status_changed"] = Obj(
    fields={"pane_id": REQ_STR, "agent_status": F(AGENT_STATUS, required=True)}
)
WAIT_PARAMS = Obj(
    fields={
        "match_event": F(Tagged(variants=_wait_variants, tag="event"), required=True),
        "timeout_ms": OPT_U64,
    }
)

# The registry needs an entry for validation; streaming is served by stream_subscription.


@method("events.subscribe", SUBSCRIBE_PARAMS, result="subscription_started", mutates=False)
async def subscribe(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Start a subscription (served as a stream by the socket server)."""
    raise HerdrError(errors.INVALID_REQUEST, "events.subscribe needs a streaming connection")


@streams("events.subscribe")
async def stream_subscription(
    rt: Runtime,
    request_id: str,
    params: dict[str, Any],
    reader: asyncio.StreamReader,
    send: Send,
) -> None:
    """Build every subscription (a failed probe answers and ends the stream), ack, then
    poll them round by round until the client or the server goes away
    (:mod:`herdr_sim.methods.subscriptions`)."""
    active: list[Active] = []
    for index, sub in enumerate(params["subscriptions"]):
        kind = sub["type"]
        if kind in LIFECYCLE:
            active.append(LifecycleSubscription(rt.hub, kind))
            continue
        probe_id = f"{request_id}:sub:{index}:probe"
        matcher = None
        if kind == "pane.output_matched":
            # Herdr compiles the regex before probing the pane; its error carries the
            # request id, while a failed probe answers with the probe's own id.
            try:
                matcher = await run_matching(compile_match, sub["match"])
            except HerdrError as exc:
                await send(_error(request_id, exc), "response")
                return
        ref = rt.session.find_pane(sub["pane_id"])
        if ref is None:
            await send(_error(probe_id, errors.pane_not_found(sub["pane_id"])), "response")
            return
        if kind == "pane.agent_status_changed":
            active.append(StatusSubscription(rt, rt.status_event(ref), sub["agent_status"]))
        elif kind == "pane.scroll_changed":
            active.append(ScrollSubscription(rt, rt.pane_view(ref)))
        elif matcher is not None:
            active.append(OutputSubscription(rt, sub, matcher))
    hangup = asyncio.ensure_future(reader.read(1))
    kinds = _kind_signals(rt, active)  # the subscriptions never change: looked at once
    try:
        await send({"id": request_id, "result": {"type": "subscription_started"}}, "response")
        while not hangup.done():
            delivered = False
            for subscription in active:
                if type(subscription) is OutputSubscription and subscription.settled():
                    continue
                event = await subscription.poll()
                if event is not None:
                    delivered = True
                    await send(event, "event")
            # Herdr sleeps one poll interval between rounds; a round that delivered is
            # followed at once (same order, less waiting), an idle one waits for a change.
            await wait_any(
                _wake_signals(kinds, active), 0 if delivered else POLL_INTERVAL, also=(hangup,)
            )
    finally:
        hangup.cancel()
        with contextlib.suppress(BaseException):
            await hangup


#: Herdr's ``CONNECTION_POLL_INTERVAL`` (``src/api/server.rs``): the longest an idle
#: stream waits before polling its snapshot-based subscriptions again
POLL_INTERVAL = 0.1


def _kind_signals(rt: Runtime, active: list[Active]) -> list[Signal]:
    """What can make a poll find something, by the kinds of the stream's subscriptions, and
    nothing else (every wake is a round of polls for each stream): a hub event, for a
    lifecycle subscription; any state change, for an agent status; a change of what a pane
    id names or of a pane's size or viewport (``rt.pane_views.changed``), for output and
    scroll subscriptions (a pane appearing under a watched id wakes the stream to poll, and
    so to find, it)."""
    statuses = any(isinstance(subscription, StatusSubscription) for subscription in active)
    signals = [rt.state_changed if statuses else rt.pane_views.changed]
    if any(isinstance(subscription, LifecycleSubscription) for subscription in active):
        signals.append(rt.hub.published)
    return signals


def _wake_signals(kinds: list[Signal], active: list[Active]) -> list[Signal]:
    """``kinds`` (:func:`_kind_signals`) and the output of the panes the round's polls
    found."""
    signals = list(kinds)
    for subscription in active:
        if not isinstance(subscription, OutputSubscription | ScrollSubscription):
            continue
        if subscription.output is not None:
            signals.append(subscription.output)
    return signals


def _error(request_id: str, exc: HerdrError) -> dict[str, Any]:
    return {"id": request_id, "error": exc.body()}


@method("events.wait", WAIT_PARAMS, result="wait_matched", mutates=False)
async def wait(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Wait for a pane to reach an agent status (the only match Herdr supports)."""
    match = p["match_event"]
    if match["event"] != "pane_agent_status_changed":
        raise HerdrError(
            errors.UNSUPPORTED_EVENT_WAIT_MATCH,
            "events.wait currently supports pane agent status matches",
        )
    pane_id, wanted = match["pane_id"], match["agent_status"]
    deadline = Deadline(None if p["timeout_ms"] is None else p["timeout_ms"] / 1000)
    ref = rt.session.find_pane(pane_id)
    if ref is None:
        error = errors.pane_not_found(pane_id)
        error.id_suffix = ":sub:0:probe"  # Herdr's initial probe answers under its own id
        raise error
    # Herdr's wait is one status subscription polled until it matches (src/api/wait.rs
    # wait_for_event); later look-ups use the canonical id the probe answered.
    subscription = StatusSubscription(rt, rt.status_event(ref), wanted)
    while True:
        event = subscription.poll_for_wait()
        if event is not None:
            data = {"type": "pane_agent_status_changed", **event["data"]}
            return {
                "type": "wait_matched",
                "event": {"event": "pane_agent_status_changed", "data": data},
            }
        remaining = deadline.remaining()
        if remaining is not None and remaining <= 0:
            raise HerdrError(errors.TIMEOUT, "timed out waiting for event match")
        pause = POLL_INTERVAL if remaining is None else min(remaining, POLL_INTERVAL)
        await wait_any((rt.hub.published, rt.state_changed), pause)
