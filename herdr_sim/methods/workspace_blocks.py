"""``workspace.move_block``: move several workspaces together, as Herdr's sidebar does.

Herdr (``src/app/api/workspaces.rs`` ``handle_workspace_move_block``, ``src/app/actions.rs``
``move_workspace_block``) resolves every id first, refuses an empty list, a workspace named
twice and a ``before_workspace_id`` inside the block (``workspace_move_block_failed``),
then takes the block out of the order, inserts it in the order given before
``before_workspace_id`` (or at the end) and answers the new list. ``workspace_reordered``
is emitted only when the order changed; the active workspace stays active. Nothing here
needs a TUI client.
"""

from __future__ import annotations

from typing import Any

from herdr_sim.registry import method
from herdr_sim.services import lifecycle
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import F, ListOf, Obj, Str

from ..model.session import Workspace
from .specs import OPT_STR

MOVE_BLOCK_FAILED = errors.WORKSPACE_MOVE_BLOCK_FAILED


def _reorder(rt: Runtime, block: list[Workspace], before: Workspace | None) -> bool:
    """Put ``block`` (in its order) before ``before`` or at the end; whether it changed."""
    workspaces = rt.session.workspaces
    rest = [ws for ws in workspaces if all(ws is not moved for moved in block)]
    at = len(rest) if before is None else rest.index(before)
    order = rest[:at] + block + rest[at:]
    if all(a is b for a, b in zip(order, workspaces, strict=True)):
        return False
    active = rt.session.active_workspace
    workspaces[:] = order
    if active is not None:
        rt.session.active = workspaces.index(active)
    return True


@method(
    "workspace.move_block",
    Obj(fields={"workspace_ids": F(ListOf(Str()), required=True), "before_workspace_id": OPT_STR}),
    result="workspace_list",
)
async def move_block(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Move a block of workspaces before another one (or to the end)."""
    if not p["workspace_ids"]:
        raise HerdrError(MOVE_BLOCK_FAILED, "workspace_ids must not be empty")
    block: list[Workspace] = []
    for requested in p["workspace_ids"]:
        ws = rt.workspace(requested)
        if any(ws is seen for seen in block):
            raise HerdrError(MOVE_BLOCK_FAILED, f"workspace {requested} appears more than once")
        block.append(ws)
    before = None
    if p["before_workspace_id"] is not None:
        before = rt.workspace(p["before_workspace_id"])
        if any(before is moved for moved in block):
            raise HerdrError(
                MOVE_BLOCK_FAILED, "before_workspace_id must not be part of workspace_ids"
            )
    moved = _reorder(rt, block, before)
    views = [rt.workspace_view(ws) for ws in rt.session.workspaces]
    if moved:
        rt.hub.publish(
            lifecycle.workspace_reordered(
                [ws.public_id for ws in block],
                None if before is None else before.public_id,
                views,
            )
        )
    return {"type": "workspace_list", "workspaces": views}
