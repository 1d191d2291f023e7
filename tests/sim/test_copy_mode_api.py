"""Copy mode over the wire: ``pane.selection.read``, ``pane.copy_motion``, ``pane.copy_search``,
``pane.link.activate`` and ``pane.edit_scrollback`` (protocol 22).

Herdr 0.8.2 has no handler for them; each test cites the TUI code whose result the method
gives (``src/app/input/copy_mode.rs``, ``src/pane/terminal.rs``, ``src/app/actions.rs``,
``src/app/input/mod.rs``, ``src/app/api/plugins/mod.rs``, ``src/app/input/navigate.rs``).
Every response is checked against the protocol-22 schema by ``tests/conftest.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from herdr_sim.client import RequestFailed, call
from herdr_sim.methods.pane_scrollback_edit import editor_argv
from herdr_sim.registry import UNSUPPORTED
from herdr_sim.simulator import Simulator
from tests.sim.test_plugins import MANIFEST, config_dir, make_plugin
from tests.waits import wait_until

Api = Callable[..., dict[str, Any]]


def _pane_with(api: Api, text: str) -> str:
    """A fresh pane whose screen shows ``text`` (printed by the shell, prompt cleared)."""
    api("workspace.create", focus=True)
    pane: str = api("pane.current")["pane"]["pane_id"]
    api("pane.send_text", pane_id=pane, text=f"clear; printf '{text}'; read x\n")
    first = text.split("\\n")[0]
    wait_until(
        lambda: api("pane.read", pane_id=pane, source="visible")["read"]["text"].startswith(first),
        what="the text on screen",
    )
    return pane


def _top(api: Api, pane: str) -> int:
    scroll = api("pane.get", pane_id=pane)["pane"]["scroll"]
    top: int = scroll["max_offset_from_bottom"] - scroll["offset_from_bottom"]
    return top


def test_the_copy_mode_methods_are_implemented() -> None:
    for name in (
        "pane.selection.read",
        "pane.copy_motion",
        "pane.copy_search",
        "pane.link.activate",
        "pane.edit_scrollback",
    ):
        assert name not in UNSUPPORTED


def test_selection_read_answers_the_live_clients_request(api: Api) -> None:
    """herdr-client's live test against real Herdr: ``{pane_id, anchor {0,0}, cursor {0,1}}``
    → ``pane_selection``; rows are absolute (``viewport_top_row`` + viewport row in
    ``copy_mode.rs``), both cells included (``ghostty_extract_selection``)."""
    pane = _pane_with(api, "hello world\\nsecond line\\n")
    top = _top(api, pane)
    result = api(
        "pane.selection.read",
        pane_id=pane,
        anchor={"row": top, "col": 0},
        cursor={"row": top, "col": 1},
    )
    assert result == {"type": "pane_selection", "pane_id": pane, "text": "he"}
    both = api(
        "pane.selection.read",
        pane_id=pane,
        anchor={"row": top + 1, "col": 5},
        cursor={"row": top, "col": 6},
    )
    assert both["text"] == "world\nsecond"


def test_copy_motion_moves_like_copy_mode_and_answers_the_content_revision(api: Api) -> None:
    """``copy_mode_word_motions_use_visible_row_words`` (w → 4, e → 6) and ``$``."""
    pane = _pane_with(api, "foo bar baz\\n")
    top = _top(api, pane)
    first = api(
        "pane.copy_motion",
        pane_id=pane,
        cursor={"row": top, "col": 0},
        motion="next_word_start",
    )
    assert first["cursor"] == {"row": top, "col": 4}
    revision = first["content_revision"]
    end = api(
        "pane.copy_motion",
        pane_id=pane,
        cursor=first["cursor"],
        motion="next_word_end",
        content_revision=revision,
    )
    assert (end["cursor"], end["content_revision"]) == ({"row": top, "col": 6}, revision)
    line_end = api("pane.copy_motion", pane_id=pane, cursor=end["cursor"], motion="line_end")
    assert line_end["cursor"] == {"row": top, "col": 10}


def test_a_stale_content_revision_or_a_point_outside_the_text_is_refused(api: Api) -> None:
    """The schema: selections are "validated against the pane's content revision"."""
    pane = _pane_with(api, "abc\\n")
    top = _top(api, pane)
    revision = api(
        "pane.copy_motion", pane_id=pane, cursor={"row": top, "col": 0}, motion="line_end"
    )["content_revision"]
    api("pane.send_text", pane_id=pane, text="more\n")
    wait_until(
        lambda: "more" in api("pane.read", pane_id=pane, source="visible")["read"]["text"],
        what="new output",
    )
    with pytest.raises(RequestFailed) as stale:
        api(
            "pane.selection.read",
            pane_id=pane,
            anchor={"row": top, "col": 0},
            cursor={"row": top, "col": 2},
            content_revision=revision,
        )
    assert stale.value.code == "content_revision_mismatch"
    with pytest.raises(RequestFailed) as outside:
        api(
            "pane.selection.read",
            pane_id=pane,
            anchor={"row": 100_000, "col": 0},
            cursor={"row": 0, "col": 0},
        )
    assert outside.value.code == "invalid_params"


def test_copy_search_finds_every_match_and_the_current_one(api: Api) -> None:
    """``copy_mode_search_wraps_and_repeats_in_both_directions``: forward from below the
    last match wraps to the first; a repeat from the current match goes to the next."""
    pane = _pane_with(api, "alpha needle\\nbeta needle\\ngamma\\n")
    top = _top(api, pane)
    revision = api(
        "pane.copy_motion", pane_id=pane, cursor={"row": top, "col": 0}, motion="line_end"
    )["content_revision"]
    found = api(
        "pane.copy_search",
        pane_id=pane,
        query="needle",
        direction="forward",
        cursor={"row": top + 3, "col": 0},
        content_revision=revision,
    )
    first = {"start": {"row": top, "col": 6}, "end": {"row": top, "col": 11}}
    second = {"start": {"row": top + 1, "col": 5}, "end": {"row": top + 1, "col": 10}}
    assert found["matches"] == [first, second]
    assert (found["total"], found["current"], found["current_global"]) == (2, 0, 0)
    again = api(
        "pane.copy_search",
        pane_id=pane,
        query="needle",
        direction="forward",
        cursor=first["start"],
        content_revision=revision,
        previous=first,
    )
    assert again["current"] == 1
    none = api(
        "pane.copy_search",
        pane_id=pane,
        query="Needle",
        direction="backward",
        cursor={"row": top, "col": 0},
        content_revision=revision,
    )
    assert none["total"] == 0 and "current" not in none  # smart case


LINK_MANIFEST = (
    MANIFEST
    + """
[[link_handlers]]
id = "tickets"
title = "Open ticket"
pattern = "^https://tickets\\\\.example/"
action = "greet"
"""
)


def test_link_activate_runs_a_matching_plugin_link_handler(
    sim: Simulator, api: Api, tmp_path: Path
) -> None:
    """``url_at_pane_cell`` finds the URL under the cell; ``invoke_plugin_link_handler_for_url``
    runs the handler's action with the link-click context; an unhandled URL is left to the
    client (``handled: false`` with the ``url``), no URL is ``handled: false`` alone."""
    api("plugin.link", path=str(make_plugin(tmp_path / "hello", LINK_MANIFEST)))
    pane = _pane_with(api, "see https://tickets.example/42 or https://other.example/x.\\n")
    col = len("see https://tic")
    clicked = api("pane.link.activate", pane_id=pane, viewport_row=0, col=col)
    assert clicked == {
        "type": "pane_link_activated",
        "handled": True,
        "url": "https://tickets.example/42",
    }
    log = wait_until(
        lambda: [e for e in api("plugin.log.list")["logs"] if e["status"] != "running"],
        what="the handler's action to finish",
    )
    assert [(e["action_id"], e["status"]) for e in log] == [("greet", "succeeded")]
    state = config_dir(sim) / "state" / "plugins" / "example.hello" / "context.json"
    context = json.loads(state.read_text())
    assert (context["invocation_source"], context["correlation_id"]) == ("link_click",) * 2
    assert context["clicked_url"] == "https://tickets.example/42"
    assert (context["link_handler_id"], context["focused_pane_id"]) == ("tickets", pane)
    other = api(
        "pane.link.activate",
        pane_id=pane,
        viewport_row=0,
        col=len("see https://tickets.example/42 or htt"),
    )
    assert other == {
        "type": "pane_link_activated",
        "handled": False,
        "url": "https://other.example/x",
    }
    assert api("pane.link.activate", pane_id=pane, viewport_row=0, col=1) == {
        "type": "pane_link_activated",
        "handled": False,
    }


def test_edit_scrollback_opens_the_scrollback_in_an_editor_pane(short_dir: Path) -> None:
    """``edit_scrollback_key_preserves_logical_lines_in_editor_pane``: the retained text with
    soft wraps joined goes to ``$EDITOR`` in a new overlay pane run through ``/bin/sh``."""
    out = short_dir / "copied.txt"
    tmp = short_dir / "tmp"
    tmp.mkdir()
    home = short_dir / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HERDR_SIM_CONFIG_DIR": str(short_dir / "cfg"),
        "TMPDIR": str(tmp),
        "EDITOR": f"sh -c 'cp \"$1\" {out}; read x' sh",
    }
    with Simulator(socket_path=short_dir / "herdr.sock", base_env=env, fake_agents=False) as sim:

        def api(method: str, **params: Any) -> dict[str, Any]:
            return call(sim.socket_path, method, params)

        pane = _pane_with(api, "ABCDEFGHIJ\\nKLMNO\\n")
        assert api("pane.edit_scrollback", pane_id=pane) == {"type": "ok"}
        copied: str = wait_until(
            lambda: out.read_text() if out.exists() else None, what="the editor's copy"
        )
        assert "ABCDEFGHIJ\nKLMNO" in copied
        editor = api("pane.current")["pane"]
        assert editor["pane_id"] != pane
        layout = api("pane.layout", pane_id=pane)["layout"]
        assert layout["zoomed"] is True and layout["focused_pane_id"] == editor["pane_id"]
        files = list(tmp.glob("herdr-scrollback-*.txt"))
        assert len(files) == 1 and (files[0].stat().st_mode & 0o777) == 0o600
        api("pane.close", pane_id=editor["pane_id"])
        wait_until(lambda: not files[0].exists(), what="the scrollback file removed")


def test_the_editor_is_editor_else_vi_and_the_file_is_quoted(tmp_path: Path) -> None:
    """``scrollback_editor_argv`` (``src/platform/linux.rs`` and its test): ``/bin/sh -c``
    with ``${EDITOR:-vi}`` (``VISUAL`` is read only on Windows), the path shell-quoted."""
    path = tmp_path / "it's here.txt"
    path.write_text("x")
    argv = editor_argv(path)
    assert argv[:2] == ["/bin/sh", "-c"] and "EDITOR:-vi" in argv[2]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "EDITOR": "cat"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=10)
    assert done.stdout == "x" and not path.exists()
