"""The subscriptions of one ``events.subscribe`` stream, polled as Herdr polls them.

Herdr (``src/api/server.rs`` ``stream_subscriptions`` and ``src/api/subscriptions.rs``)
turns each requested subscription into its own active subscription, then loops: every
round polls each of them once, in request order, and each poll yields at most one event.
The rules that follow, and that clients see:

* a **lifecycle** subscription keeps its own cursor into the event hub, starting at the hub's
  newest event (live events only, as Herdr 0.9 does), and returns the first event of its kind
  after it; the same kind listed twice is delivered twice;
* a **``pane.agent_status_changed``** subscription keeps its own cursor too, so several on
  one pane (say one for ``done`` and one for ``blocked``) each deliver; with no hub event
  for its pane it compares a snapshot of the pane (status and presentation) with the last
  one it saw, and an initial event is delivered when the filter already matches;
* **``pane.output_matched``** reads the pane on each poll and fires on the edge from not
  matching to matching; **``pane.scroll_changed``** compares the pane's scroll snapshot;
* so within a round, events come in request order, not in the order they happened.

A pane that is gone makes its snapshot polls quiet (Herdr swallows their errors).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any, Protocol

from herdr_sim.services.events import Envelope, EventHub, Signal
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors

from ..terminal import Terminal
from .pane_io import Matcher, find_matching_line, output_match_source, read_result, read_terminal


class Active(Protocol):
    """One active subscription: ``poll`` answers at most one event per round."""

    async def poll(self) -> Envelope | None:
        """The next event to deliver, or None this round."""


class LifecycleSubscription:
    """A plain lifecycle kind (``pane.created`` …) read from the hub after its own cursor.

    The cursor starts at the hub's newest event: Herdr 0.9.0 made new subscriptions carry live
    events only (its changelog, #1270). Herdr 0.8.2 started every cursor at 0
    (``src/api/subscriptions.rs``, ``last_sequence: 0``) and so replayed the retained past
    events of the kind first; docs/simulator/fidelity.md records the choice.
    """

    def __init__(self, hub: EventHub, kind: str) -> None:
        self.hub = hub
        self.kind = kind.replace(".", "_")
        self.cursor = hub.current_sequence

    async def poll(self) -> Envelope | None:
        for sequence, envelope in self.hub.events_after(self.cursor):
            self.cursor = sequence
            if envelope["event"] == self.kind:
                return envelope
        return None


def _presentation(data: dict[str, Any]) -> tuple[Any, Any, dict[str, str]]:
    return data.get("title"), data.get("display_agent"), data.get("state_labels") or {}


def _status_envelope(data: dict[str, Any]) -> Envelope:
    body = {key: value for key, value in data.items() if key != "type"}
    return {"event": "pane.agent_status_changed", "data": body}


class StatusSubscription:
    """``pane.agent_status_changed`` for one pane, with an optional status filter."""

    def __init__(self, rt: Runtime, probe: dict[str, Any], wanted: str | None) -> None:
        self.rt = rt
        self.pane_id: str = probe["pane_id"]
        self.wanted = wanted
        self.cursor = rt.hub.current_sequence
        self.last_status: str = probe["agent_status"]
        self.last_presentation = _presentation(probe)
        self.initial: dict[str, Any] | None = (
            probe if wanted is not None and wanted == probe["agent_status"] else None
        )

    async def poll(self) -> Envelope | None:
        return self._next(strict=False)

    def poll_for_wait(self) -> Envelope | None:
        """:meth:`poll` for ``events.wait``: a pane gone by the snapshot is ``pane_not_found``
        (Herdr's ``poll_for_wait`` passes the snapshot's error on; a stream swallows it)."""
        return self._next(strict=True)

    def _next(self, *, strict: bool) -> Envelope | None:
        hub = self.rt.hub
        saw_status_event = False
        for sequence, envelope in hub.events_after(self.cursor):
            self.cursor = sequence
            data = envelope["data"]
            if envelope["event"] != "pane_agent_status_changed" or data["pane_id"] != self.pane_id:
                continue
            saw_status_event = True
            self.last_status = data["agent_status"]
            self.last_presentation = _presentation(data)
            if self.wanted is not None and self.wanted != data["agent_status"]:
                continue
            self.initial = None
            return _status_envelope(data)
        if saw_status_event:
            self.initial = None
        elif hub.current_sequence != self.cursor:
            return None
        elif self.initial is not None:
            initial, self.initial = self.initial, None
            return _status_envelope(initial)
        return self._from_snapshot(strict=strict)

    def _from_snapshot(self, *, strict: bool) -> Envelope | None:
        ref = self.rt.session.find_pane(self.pane_id)
        if ref is None:
            if strict:
                raise errors.pane_not_found(self.pane_id)
            return None
        data = self.rt.status_event(ref)
        status, presentation = data["agent_status"], _presentation(data)
        changed = status != self.last_status or presentation != self.last_presentation
        self.last_status, self.last_presentation = status, presentation
        if not changed or (self.wanted is not None and self.wanted != status):
            return None
        return _status_envelope(data)


#: What a read of a pane's terminal (source, lines) and a match (its spec) gave, for the
#: terminal's current change count and viewport offset: ``(text, truncated, first matching
#: line)``, shared by every output subscription asking the same question (issue 17: fifty
#: streams watching one pane each read and matched it in a thread on every change).
_Answer = tuple[str, bool, str | None]
_answers: weakref.WeakKeyDictionary[
    Terminal, tuple[tuple[int, int], dict[tuple[str, int | None, str], asyncio.Future[_Answer]]]
] = weakref.WeakKeyDictionary()
#: the ``pane.output_matched`` envelope built for a question and pane, per terminal state
_envelopes: weakref.WeakKeyDictionary[
    Terminal, tuple[tuple[int, int], dict[tuple[tuple[str, int | None, str], str], Envelope]]
] = weakref.WeakKeyDictionary()


async def _answer(
    terminal: Terminal,
    state: tuple[int, int],
    question: tuple[str, int | None, str],
    matcher: Matcher,
) -> _Answer:
    """The shared answer to ``question`` for ``terminal`` in ``state``: read now, matched
    once in its own task (a poller that goes away does not cancel it for the others)."""
    kept = _answers.get(terminal)
    if kept is None or kept[0] != state:
        kept = (state, {})
        _answers[terminal] = kept
    pending = kept[1].get(question)
    if pending is None:
        source, lines, _ = question
        text, truncated = read_terminal(terminal, source, lines, "text")
        pending = asyncio.ensure_future(_match(text, truncated, matcher))
        kept[1][question] = pending
        answers = kept[1]

        def forget_failure(task: asyncio.Future[_Answer]) -> None:
            failed = task.cancelled() or task.exception() is not None
            if failed and answers.get(question) is task:  # not kept: the next poll asks again
                del answers[question]

        pending.add_done_callback(forget_failure)
    return await asyncio.shield(pending)


async def _match(text: str, truncated: bool, matcher: Matcher) -> _Answer:
    # in a matching thread (herdr_sim/regex): other clients are served meanwhile
    return text, truncated, await find_matching_line(text, matcher)


class OutputSubscription:
    """``pane.output_matched``: edge-triggered on a read of the pane each poll.

    ``recent`` is read as ``recent_unwrapped``, and the event's ``read`` says so (Herdr).
    """

    def __init__(self, rt: Runtime, sub: dict[str, Any], matcher: Matcher) -> None:
        self.rt = rt
        self.pane_id: str = sub["pane_id"]
        self.source = output_match_source(sub["source"])
        self.lines: int | None = sub["lines"]
        self.matcher = matcher
        self.question = (self.source, self.lines, json.dumps(sub["match"], sort_keys=True))
        self.matching = False
        #: what the last read saw: the pane, its terminal, that terminal's change count and
        #: viewport offset. Unchanged, the read and the match would give the same answer,
        #: which the edge rule turns into no event, so the poll skips both (issue 17: fifty
        #: streams re-read and re-matched every quiet pane each time any pane printed).
        self.seen: tuple[int, int, int, int] | None = None
        #: ``rt.pane_views.naming_generation`` when the pane id was last looked up: a pane id names
        #: another pane (or none) only when that changes
        self.looked_up = -1
        #: the output signal of the pane the last poll found (every round polls first), so
        #: the stream's wait needs no second lookup of the pane (events.py ``_wake_signals``)
        self.output: Signal | None = None
        #: the fire counts of :attr:`output` and ``rt.pane_views.changed`` when the state in
        #: :attr:`seen` was read: the terminal only changes with its output (or its view),
        #: so while both counts stand the pane shows what was seen
        self.marks: tuple[int, int] | None = None

    async def poll(self) -> Envelope | None:
        if self.settled():
            return None
        self.looked_up = self.rt.pane_views.naming_generation
        ref = self.rt.session.find_pane(self.pane_id)
        proc = None if ref is None else self.rt.processes.get(ref.pane.key)
        self.output = None if proc is None else proc.output
        if ref is None or proc is None:
            return None
        terminal = proc.terminal
        state = (terminal.changes, terminal.offset_from_bottom())
        seen = (ref.pane.key, id(terminal), *state)
        self.marks = (proc.output.fired, self.rt.pane_views.changed.fired)
        if seen == self.seen:
            return None
        self.seen = seen
        text, truncated, line = await _answer(terminal, state, self.question, self.matcher)
        if line is None:
            self.matching = False
            return None
        if self.matching:
            return None
        self.matching = True
        # one envelope for every stream that asked the same question of this pane state, so
        # the server encodes it once (herdr_sim/event_lines.py)
        kept = _envelopes.get(terminal)
        if kept is None or kept[0] != state:
            kept = (state, {})
            _envelopes[terminal] = kept
        key = (self.question, ref.pane_id)
        envelope = kept[1].get(key)
        if envelope is None:
            result = read_result(ref, self.source, "text", text, truncated)
            data = {"pane_id": result["pane_id"], "matched_line": line, "read": result}
            envelope = kept[1][key] = {"event": "pane.output_matched", "data": data}
        return envelope

    def settled(self) -> bool:
        """Whether the pane the last poll read is still the one named and its terminal
        shows what that poll saw: then this poll can only be silent, and it skips the pane
        lookup too (fifty streams looked up every watched pane whenever any one printed). The
        stream asks it before it awaits :meth:`poll`, so a quiet pane costs no coroutine."""
        output = self.output
        if output is not None and self.marks == (output.fired, self.rt.pane_views.changed.fired):
            return True
        if self.seen is None or self.looked_up != self.rt.pane_views.naming_generation:
            return False
        key, terminal_id, changes, offset = self.seen
        proc = self.rt.processes.get(key)
        if proc is None or id(proc.terminal) != terminal_id or proc.terminal.changes != changes:
            return False
        return proc.terminal.offset_from_bottom() == offset


class ScrollSubscription:
    """``pane.scroll_changed``: the pane's scroll snapshot differs from the last one seen."""

    def __init__(self, rt: Runtime, probe: dict[str, Any]) -> None:
        self.rt = rt
        self.pane_id: str = probe["pane_id"]
        self.last: dict[str, int] | None = probe.get("scroll")
        #: as :attr:`OutputSubscription.output`
        self.output: Signal | None = None

    async def poll(self) -> Envelope | None:
        ref = self.rt.session.find_pane(self.pane_id)
        proc = None if ref is None else self.rt.processes.get(ref.pane.key)
        self.output = None if proc is None else proc.output
        if ref is None:
            return None
        scroll = None if proc is None else proc.terminal.scroll_metrics().view()
        if scroll == self.last:
            return None
        self.last = scroll
        if scroll is None:
            return None
        data = {"pane_id": ref.pane_id, "workspace_id": ref.workspace.public_id, "scroll": scroll}
        return {"event": "pane.scroll_changed", "data": data}
