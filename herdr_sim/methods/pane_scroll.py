"""``pane.scroll``: move a pane's viewport, as headless Herdr does without a client.

The viewport lives on the pane's :class:`herdr_sim.terminal.Terminal` (its only home):
the request sets its offset from the bottom, clamped to the history (an overshoot lands
at the top; the alternate screen has no history and stays at ``0``), and answers the pane
with its ``scroll`` after the move. The change shows in ``PaneInfo.scroll``, in the
``visible`` read (the rows the viewport shows) and in ``pane.scroll_changed``
subscriptions, which compare the pane's scroll snapshot on each poll (Herdr's
``src/api/subscriptions.rs``). Herdr's source for the move is ``set_scroll_offset_from_bottom``
in ``src/pane/terminal.rs``; the request and the metrics are protocol 22's
``PaneScrollParams`` and ``PaneScrollInfo``.
"""

from __future__ import annotations

from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.params import F, Int, Obj

from .specs import REQ_STR

SCROLL_PARAMS = Obj(fields={"pane_id": REQ_STR, "offset_from_bottom": F(Int(64), required=True)})


@method("pane.scroll", SCROLL_PARAMS, result="pane_info", mutates=False)
async def scroll(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Scroll a pane's viewport to ``offset_from_bottom`` rows above the bottom."""
    ref = rt.pane(p["pane_id"])
    rt.process(ref).terminal.set_scroll_offset(p["offset_from_bottom"])
    rt.state_changed.fire()
    return {"type": "pane_info", "pane": rt.pane_view(ref)}
