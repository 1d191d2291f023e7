"""``events.subscribe`` (a streaming connection) and ``events.wait``.

Subscriptions carry live events only (Herdr 0.9). Lifecycle subscriptions forward hub
events in the underscore envelope; the filtered ones (``pane.agent_status_changed``,
``pane.output_matched``, ``pane.scroll_changed``) use the dot envelope without ``type``.
Waits wake on state changes and output instead of polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from .. import errors
from ..errors import HerdrError
from ..events import Envelope
from ..params import Bool, F, ListOf, Nullable, Obj, Tagged
from ..regex import run_matching
from ..registry import Send, method, streams
from ..runtime import Runtime
from .pane_io import compile_match, find_matching_line, output_match_source, read_pane
from .specs import AGENT_STATUS, OPT_STR, OPT_U32, OPT_U64, OUTPUT_MATCH, READ_SOURCE, REQ_STR

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


def _status_data(rt: Runtime, key: int) -> dict[str, Any]:
    return rt.status_event(rt.session.locate(key))


@streams("events.subscribe")
async def stream_subscription(
    rt: Runtime,
    request_id: str,
    params: dict[str, Any],
    reader: asyncio.StreamReader,
    send: Send,
) -> None:
    """Ack, then forward matching events until the client or the server goes away."""
    out: asyncio.Queue[Envelope] = asyncio.Queue()
    lifecycle: set[str] = set()
    status_subs: list[tuple[int, str | None]] = []
    output_subs: list[dict[str, Any]] = []
    for index, sub in enumerate(params["subscriptions"]):
        kind = sub["type"]
        probe_id = f"{request_id}:sub:{index}:probe"
        if kind in LIFECYCLE:
            lifecycle.add(kind.replace(".", "_"))
            continue
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
            status_subs.append((ref.pane.key, sub["agent_status"]))
            if sub["agent_status"] is not None and rt.status_of(ref) == sub["agent_status"]:
                out.put_nowait({"event": kind, "data": rt.status_event(ref)})
        elif matcher is not None:
            output_subs.append({**sub, "key": ref.pane.key, "matcher": matcher})
    queue = rt.hub.subscribe()
    tasks: list[asyncio.Task[None]] = []
    getter: asyncio.Task[Envelope] | None = None
    try:
        await send({"id": request_id, "result": {"type": "subscription_started"}}, "response")
        tasks.append(asyncio.ensure_future(_pump_hub(rt, queue, out, lifecycle, status_subs)))
        tasks.extend(asyncio.ensure_future(_watch_output(rt, sub, out)) for sub in output_subs)
        hangup = asyncio.ensure_future(reader.read(1))
        tasks.append(hangup)  # type: ignore[arg-type]
        while True:
            getter = asyncio.ensure_future(out.get())
            done, _ = await asyncio.wait({getter, hangup}, return_when=asyncio.FIRST_COMPLETED)
            if getter not in done:
                return
            await send(getter.result(), "event")
    finally:
        # A pending ``out.get()`` must be cancelled too, or a server stop that cancels this
        # connection leaves it to be destroyed pending.
        pending: list[asyncio.Future[Any]] = [*tasks, *([getter] if getter is not None else [])]
        rt.hub.unsubscribe(queue)
        for task in pending:
            task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*pending, return_exceptions=True)


def _error(request_id: str, exc: HerdrError) -> dict[str, Any]:
    return {"id": request_id, "error": exc.body()}


async def _pump_hub(
    rt: Runtime,
    queue: asyncio.Queue[Envelope],
    out: asyncio.Queue[Envelope],
    lifecycle: set[str],
    status_subs: list[tuple[int, str | None]],
) -> None:
    keys_by_id: dict[int, str | None] = dict(status_subs)
    while True:
        envelope = await queue.get()
        kind = envelope["event"]
        if kind in lifecycle and kind != "pane_agent_status_changed":
            out.put_nowait(envelope)
        if kind == "pane_agent_status_changed" and keys_by_id:
            data = {k: v for k, v in envelope["data"].items() if k != "type"}
            ref = rt.session.find_pane(data["pane_id"])
            if ref is None or ref.pane.key not in keys_by_id:
                continue
            wanted = keys_by_id[ref.pane.key]
            if wanted is None or data["agent_status"] == wanted:
                out.put_nowait({"event": "pane.agent_status_changed", "data": data})


async def _watch_output(rt: Runtime, sub: dict[str, Any], out: asyncio.Queue[Envelope]) -> None:
    """Edge-triggered: one event when the text starts matching; re-armed by a non-match.

    ``recent`` is read as ``recent_unwrapped``, and the event's ``read`` says so (Herdr).
    """
    key = sub["key"]
    source = output_match_source(sub["source"])
    armed = True
    while key in rt.processes and key in rt.session.panes:
        proc = rt.processes[key]
        ref = rt.session.locate(key)
        # Listen before reading: output that lands while the match runs in its thread
        # wakes the next round instead of being missed.
        next_output = asyncio.ensure_future(proc.output.wait(None))
        try:
            result = read_pane(rt, ref, source, sub["lines"], "text")
            line = await find_matching_line(result["text"], sub["matcher"])
            if line is None:
                armed = True
            elif armed:
                armed = False
                out.put_nowait(
                    {
                        "event": "pane.output_matched",
                        "data": {"pane_id": ref.pane_id, "matched_line": line, "read": result},
                    }
                )
            await next_output
        finally:
            next_output.cancel()


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
    deadline = None if p["timeout_ms"] is None else time.monotonic() + p["timeout_ms"] / 1000
    ref = rt.session.find_pane(pane_id)
    if ref is None:
        error = errors.pane_not_found(pane_id)
        error.id_suffix = ":sub:0:probe"  # Herdr's initial probe answers under its own id
        raise error
    # Later look-ups use the canonical id the probe answered, as Herdr's do.
    key, canonical_id = ref.pane.key, ref.pane_id
    seen: list[dict[str, Any]] = []

    def listener(envelope: Envelope) -> None:
        data = envelope["data"]
        if envelope["event"] == "pane_agent_status_changed" and data.get("agent_status") == wanted:
            found = rt.session.find_pane(data["pane_id"])
            if found is not None and found.pane.key == key:
                seen.append(data)

    rt.hub.add_listener(listener)
    try:
        while True:
            if key not in rt.session.panes:
                raise errors.pane_not_found(canonical_id)
            ref = rt.session.locate(key)
            if seen or rt.status_of(ref) == wanted:
                data = (
                    seen[0]
                    if seen
                    else {"type": "pane_agent_status_changed", **rt.status_event(ref)}
                )
                return {
                    "type": "wait_matched",
                    "event": {"event": "pane_agent_status_changed", "data": data},
                }
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise HerdrError(errors.TIMEOUT, "timed out waiting for event match")
            await rt.state_changed.wait(remaining)
    finally:
        rt.hub.remove_listener(listener)
