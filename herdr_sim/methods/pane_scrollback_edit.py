"""``pane.edit_scrollback``: a pane's scrollback opened in ``$EDITOR`` in a real editor pane.

Herdr 0.8.2 does this on ``prefix+e`` (``launch_focused_scrollback_editor`` in
``src/app/input/navigate.rs``; its test
``edit_scrollback_key_preserves_logical_lines_in_editor_pane``):
the pane's whole retained text with soft wraps joined (``recent_unwrapped_text_snapshot(
usize::MAX)``) is written to a new 0600 file ``herdr-scrollback-<pid>-<nanos>-<n>.txt`` in
the temp dir, and an overlay pane runs ``/bin/sh -c`` with the editor
(``scrollback_editor_argv`` in ``src/platform/linux.rs``: ``${EDITOR:-vi}``, the file removed
when the editor exits). The overlay is Herdr's ``spawn_overlay_argv_command``: a split of
the pane, focused and zoomed, the tab given back when the editor exits (as the simulator's
plugin overlays do). The protocol-22 method (Herdr 0.9) has no handler in 0.8.2; it targets
the named pane instead of the focused one and answers ``ok``.
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path
from typing import Any

from herdr_sim.registry import method
from herdr_sim.services import lifecycle
from herdr_sim.services.runtime import Runtime
from herdr_sim.wire.errors import EDIT_SCROLLBACK_FAILED, HerdrError
from orchestrator.client.file_trust.private_files import publish_new

from ..model.session import PaneRef
from .plugin_panes import _watch_overlay as watch_overlay
from .specs import PANE_TARGET


def write_scrollback_file(text: str, temp_dir: Path) -> Path:
    """A new file only we can read, never an existing path (``create_new``, 16 tries)."""
    last: OSError | None = None
    data = text.encode("utf-8")
    for attempt in range(16):
        name = f"herdr-scrollback-{os.getpid()}-{time.time_ns()}-{attempt}.txt"
        try:
            publish_new(temp_dir, name, data, sync=False)  # whole before the editor opens it
        except FileExistsError as exc:
            last = exc
            continue
        return temp_dir / name
    raise last or FileExistsError("no free scrollback file name")


def editor_argv(path: Path) -> list[str]:
    """``/bin/sh -c`` running ``${EDITOR:-vi}`` on the file, then removing it."""
    script = (
        f"scrollback_file={shlex.quote(str(path))}; "
        'eval "${EDITOR:-vi} \\"\\$scrollback_file\\""; status=$?; '
        'rm -f "$scrollback_file"; exit $status'
    )
    return ["/bin/sh", "-c", script]


def _remove_when_closed(rt: Runtime, key: int, path: Path) -> None:
    """Herdr hands the file to the overlay as a temp file: it goes with the pane."""

    def on_event(_envelope: dict[str, Any]) -> None:
        if key in rt.session.panes:
            return
        rt.hub.remove_listener(on_event)
        path.unlink(missing_ok=True)

    rt.hub.add_listener(on_event)


@method("pane.edit_scrollback", PANE_TARGET, result="ok")
async def edit_scrollback(rt: Runtime, p: dict[str, Any]) -> dict[str, Any]:
    """Open the pane's scrollback in an editor overlay pane."""
    target = rt.pane(p["pane_id"])
    text = rt.process(target).terminal.scrollback_text()
    temp_dir = Path(rt.config.base_env.get("TMPDIR") or "/tmp")
    try:
        path = write_scrollback_file(text, temp_dir)
    except OSError as exc:
        raise HerdrError(EDIT_SCROLLBACK_FAILED, str(exc)) from None
    previous_zoomed = target.tab.layout.zoomed
    cwd = rt.live_cwd(target)
    new = rt.session.split(target, "right", None, cwd, True)
    ref = PaneRef(target.workspace, target.tab, new)
    new.launch_argv = editor_argv(path)
    try:
        rt.spawn(ref, {})
    except OSError as exc:
        rt.session.close_pane(ref)
        rt.resize_tab(target.workspace, target.tab)
        path.unlink(missing_ok=True)
        raise HerdrError(EDIT_SCROLLBACK_FAILED, str(exc)) from None
    target.tab.layout.set_zoom("on", new.key)
    watch_overlay(rt, ref, target.pane.key, previous_zoomed)
    _remove_when_closed(rt, new.key, path)
    rt.resize_tab(target.workspace, target.tab)
    rt.hub.publish(lifecycle.pane_created(rt.pane_view(ref)))
    rt.hub.publish(lifecycle.layout_updated(rt.layout_view(ref.workspace, ref.tab)))
    return {"type": "ok"}
