"""One case per protocol-22 method: the request a client would make against a fresh simulator
and the answer headless Herdr gives it (a result ``type``, or ``error:<code>``).

Each expectation is Herdr's, read from its source (herdrdev/herdr: the dispatch in
``src/app/api.rs`` and ``src/server/headless.rs``, the result variants of
``src/api/schema/response.rs``); the published clients then judge the answer's shape. A
``World`` is built per test: one workspace whose working directory is a git repository, so
the worktree methods act on a real repository.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from herdr_sim.client import call
from tests.waits import wait_until

Params = dict[str, Any]

#: a plugin as Herdr's manifest format has it (one action, one pane entrypoint)
PLUGIN_MANIFEST = """
id = "judge.demo"
name = "Judge demo"
version = "0.1.0"
min_herdr_version = "0.6.10"
platforms = ["linux", "macos"]

[[actions]]
id = "hello"
title = "Hello"
command = ["sh", "-c", "echo hello"]

[[panes]]
id = "board"
title = "Board"
placement = "split"
command = ["sh", "-c", "echo BOARD; exec sleep 600"]
"""


@dataclass
class World:
    """A simulator with one workspace (``ws``/``tab``/``pane``) in the git repository ``repo``."""

    socket: Path
    repo: Path
    ws: str = ""
    tab: str = ""
    pane: str = ""
    made: dict[str, str] = field(default_factory=dict)

    def api(self, method: str, **params: Any) -> dict[str, Any]:
        return call(self.socket, method, params)

    def setup(self) -> World:
        created = self.api("workspace.create", cwd=str(self.repo), focus=True)
        self.ws = created["workspace"]["workspace_id"]
        self.tab = created["tab"]["tab_id"]
        self.pane = created["root_pane"]["pane_id"]
        return self

    def split(self) -> str:
        """A second pane beside the first (for methods that close or move one)."""
        pane = self.api("pane.split", target_pane_id=self.pane, direction="right", focus=False)
        pane_id: str = pane["pane"]["pane_id"]
        return pane_id

    def second_workspace(self) -> str:
        created = self.api("workspace.create", cwd=str(self.repo), focus=False)
        workspace_id: str = created["workspace"]["workspace_id"]
        return workspace_id

    def plugin_dir(self) -> str:
        """A plugin directory (not linked yet) with one action and one pane entrypoint."""
        root = self.repo.parent / "plugin"
        if not root.exists():
            root.mkdir()
            (root / "herdr-plugin.toml").write_text(PLUGIN_MANIFEST)
        return str(root)

    def plugin(self) -> str:
        """Link (once) the plugin of :meth:`plugin_dir`; its id."""
        if "plugin" not in self.made:
            self.api("plugin.link", path=self.plugin_dir())
            self.made["plugin"] = "judge.demo"
        return self.made["plugin"]

    def plugin_pane(self) -> str:
        """A plugin pane (a real pane running the entrypoint's command)."""
        opened = self.api(
            "plugin.pane.open",
            plugin_id=self.plugin(),
            entrypoint="board",
            target_pane_id=self.pane,
        )
        pane_id: str = opened["plugin_pane"]["pane"]["pane_id"]
        return pane_id

    def worktree(self) -> str:
        """A linked checkout of the repository on a new branch, opened as a workspace."""
        created = self.api(
            "worktree.create",
            cwd=str(self.repo),
            branch="judged",
            path=str(self.repo.parent / "wt-judged"),
            focus=False,
        )
        workspace_id: str = created["workspace"]["workspace_id"]
        return workspace_id

    def content_revision(self) -> int:
        """The pane's content revision (as a copy-mode motion answers it) once the shell's
        start-up output has settled: the same revision twice, 0.1 s apart."""
        last = [-1]

        def settled() -> bool:
            moved = self.api(
                "pane.copy_motion",
                pane_id=self.pane,
                cursor={"row": 0, "col": 0},
                motion="line_end",
            )
            same: bool = moved["content_revision"] == last[0]
            last[0] = moved["content_revision"]
            return same

        wait_until(settled, 10, interval=0.1, what="the pane's output to settle")
        return last[0]

    def agent(self) -> str:
        """Start a (fake) pi in the root pane, named ``a0``; its target."""
        self.api("agent.start", pane_id=self.pane, kind="pi", name="a0", timeout_ms=20000)
        # as Herdr's CLI does: poll until the launch is no longer pending
        wait_until(
            lambda: not self.api("agent.get", target="a0")["agent"].get("launch_pending"),
            20,
            what="the fake pi's launch",
        )
        return "a0"

    def agent_pane(self) -> str:
        """The root pane, with a (fake) pi running in it."""
        self.agent()
        return self.pane


@dataclass(frozen=True)
class Case:
    method: str
    params: Callable[[World], Params]
    answer: str  # a result ``type``, or ``error:<code>``


def _none(world: World) -> Params:
    return {}


def _pane(world: World) -> Params:
    return {"pane_id": world.pane}


def _cases() -> list[Case]:
    pi = "herdr:pi"
    return [
        Case("ping", _none, "pong"),
        Case("server.stop", _none, "ok"),
        Case("server.live_handoff", _none, "error:not_supported_by_simulator"),
        Case("server.reload_config", _none, "config_reload"),
        Case("server.agent_manifests", _none, "agent_manifest_status"),
        Case("server.reload_agent_manifests", _none, "agent_manifest_reload"),
        Case("notification.show", lambda w: {"title": "hello"}, "notification_show"),
        # nothing is current on a fresh server (src/product_announcements.rs, release_notes.rs)
        Case(
            "product_announcement.dismiss",
            lambda w: {"id": "x", "version": "0.9.2"},
            "error:stale_announcement",
        ),
        Case("release_notes.dismiss", lambda w: {"version": "0.9.2"}, "error:stale_release_notes"),
        # no client shell issued a command id to a socket client
        Case("command.invoke", lambda w: {"command_id": "no.such"}, "error:command_not_found"),
        Case("client.window_title.set", lambda w: {"title": "t"}, "client_window_title"),
        Case("client.window_title.clear", _none, "client_window_title"),
        Case("client_shell.surface.set", lambda w: {"active": True}, "error:connection_local_only"),
        Case("session.snapshot", _none, "session_snapshot"),
        Case("workspace.create", lambda w: {"cwd": str(w.repo)}, "workspace_created"),
        Case("workspace.list", _none, "workspace_list"),
        Case("workspace.get", lambda w: {"workspace_id": w.ws}, "workspace_info"),
        Case("workspace.focus", lambda w: {"workspace_id": w.ws}, "workspace_info"),
        Case("workspace.rename", lambda w: {"workspace_id": w.ws, "label": "x"}, "workspace_info"),
        Case(
            "workspace.move",
            lambda w: {"workspace_id": w.second_workspace(), "insert_index": 0},
            "workspace_list",
        ),
        Case("workspace.move_block", lambda w: {"workspace_ids": [w.ws]}, "workspace_list"),
        Case(
            "workspace.report_metadata",
            lambda w: {"workspace_id": w.ws, "source": "t", "tokens": {"k": "v"}},
            "ok",
        ),
        Case("workspace.close", lambda w: {"workspace_id": w.second_workspace()}, "ok"),
        Case(
            "worktree.list",
            lambda w: {"cwd": str(w.repo), "trust_repository": True},
            "worktree_list",
        ),
        Case(
            "worktree.create",
            lambda w: {
                "cwd": str(w.repo),
                "branch": "feature-x",
                "path": str(w.repo.parent / "wt-x"),
                "focus": False,
                "trust_repository": True,
            },
            "worktree_created",
        ),
        Case(
            "worktree.open",
            lambda w: {"cwd": str(w.repo), "path": str(w.repo), "trust_repository": True},
            "worktree_opened",
        ),
        Case("worktree.remove", lambda w: {"workspace_id": w.worktree()}, "worktree_removed"),
        Case("tab.create", lambda w: {"workspace_id": w.ws}, "tab_created"),
        Case("tab.list", lambda w: {"workspace_id": w.ws}, "tab_list"),
        Case("tab.get", lambda w: {"tab_id": w.tab}, "tab_info"),
        Case("tab.focus", lambda w: {"tab_id": w.tab}, "tab_info"),
        Case("tab.rename", lambda w: {"tab_id": w.tab, "label": "x"}, "tab_info"),
        Case("tab.move", lambda w: {"tab_id": w.tab, "insert_index": 0}, "tab_list"),
        Case(
            "tab.close",
            lambda w: {"tab_id": w.api("tab.create", workspace_id=w.ws)["tab"]["tab_id"]},
            "ok",
        ),
        Case("agent.list", _none, "agent_list"),
        Case("agent.get", lambda w: {"target": w.agent()}, "agent_info"),
        Case(
            "agent.read",
            lambda w: {"target": w.agent(), "source": "visible"},
            "pane_read",
        ),
        Case("agent.explain", lambda w: {"target": w.agent()}, "agent_explain"),
        Case(
            "agent.send_keys",
            lambda w: {"target": w.agent(), "keys": ["Enter"]},
            "ok",
        ),
        Case("agent.rename", lambda w: {"target": w.agent(), "name": "a1"}, "agent_info"),
        Case("agent.view.set", lambda w: {"source": "t", "label": "mine"}, "agent_view"),
        Case("agent.view.clear", lambda w: {"source": "t"}, "agent_view"),
        Case("agent.focus", lambda w: {"target": w.agent()}, "agent_info"),
        Case(
            "agent.start",
            lambda w: {"pane_id": w.split(), "kind": "pi", "name": "p1", "timeout_ms": 20000},
            "agent_started",
        ),
        Case(
            "agent.prompt",
            lambda w: {"target": w.agent(), "text": "hello"},
            "agent_prompted",
        ),
        Case(
            "agent.wait",
            lambda w: {"target": w.agent(), "until": ["idle"], "timeout_ms": 5000},
            "agent_info",
        ),
        Case(
            "pane.split",
            lambda w: {"target_pane_id": w.pane, "direction": "down", "focus": False},
            "pane_info",
        ),
        Case(
            "pane.swap",
            lambda w: {"source_pane_id": w.pane, "target_pane_id": w.split()},
            "pane_swap",
        ),
        Case(
            "pane.move",
            lambda w: {
                "pane_id": w.split(),
                "destination": {"type": "new_tab", "workspace_id": w.ws},
                "focus": False,
            },
            "pane_move",
        ),
        Case("pane.zoom", lambda w: {"pane_id": w.pane, "mode": "toggle"}, "pane_zoom"),
        Case("pane.layout", _pane, "pane_layout"),
        Case("pane.process_info", _pane, "pane_process_info"),
        Case("layout.export", lambda w: {"tab_id": w.tab}, "layout_export"),
        Case(
            "layout.apply",
            lambda w: {"root": {"type": "pane"}, "workspace_id": w.ws, "focus": False},
            "layout_apply",
        ),
        Case(
            "layout.set_split_ratio",
            lambda w: {"pane_id": w.split(), "path": [], "ratio": 0.3},
            "layout_split_ratio_set",
        ),
        Case("pane.neighbor", lambda w: {"pane_id": w.pane, "direction": "left"}, "pane_neighbor"),
        Case("pane.edges", _pane, "pane_edges"),
        Case(
            "pane.focus_direction",
            lambda w: {"pane_id": w.pane, "direction": "left"},
            "pane_focus_direction",
        ),
        Case(
            "pane.resize",
            lambda w: {"pane_id": w.split(), "direction": "left", "amount": 0.1},
            "pane_resize",
        ),
        Case("pane.scroll", lambda w: {"pane_id": w.pane, "offset_from_bottom": 0}, "pane_info"),
        Case("pane.edit_scrollback", _pane, "ok"),
        Case(
            "pane.selection.read",
            lambda w: {
                "pane_id": w.pane,
                "anchor": {"row": 0, "col": 0},
                "cursor": {"row": 0, "col": 1},
            },
            "pane_selection",
        ),
        Case(
            "pane.copy_motion",
            lambda w: {"pane_id": w.pane, "cursor": {"row": 0, "col": 0}, "motion": "line_end"},
            "pane_copy_motion",
        ),
        Case(
            "pane.copy_search",
            lambda w: {
                "pane_id": w.pane,
                "cursor": {"row": 0, "col": 0},
                "direction": "forward",
                "query": "x",
                "content_revision": w.content_revision(),
            },
            "pane_copy_search",
        ),
        Case("pane.list", lambda w: {"workspace_id": w.ws}, "pane_list"),
        Case("pane.current", lambda w: {"caller_pane_id": w.pane}, "pane_current"),
        Case("pane.get", _pane, "pane_info"),
        Case("pane.focus", _pane, "pane_info"),
        Case("pane.input.set", lambda w: {"pane_id": w.pane, "right_click": "pane"}, "ok"),
        Case(
            "pane.link.activate",
            lambda w: {"pane_id": w.pane, "viewport_row": 0, "col": 0},
            "pane_link_activated",
        ),
        Case("pane.rename", lambda w: {"pane_id": w.pane, "label": "x"}, "pane_info"),
        Case("pane.send_text", lambda w: {"pane_id": w.pane, "text": "true"}, "ok"),
        Case("pane.send_keys", lambda w: {"pane_id": w.pane, "keys": ["Enter"]}, "ok"),
        Case(
            "pane.send_input", lambda w: {"pane_id": w.pane, "text": "t", "keys": ["Enter"]}, "ok"
        ),
        Case("pane.read", lambda w: {"pane_id": w.pane, "source": "recent"}, "pane_read"),
        Case(
            "pane.graphics.set",
            lambda w: {"pane_id": w.pane, "format": "rgb", "image_width": 1, "image_height": 1},
            "error:feature_disabled",
        ),
        # Herdr's default config has experimental.kitty_graphics off (pane_graphics.rs)
        Case("pane.graphics.clear", _pane, "error:feature_disabled"),
        Case("pane.graphics.info", _pane, "error:feature_disabled"),
        Case(
            "pane.report_agent",
            lambda w: {"pane_id": w.pane, "source": pi, "agent": "pi", "state": "working"},
            "ok",
        ),
        Case(
            "pane.report_agent_session",
            lambda w: {"pane_id": w.pane, "source": pi, "agent": "pi", "agent_session_id": "s1"},
            "ok",
        ),
        Case(
            "pane.report_metadata",
            lambda w: {"pane_id": w.pane, "source": "t", "title": "build"},
            "ok",
        ),
        Case("pane.clear_agent_authority", lambda w: {"pane_id": w.agent_pane()}, "ok"),
        Case(
            "pane.release_agent",
            lambda w: {"pane_id": w.agent_pane(), "source": pi, "agent": "pi"},
            "ok",
        ),
        Case("pane.close", lambda w: {"pane_id": w.split()}, "ok"),
        Case("popup.close", _none, "error:popup_not_open"),
        Case(
            "events.wait",
            lambda w: {
                "match_event": {
                    "event": "pane_agent_status_changed",
                    "pane_id": w.pane,
                    "agent_status": "working",
                },
                "timeout_ms": 50,
            },
            "error:timeout",
        ),
        Case(
            "pane.wait_for_output",
            lambda w: {
                "pane_id": w.pane,
                "source": "recent",
                "match": {"type": "regex", "value": "."},
                "timeout_ms": 5000,
            },
            "output_matched",
        ),
        Case("integration.list", _none, "integration_list"),
        Case("integration.install", lambda w: {"target": "pi"}, "integration_install"),
        Case("integration.uninstall", lambda w: {"target": "pi"}, "integration_uninstall"),
        Case("plugin.link", lambda w: {"path": w.plugin_dir()}, "plugin_linked"),
        Case("plugin.list", lambda w: {"plugin_id": w.plugin()}, "plugin_list"),
        Case("plugin.unlink", lambda w: {"plugin_id": w.plugin()}, "plugin_unlinked"),
        Case("plugin.enable", lambda w: {"plugin_id": w.plugin()}, "plugin_enabled"),
        Case("plugin.disable", lambda w: {"plugin_id": w.plugin()}, "plugin_disabled"),
        Case("plugin.action.list", lambda w: {"plugin_id": w.plugin()}, "plugin_action_list"),
        Case(
            "plugin.action.invoke",
            lambda w: {"plugin_id": w.plugin(), "action_id": "hello"},
            "plugin_action_invoked",
        ),
        Case("plugin.log.list", lambda w: {"plugin_id": w.plugin()}, "plugin_log_list"),
        Case(
            "plugin.pane.open",
            lambda w: {"plugin_id": w.plugin(), "entrypoint": "board", "target_pane_id": w.pane},
            "plugin_pane_opened",
        ),
        Case("plugin.pane.focus", lambda w: {"pane_id": w.plugin_pane()}, "plugin_pane_focused"),
        Case("plugin.pane.close", lambda w: {"pane_id": w.plugin_pane()}, "plugin_pane_closed"),
    ]


#: every case by method (``events.subscribe`` has tests of its own: it streams)
CASES: dict[str, Case] = {case.method: case for case in _cases()}
