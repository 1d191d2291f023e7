"""``pane.selection.read``, ``pane.copy_motion``, ``pane.copy_search``: copy mode over the API.

These are Herdr 0.9's client-shell endpoints for copy mode: the client keeps the cursor and
the selection, the server reads the pane. Their handlers are not in Herdr 0.8.2 (the newest
source we can read); what they compute is the TUI's copy mode of 0.8.2 (``src/app/input/
copy_mode.rs`` and ``RetainedTextBuffer`` in ``src/pane/terminal.rs``), which
:class:`herdr_sim.terminal.PaneText` reproduces on the pane's own rows:

* points are ``PaneTextPoint {row, col}`` with ``row`` absolute (0 = the oldest history
  row, as copy mode's ``viewport_top_row`` + viewport row), so they do not move when the
  viewport scrolls;
* ``content_revision`` is the pane terminal's change counter
  (:attr:`herdr_sim.terminal.Terminal.changes`); ``copy_motion``/``copy_search`` answer it,
  and a request carrying an older one is refused (``content_revision_mismatch``), since its
  rows may no longer hold the text the client saw ("validated against the pane's content
  revision", the schema's ``CommandInvokeParams.selection``);
* a point outside the pane's rows or columns is ``invalid_params``.

The refusal's code and the point check are the simulator's choice (docs/simulator/fidelity.md).
"""

from __future__ import annotations

import asyncio
from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.errors import CONTENT_REVISION_MISMATCH, INVALID_PARAMS, HerdrError
from herdr_sim.wire.params import Enum, F, Int, Nullable, Obj

from ..model.session import PaneRef
from ..terminal import PaneText, Terminal, TextMatch, TextPoint
from .specs import OPT_U64, REQ_STR

POINT = Obj(fields={"row": F(Int(32), required=True), "col": F(Int(16), required=True)})
RANGE = Obj(fields={"start": F(POINT, required=True), "end": F(POINT, required=True)})
MOTION = Enum(
    values=(
        "line_end",
        "first_non_blank",
        "next_word_start",
        "previous_word_start",
        "next_word_end",
        "next_big_word_start",
        "previous_big_word_start",
        "next_big_word_end",
        "previous_paragraph",
        "next_paragraph",
    )
)
DIRECTION = Enum(values=("forward", "backward"))


def checked_revision(terminal: Terminal, given: int | None) -> int:
    """The pane's content revision now; a different ``given`` one is refused."""
    current = terminal.changes
    if given is not None and given != current:
        raise HerdrError(
            CONTENT_REVISION_MISMATCH,
            f"pane content changed: content revision {given} is stale (now {current})",
        )
    return current


def checked_pane(rt: Runtime, p: dict[str, Any]) -> tuple[PaneRef, Terminal, int]:
    """The request's pane, its terminal and content revision; every copy-mode method checks
    a stale ``content_revision`` first."""
    ref = rt.pane(p["pane_id"])
    terminal = rt.process(ref).terminal
    return ref, terminal, checked_revision(terminal, p["content_revision"])


def point_of(raw: dict[str, Any]) -> TextPoint:
    return TextPoint(raw["row"], raw["col"])


def point_view(point: TextPoint) -> dict[str, int]:
    return {"row": point.row, "col": point.col}


def _inside(text: PaneText, point: TextPoint, name: str) -> TextPoint:
    if not text.contains(point):
        raise HerdrError(
            INVALID_PARAMS,
            f"{name} {point.row}:{point.col} is outside the pane's text "
            f"({text.total_rows} rows of {text.cols} columns)",
        )
    return point


@method(
    "pane.selection.read",
    Obj(
        fields={
            "pane_id": REQ_STR,
            "anchor": F(POINT, required=True),
            "cursor": F(POINT, required=True),
            "content_revision": OPT_U64,
        }
    ),
    result="pane_selection",
    mutates=False,
)
async def selection_read(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """The text between two points, both included (copy mode's yank)."""
    ref, terminal, _ = checked_pane(rt, p)
    text = terminal.text()
    anchor = _inside(text, point_of(p["anchor"]), "anchor")
    cursor = _inside(text, point_of(p["cursor"]), "cursor")
    return {
        "type": "pane_selection",
        "pane_id": ref.pane_id,
        "text": text.selection_text(anchor, cursor),
    }


@method(
    "pane.copy_motion",
    Obj(
        fields={
            "pane_id": REQ_STR,
            "cursor": F(POINT, required=True),
            "motion": F(MOTION, required=True),
            "content_revision": OPT_U64,
        }
    ),
    result="pane_copy_motion",
    mutates=False,
)
async def copy_motion(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Where one copy-mode motion takes the cursor; where Herdr does not move, it stays."""
    ref, terminal, revision = checked_pane(rt, p)
    text = terminal.text()
    cursor = _inside(text, point_of(p["cursor"]), "cursor")
    motion = p["motion"]
    target: TextPoint | None
    if motion == "line_end":
        target = text.line_end(cursor)
    elif motion == "first_non_blank":
        target = text.first_non_blank(cursor)
    elif motion in ("previous_paragraph", "next_paragraph"):
        metrics = terminal.scroll_metrics()
        limit = metrics.max_offset_from_bottom + metrics.viewport_rows
        target = text.paragraph(cursor, -1 if motion == "previous_paragraph" else 1, limit)
    else:
        target = text.word_motion(cursor, motion)
    return {
        "type": "pane_copy_motion",
        "pane_id": ref.pane_id,
        "cursor": point_view(target or cursor),
        "content_revision": revision,
    }


def current_match(
    matches: list[TextMatch], forward: bool, cursor: TextPoint, previous: TextMatch | None
) -> int | None:
    """Herdr's ``search_match_index``: the first match past the cursor (or past the previous
    match when repeating), wrapping around; backward the last one before it."""
    if not matches:
        return None
    if forward:
        origin = previous.end if previous is not None else cursor
        return next((i for i, m in enumerate(matches) if m.start > origin), 0)
    origin = previous.start if previous is not None else cursor
    return next(
        (i for i in range(len(matches) - 1, -1, -1) if matches[i].end < origin),
        len(matches) - 1,
    )


@method(
    "pane.copy_search",
    Obj(
        fields={
            "pane_id": REQ_STR,
            "query": REQ_STR,
            "direction": F(DIRECTION, required=True),
            "cursor": F(POINT, required=True),
            "content_revision": F(Int(64), required=True),
            "previous": F(Nullable(RANGE)),
        }
    ),
    result="pane_copy_search",
    mutates=False,
)
async def copy_search(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Literal smart-case search of the pane's rows, and the match the cursor goes to.

    ``previous`` is the match a repeat (``n``/``N``) starts from; like Herdr, it counts only
    when it starts at the cursor and is still a match."""
    ref, terminal, revision = checked_pane(rt, p)
    text = terminal.text()
    cursor = _inside(text, point_of(p["cursor"]), "cursor")
    # a query matching everywhere in a long history takes a while: off the event loop
    matches = await asyncio.to_thread(text.search, p["query"])
    previous: TextMatch | None = None
    if p["previous"] is not None:
        given = TextMatch(point_of(p["previous"]["start"]), point_of(p["previous"]["end"]))
        if given.start == cursor and given in matches:
            previous = given
    current = current_match(matches, p["direction"] == "forward", cursor, previous)
    result: dict[str, Any] = {
        "type": "pane_copy_search",
        "pane_id": ref.pane_id,
        "content_revision": revision,
        "matches": [{"start": point_view(m.start), "end": point_view(m.end)} for m in matches],
        "total": len(matches),
    }
    if current is not None:
        result["current"] = current
        result["current_global"] = current
    return result
