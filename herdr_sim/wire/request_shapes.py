"""The Rust struct behind each method's ``params``, as serde_derive sees it.

Herdr decodes ``params`` into one struct per method (``src/api/schema.rs`` ``enum Method`` and
``src/api/schema/*.rs``). What serde says about a bad ``params`` depends on facts about that
struct our value specs (``herdr_sim/methods``) do not hold: its name (``invalid type: null,
expected struct PaneReadParams``), its fields in declaration order (the sequence form
``"params": ["w1:p1", "visible"]`` fills them in that order; missing fields are reported in
that order), which fields carry ``#[serde(default)]`` (a short sequence leaves them at their
default, any other missing one is ``invalid length``) and which are ``Option`` (a JSON
``null`` reads as absent; for any other type it is ``invalid type: null``).

Read from Herdr's source (herdrdev/herdr, ``src/api/schema*.rs``) and checked against the
protocol-22 schema (``tests/sim/test_request_parsing.py``): struct names are the schema's
``$ref`` names; a method or field the source read did not have yet takes its place from the
schema (noted per line). Each field is written ``name`` (required), ``name?`` (``Option``
with ``#[serde(default)]``), ``name=`` (``#[serde(default)]``) or ``name~`` (``Option``
without a default).
"""

from __future__ import annotations

from .params import Shape


def _shape(name: str, fields: str) -> Shape:
    order: list[str] = []
    defaulted: set[str] = set()
    options: set[str] = set()
    for token in fields.split():
        field, mark = token.rstrip("?=~"), token[len(token.rstrip("?=~")) :]
        order.append(field)
        if mark in ("?", "="):
            defaulted.add(field)
        if mark in ("?", "~"):
            options.add(field)
    return Shape(name, tuple(order), frozenset(defaulted), frozenset(options))


#: method name → the shape of its params struct, in Herdr's declaration order of methods
SHAPES: dict[str, Shape] = {
    "ping": _shape("PingParams", ""),
    "server.stop": _shape("EmptyParams", ""),
    "server.live_handoff": _shape(
        "ServerLiveHandoffParams", "import_exe? expected_protocol? expected_version?"
    ),
    "server.reload_config": _shape("EmptyParams", ""),
    "server.agent_manifests": _shape("EmptyParams", ""),
    "server.reload_agent_manifests": _shape("EmptyParams", ""),
    "notification.show": _shape("NotificationShowParams", "title body? position? sound="),
    "product_announcement.dismiss": _shape(
        "ProductAnnouncementDismissParams", "version id"
    ),  # not in the source read: order from the schema (required first)
    "release_notes.dismiss": _shape(
        "ReleaseNotesDismissParams", "version"
    ),  # not in the source read: order from the schema (required first)
    "command.invoke": _shape(
        "CommandInvokeParams", "command_id pane_id? selection? tab_id? workspace_id?"
    ),  # not in the source read: order from the schema (required first)
    "client.window_title.set": _shape("ClientWindowTitleSetParams", "title"),
    "client.window_title.clear": _shape("EmptyParams", ""),
    "client_shell.surface.set": _shape(
        "ClientShellSurfaceSetParams", "active"
    ),  # not in the source read: order from the schema (required first)
    "session.snapshot": _shape("EmptyParams", ""),
    "workspace.create": _shape(
        "WorkspaceCreateParams", "cwd? focus= label? env= source_workspace_id?"
    ),  # source_workspace_id: protocol 22, not in the source read; placed last
    "workspace.list": _shape("EmptyParams", ""),
    "workspace.get": _shape("WorkspaceTarget", "workspace_id"),
    "workspace.focus": _shape("WorkspaceTarget", "workspace_id"),
    "workspace.rename": _shape("WorkspaceRenameParams", "workspace_id label"),
    "workspace.move": _shape("WorkspaceMoveParams", "workspace_id insert_index"),
    "workspace.move_block": _shape(
        "WorkspaceMoveBlockParams", "workspace_ids before_workspace_id?"
    ),
    "workspace.report_metadata": _shape(
        "WorkspaceReportMetadataParams", "workspace_id source tokens seq? ttl_ms?"
    ),
    "workspace.close": _shape(
        "WorkspaceCloseParams", "workspace_id close_group?"
    ),  # close_group: protocol 22, not in the source read; placed last
    "worktree.list": _shape(
        "WorktreeListParams", "workspace_id? cwd? trust_repository?"
    ),  # trust_repository: protocol 22, not in the source read; placed last
    "worktree.create": _shape(
        "WorktreeCreateParams",
        "workspace_id? cwd? branch? base? path? label? focus= trust_repository?",
    ),  # trust_repository: protocol 22, not in the source read; placed last
    "worktree.open": _shape(
        "WorktreeOpenParams", "workspace_id? cwd? path? branch? label? focus= trust_repository?"
    ),  # trust_repository: protocol 22, not in the source read; placed last
    "worktree.remove": _shape(
        "WorktreeRemoveParams", "workspace_id force= trust_repository?"
    ),  # trust_repository: protocol 22, not in the source read; placed last
    "tab.create": _shape("TabCreateParams", "workspace_id? cwd? focus= label? env="),
    "tab.list": _shape("TabListParams", "workspace_id?"),
    "tab.get": _shape("TabTarget", "tab_id"),
    "tab.focus": _shape("TabTarget", "tab_id"),
    "tab.rename": _shape("TabRenameParams", "tab_id label"),
    "tab.move": _shape("TabMoveParams", "tab_id insert_index"),
    "tab.close": _shape("TabTarget", "tab_id"),
    "agent.list": _shape("EmptyParams", ""),
    "agent.get": _shape("AgentTarget", "target"),
    "agent.read": _shape("AgentReadParams", "target source lines? format= strip_ansi="),
    "agent.explain": _shape("AgentTarget", "target"),
    "agent.send_keys": _shape("AgentSendKeysParams", "target keys"),
    "agent.rename": _shape("AgentRenameParams", "target name?"),
    "agent.view.set": _shape("AgentViewSetParams", "source label? filter? sort="),
    "agent.view.clear": _shape("AgentViewClearParams", "source?"),
    "agent.focus": _shape("AgentTarget", "target"),
    "agent.start": _shape("AgentStartParams", "name kind pane_id args= timeout_ms?"),
    "agent.prompt": _shape("AgentPromptParams", "target text wait?"),
    "agent.wait": _shape("AgentWaitParams", "target until= timeout_ms?"),
    "pane.split": _shape(
        "PaneSplitParams",
        "workspace_id? target_pane_id? direction ratio? cwd? focus= right_click= env=",
    ),
    "pane.swap": _shape("PaneSwapParams", "pane_id? direction? source_pane_id? target_pane_id?"),
    "pane.move": _shape("PaneMoveParams", "pane_id destination focus="),
    "pane.zoom": _shape("PaneZoomParams", "pane_id? mode="),
    "pane.layout": _shape("PaneLayoutParams", "pane_id?"),
    "pane.process_info": _shape("PaneProcessInfoParams", "pane_id?"),
    "layout.export": _shape("LayoutExportParams", "tab_id? pane_id?"),
    "layout.apply": _shape("LayoutApplyParams", "workspace_id? tab_id? tab_label? focus= root"),
    "layout.set_split_ratio": _shape("LayoutSetSplitRatioParams", "tab_id? pane_id? path ratio"),
    "pane.neighbor": _shape("PaneNeighborParams", "pane_id? direction"),
    "pane.edges": _shape("PaneEdgesParams", "pane_id?"),
    "pane.focus_direction": _shape("PaneFocusDirectionParams", "pane_id? direction"),
    "pane.resize": _shape("PaneResizeParams", "pane_id? direction amount?"),
    "pane.scroll": _shape(
        "PaneScrollParams", "pane_id offset_from_bottom"
    ),  # not in the source read: order from the schema (required first)
    "pane.edit_scrollback": _shape(
        "PaneTarget", "pane_id"
    ),  # not in the source read: order from the schema (required first)
    "pane.selection.read": _shape(
        "PaneSelectionReadParams", "pane_id anchor cursor content_revision?"
    ),  # not in the source read: order from the schema (required first)
    "pane.copy_motion": _shape(
        "PaneCopyMotionParams", "pane_id cursor motion content_revision?"
    ),  # not in the source read: order from the schema (required first)
    "pane.copy_search": _shape(
        "PaneCopySearchParams", "pane_id query direction cursor content_revision previous?"
    ),  # not in the source read: order from the schema (required first)
    "pane.list": _shape("PaneListParams", "workspace_id?"),
    "pane.current": _shape("PaneCurrentParams", "caller_pane_id?"),
    "pane.get": _shape("PaneTarget", "pane_id"),
    "pane.focus": _shape("PaneTarget", "pane_id"),
    "pane.input.set": _shape("PaneInputSetParams", "pane_id right_click"),
    "pane.link.activate": _shape(
        "PaneLinkActivateParams", "pane_id viewport_row col content_revision? offset_from_bottom?"
    ),  # not in the source read: order from the schema (required first)
    "pane.rename": _shape("PaneRenameParams", "pane_id label?"),
    "pane.send_text": _shape("PaneSendTextParams", "pane_id text"),
    "pane.send_keys": _shape("PaneSendKeysParams", "pane_id keys"),
    "pane.send_input": _shape("PaneSendInputParams", "pane_id text= keys="),
    "pane.read": _shape("PaneReadParams", "pane_id source lines? format= strip_ansi="),
    "pane.graphics.set": _shape(
        "PaneGraphicsSetParams",
        "pane_id layer_id? z_index= format image_width image_height data_base64= placement=",
    ),
    "pane.graphics.clear": _shape("PaneGraphicsClearParams", "pane_id layer_id?"),
    "pane.graphics.info": _shape("PaneTarget", "pane_id"),
    "pane.report_agent": _shape(
        "PaneReportAgentParams",
        "pane_id source agent state message? seq? agent_session_id? agent_session_path?",
    ),
    "pane.report_agent_session": _shape(
        "PaneReportAgentSessionParams",
        "pane_id source agent seq? agent_session_id? agent_session_path? session_start_source?",
    ),
    "pane.report_metadata": _shape(
        "PaneReportMetadataParams",
        "pane_id source agent? applies_to_source? title? display_agent? state_labels= tokens="
        " clear_title= clear_display_agent= clear_state_labels= seq? ttl_ms?",
    ),
    "pane.clear_agent_authority": _shape("PaneClearAgentAuthorityParams", "pane_id source? seq?"),
    "pane.release_agent": _shape("PaneReleaseAgentParams", "pane_id source agent seq?"),
    "pane.close": _shape("PaneTarget", "pane_id"),
    "popup.close": _shape("EmptyParams", ""),
    "events.subscribe": _shape("EventsSubscribeParams", "subscriptions"),
    "events.wait": _shape("EventsWaitParams", "match_event timeout_ms?"),
    "pane.wait_for_output": _shape(
        "PaneWaitForOutputParams", "pane_id source lines? match timeout_ms? strip_ansi="
    ),
    "integration.list": _shape(
        "EmptyParams", ""
    ),  # not in the source read: order from the schema (required first)
    "integration.install": _shape("IntegrationInstallParams", "target"),
    "integration.uninstall": _shape("IntegrationUninstallParams", "target"),
    "plugin.link": _shape("PluginLinkParams", "path enabled= source?"),
    "plugin.list": _shape("PluginListParams", "plugin_id?"),
    "plugin.unlink": _shape("PluginUnlinkParams", "plugin_id"),
    "plugin.enable": _shape("PluginSetEnabledParams", "plugin_id"),
    "plugin.disable": _shape("PluginSetEnabledParams", "plugin_id"),
    "plugin.action.list": _shape("PluginActionListParams", "plugin_id?"),
    "plugin.action.invoke": _shape("PluginActionInvokeParams", "action_id plugin_id? context?"),
    "plugin.log.list": _shape("PluginLogListParams", "plugin_id? limit?"),
    "plugin.pane.open": _shape(
        "PluginPaneOpenParams",
        "plugin_id entrypoint placement? width? height? workspace_id? target_pane_id?"
        " direction? cwd? focus= env=",
    ),
    "plugin.pane.focus": _shape("PluginPaneFocusParams", "pane_id"),
    "plugin.pane.close": _shape("PluginPaneCloseParams", "pane_id"),
}
