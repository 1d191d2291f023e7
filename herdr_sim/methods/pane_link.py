"""``pane.link.activate``: the URL under a pane cell, handed to a plugin's link handler.

Herdr 0.8.2's TUI does this on a modified click (``handle_modified_url_click_with`` in
``src/app/input/mod.rs``): ``url_at_pane_cell`` (``src/app/actions.rs``) finds the web URL
under the cell (an OSC 8 hyperlink first, else an ``http(s)://`` run in the visible text,
soft wraps joined), then ``invoke_plugin_link_handler_for_url``
(``src/app/api/plugins/mod.rs``) runs the action of the first enabled plugin (by id) whose
link handler's pattern matches it, with ``invocation_source``/``clicked_url``/
``link_handler_id`` in the context; only when no handler takes it does the TUI open the URL
itself. The protocol-22 method has no handler in 0.8.2; the simulator answers
``pane_link_activated`` with ``handled: true`` when a plugin action was started, and
``handled: false`` with the ``url`` otherwise, leaving the opening to the client (a server
without a client has nowhere to open it); no URL under the cell is ``handled: false`` without
``url``. ``viewport_row`` counts from the top of the viewport the client shows
(``offset_from_bottom``, default the pane's own). The simulator's terminal keeps no OSC 8
hyperlinks, so only URLs written as text are found (docs/simulator/fidelity.md).
"""

from __future__ import annotations

import logging
from typing import Any

from herdr_sim.herdr_plugins.registry import PluginError, effective_platforms, manifest_available
from herdr_sim.registry import method
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.errors import HerdrError
from herdr_sim.wire.params import F, Int, Obj

from ..model.session import PaneRef
from ..terminal import TextPoint
from .pane_copy import checked_pane
from .plugins import HOST_PLATFORM, host, pane_context, start_command
from .specs import OPT_U64, REQ_STR

log = logging.getLogger(__name__)


def _supported(item: dict[str, Any], plugin: dict[str, Any]) -> bool:
    platforms = effective_platforms(item, plugin)
    return platforms is None or HOST_PLATFORM in platforms


def _link_handler(rt: Runtime, url: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Herdr's ``find_plugin_link_handler``: enabled plugins by id, handlers in manifest
    order, platform-supported handler and action, pattern matching the URL."""
    from ..regex import RustRegexError, compile_rust_regex

    plugins = [p for p in host(rt).registry.load() if p["enabled"] and manifest_available(p)]
    plugins.sort(key=lambda plugin: str(plugin["plugin_id"]))
    for plugin in plugins:
        for handler in plugin.get("link_handlers", ()):
            if not _supported(handler, plugin):
                continue
            actions = plugin.get("actions", ())
            action = next((a for a in actions if a["id"] == handler["action"]), None)
            if action is None or not _supported(action, plugin):
                continue
            try:
                if compile_rust_regex(handler["pattern"]).search(url):
                    return plugin, handler, action
            except RustRegexError:
                continue
    raise LookupError(url)


def _invoke_handler(rt: Runtime, ref: PaneRef, url: str) -> bool:
    """Start the matching handler's action; False when none takes the URL or it fails to
    start (Herdr then opens the URL itself)."""
    try:
        plugin, handler, action = _link_handler(rt, url)
    except LookupError:
        return False
    except (OSError, ValueError, PluginError) as exc:
        log.warning("plugin registry unreadable, link handlers skipped: %s", exc)
        return False
    context = pane_context(rt, ref, "link_click")
    context |= {
        "invocation_source": "link_click",
        "clicked_url": url,
        "link_handler_id": handler["id"],
    }
    try:
        start_command(rt, plugin, action["command"], context, action_id=action["id"])
    except HerdrError as exc:
        log.warning("plugin link handler %s not started: %s", handler["id"], exc)
        return False
    return True


@method(
    "pane.link.activate",
    Obj(
        fields={
            "pane_id": REQ_STR,
            "viewport_row": F(Int(16), required=True),
            "col": F(Int(16), required=True),
            "content_revision": OPT_U64,
            "offset_from_bottom": OPT_U64,
        }
    ),
    result="pane_link_activated",
    mutates=False,
)
async def link_activate(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Activate the link under a viewport cell of a pane."""
    ref, terminal, _ = checked_pane(rt, p)
    metrics = terminal.scroll_metrics()
    offset = metrics.offset_from_bottom
    if p["offset_from_bottom"] is not None:
        offset = min(p["offset_from_bottom"], metrics.max_offset_from_bottom)
    top = metrics.max_offset_from_bottom - offset
    url: str | None = None
    if p["viewport_row"] < metrics.viewport_rows and p["col"] < terminal.cols:
        point = TextPoint(top + p["viewport_row"], p["col"])
        url = terminal.text().url_at(point, top, top + metrics.viewport_rows)
    if url is None:
        return {"type": "pane_link_activated", "handled": False}
    handled = _invoke_handler(rt, ref, url)
    return {"type": "pane_link_activated", "handled": handled, "url": url}
