"""``pane.graphics.info``/``set``/``clear``: pane graphics layers without a client.

Herdr (``src/app/api/pane_graphics.rs``) gates all three on ``experimental.kitty_graphics``,
off by default, and answers ``feature_disabled`` before looking at the pane; the simulator's
``SimulatorConfig.kitty_graphics`` is that switch. Switched on, with no client attached:

* ``info`` resolves the pane and then fails with ``cell_size_unavailable`` "host cell size
  is unavailable": the cell size comes from an attached client's terminal.
* ``set`` validates the layer id (1–64 of ``[A-Za-z0-9._:-]``, default ``primary``), the
  layer limits (16 per pane, 64 in all), the image (non-zero size, valid base64, not empty,
  at most 512 KiB, exactly width×height×3/4 bytes for ``rgb``/``rgba``/``bgra``) and the
  64 MiB inline budget, in Herdr's order, then stores the layer: ``ok``.
* ``clear`` validates the layer id and removes the layer if there is one: ``ok``.

The simulator keeps only each layer's size (nothing draws it); layers of closed panes are
dropped like Herdr's ``retain_live_panes`` does.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Enum, F, Int, Kind, Nullable, Obj, ParamError, Str

from .specs import OPT_STR, PANE_TARGET, REQ_STR

PRIMARY_LAYER = "primary"
MAX_LAYERS_PER_PANE = 16
MAX_LAYERS_TOTAL = 64
SET_MAX_BYTES = 512 * 1024
MAX_INLINE_BYTES_TOTAL = 64 * 1024 * 1024
_BYTES_PER_PIXEL = {"rgb": 3, "rgba": 4, "bgra": 4}
_LAYER_ID = re.compile(r"[A-Za-z0-9._:-]+")


class _I32(Kind):
    """A signed 32-bit integer (``i32``)."""

    expected = "i32"

    def check(self, value: Any, where: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.mismatch(value)
        if not -(2**31) <= value < 2**31:
            raise ParamError(f"invalid value: integer `{value}`, expected i32")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "integer", "format": "int32"}


_PLACEMENT = Obj(
    fields={
        "grid_cols": F(Int(32), default=0),
        "grid_rows": F(Int(32), default=0),
        "viewport_col": F(_I32(), default=0),
        "viewport_row": F(_I32(), default=0),
    }
)
SET_PARAMS = Obj(
    fields={
        "pane_id": REQ_STR,
        "layer_id": OPT_STR,
        "format": F(Enum(values=("png", "rgb", "rgba", "bgra")), required=True),
        "image_width": F(Int(32), required=True),
        "image_height": F(Int(32), required=True),
        "data_base64": F(Str(), default=""),
        "placement": F(_PLACEMENT, default=lambda: _PLACEMENT.check({}, "placement")),
        "z_index": F(_I32(), default=0),
    }
)
CLEAR_PARAMS = Obj(fields={"pane_id": REQ_STR, "layer_id": F(Nullable(Str()))})


def _require_enabled(rt: Runtime) -> None:
    if not rt.config.kitty_graphics:
        raise HerdrError(
            errors.FEATURE_DISABLED, "pane graphics require experimental.kitty_graphics"
        )


def _pane_key(rt: Runtime, pane_id: str) -> int:
    """The pane's key (``pane_not_found`` "pane <id> not found"), after dropping the layers
    of panes that are gone."""
    key = rt.pane(pane_id).pane.key
    for gone in [k for k in rt.graphics if k[0] not in rt.session.panes]:
        del rt.graphics[gone]
    return key


def _layer_key(key: int, layer_id: str | None) -> tuple[int, str]:
    layer = PRIMARY_LAYER if layer_id is None else layer_id
    if not layer or len(layer.encode()) > 64:
        raise HerdrError(
            errors.INVALID_LAYER_ID, "layer_id must contain between 1 and 64 characters"
        )
    if not _LAYER_ID.fullmatch(layer):
        raise HerdrError(errors.INVALID_LAYER_ID, "layer_id contains unsupported characters")
    return key, layer


def _invalid_image(message: str) -> HerdrError:
    return HerdrError(errors.INVALID_IMAGE, message)


@method("pane.graphics.info", PANE_TARGET, result="pane_graphics_info", mutates=False)
async def info(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Cell size and limits for a graphics producer; no client, so no cell size."""
    _require_enabled(rt)
    _pane_key(rt, p["pane_id"])
    raise HerdrError(errors.CELL_SIZE_UNAVAILABLE, "host cell size is unavailable")


@method("pane.graphics.set", SET_PARAMS, result="ok", mutates=False)
async def set_(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Store one image layer of a pane."""
    _require_enabled(rt)
    layer = _layer_key(_pane_key(rt, p["pane_id"]), p["layer_id"])
    exists = layer in rt.graphics
    if not exists and (
        len(rt.graphics) >= MAX_LAYERS_TOTAL
        or sum(1 for k in rt.graphics if k[0] == layer[0]) >= MAX_LAYERS_PER_PANE
    ):
        raise HerdrError(errors.LAYER_LIMIT, "pane graphics layer limit reached")
    width, height = p["image_width"], p["image_height"]
    if width == 0 or height == 0:
        raise _invalid_image("image_width and image_height must be greater than zero")
    per_pixel = _BYTES_PER_PIXEL.get(p["format"])
    if per_pixel is not None and width * height * per_pixel >= 2**64:
        raise _invalid_image("image dimensions are too large")  # usize overflow in Herdr
    try:
        data = base64.b64decode(p["data_base64"], validate=True)
    except (binascii.Error, ValueError):
        raise _invalid_image("data_base64 is not valid base64") from None
    if not data:
        raise _invalid_image("image data must not be empty")
    if len(data) > SET_MAX_BYTES:
        raise HerdrError(errors.IMAGE_TOO_LARGE, "image data is too large")
    if per_pixel is not None and width * height * per_pixel != len(data):
        raise _invalid_image("image data does not match the frame contract")
    inline = sum(rt.graphics.values()) - rt.graphics.get(layer, 0) + len(data)
    if inline > MAX_INLINE_BYTES_TOTAL:
        raise HerdrError(
            errors.GRAPHICS_BUDGET_EXCEEDED, "pane graphics inline memory limit reached"
        )
    rt.graphics[layer] = len(data)
    return {"type": "ok"}


@method("pane.graphics.clear", CLEAR_PARAMS, result="ok", mutates=False)
async def clear(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Remove one image layer of a pane (absent is fine)."""
    _require_enabled(rt)
    layer = _layer_key(_pane_key(rt, p["pane_id"]), p["layer_id"])
    rt.graphics.pop(layer, None)
    return {"type": "ok"}
