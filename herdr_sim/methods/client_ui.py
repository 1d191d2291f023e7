"""Methods aimed at an attached client's UI, answered as headless Herdr answers them.

The simulator, like a Herdr server nobody attached to, has no foreground client and no popup:

* ``client.window_title.set``/``clear`` (``src/server/headless.rs``
  ``handle_client_window_title_api``): the title is sanitised first (``ESC``, ``BEL``,
  ``U+009C`` and every control character dropped, at most 200 characters, then trimmed;
  ``src/config/window_title.rs`` ``sanitize_window_title_text``); nothing left is
  ``invalid_params`` "window title is empty". Otherwise the title is kept for a client
  that attaches later, and with no client to send it to the answer is
  ``changed: false, reason: "no_foreground_client"``.
* ``popup.close`` (``src/app/api.rs``): ``popup_not_open`` "no popup is open" when no popup
  pane is open, and the simulator never opens one.
* ``server.reload_config`` (``src/server/headless.rs`` ``reload_server_config`` →
  ``src/app/mod.rs`` ``apply_config_from_disk``): the simulator has no ``config.toml``, and
  Herdr without one applies its defaults (``src/config/io.rs`` ``load_live_config``):
  ``status: "applied"`` with no diagnostics.
"""

from __future__ import annotations

from typing import Any

from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire import errors
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import Obj
from orchestrator.client.protocol import RUST_WHITESPACE
from orchestrator.client.untrusted_text import strip_control

from .specs import EMPTY, REQ_STR

#: ``MAX_WINDOW_TITLE_CHARS``
WINDOW_TITLE_MAX = 200


def sanitize_window_title(text: str) -> str | None:
    """Herdr's window-title rule; None when nothing is left."""
    title = strip_control(text)[:WINDOW_TITLE_MAX].strip(RUST_WHITESPACE)
    return title or None


def _no_client() -> dict[str, Any]:
    return {"type": "client_window_title", "changed": False, "reason": "no_foreground_client"}


@method(
    "client.window_title.set",
    Obj(fields={"title": REQ_STR}),
    result="client_window_title",
    mutates=False,
)
async def window_title_set(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Keep an explicit outer-window title; no client is attached to show it."""
    title = sanitize_window_title(p["title"])
    if title is None:
        raise HerdrError(errors.INVALID_PARAMS, "window title is empty")
    rt.window_title = title
    return _no_client()


@method("client.window_title.clear", EMPTY, result="client_window_title", mutates=False)
async def window_title_clear(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Drop the explicit title; no client is attached to restore the configured one."""
    rt.window_title = None
    return _no_client()


@method("popup.close", EMPTY, result="ok", mutates=False)
async def popup_close(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Close the popup pane; there is none in the simulator."""
    raise HerdrError(errors.POPUP_NOT_OPEN, "no popup is open")


@method("server.reload_config", EMPTY, result="config_reload", mutates=False)
async def reload_config(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Reload ``config.toml``: there is none, so Herdr's defaults apply."""
    return {"type": "config_reload", "status": "applied", "diagnostics": []}
