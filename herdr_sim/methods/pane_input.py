"""``pane.input.set``: where a pane's right-clicks go.

Herdr (``src/app/api/panes.rs`` ``handle_pane_input_set``) resolves the pane
(``pane_not_found`` "pane <id> not found"), stores ``right_click == "pane"`` as the pane's
right-click passthrough and answers ``ok``. Only a client's mouse handling reads the
setting, so nothing else changes; the simulator keeps it on the pane
(:attr:`herdr_sim.model.session.Pane.right_click`), as ``pane.split`` does.
"""

from __future__ import annotations

from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.params import Enum, F, Obj

from .specs import REQ_STR

RIGHT_CLICK_TARGET = Enum(values=("herdr", "pane"))


@method(
    "pane.input.set",
    Obj(fields={"pane_id": REQ_STR, "right_click": F(RIGHT_CLICK_TARGET, required=True)}),
    result="ok",
    mutates=False,
)
async def input_set(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Route the pane's right-clicks to Herdr's menu or to the program in the pane."""
    rt.pane(p["pane_id"]).pane.right_click = p["right_click"]
    return {"type": "ok"}
