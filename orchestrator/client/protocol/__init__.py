"""Herdr's protocol facts, in one place: what every package of this project must agree on.

The simulator (``herdr_sim``), its ``herdr`` CLI, the orchestrator and the pytest plugin all
speak protocol 22. The facts they share live here and nowhere else, because copies drift:
a copied kind list once made the orchestrator refuse ``qwen`` while the simulator accepted it.

* the protocol number (:data:`PROTOCOL`) and every method name (:data:`METHODS`);
* the agent kinds and their spellings (:mod:`.kinds`);
* agent statuses, reportable states and read sources;
* the error codes Herdr's server answers and those its CLI synthesizes;
* the agent-name rule (:func:`is_agent_name`);
* the ``agent start`` algorithm of Herdr's CLI, over a ``send()`` callable (:mod:`.startup`).

Dependency-free and cheap to import (no ``typing``, ``re`` or ``json`` at run time): the
``herdr`` CLI imports it once per command inside every simulated pane. Declarative tables
that belong to one layer (the simulator's params specs, the orchestrator's error families,
the CLI's flag specs) stay with that layer and are checked against these facts by tests.

Seed 001's kind list (``… qodercli maki wen ocr``) is not Herdr's: Herdr 0.9.2 ends its list
with ``qodercli qwen maki``. ``wen`` is ``qwen`` with its first letter lost, and ``ocr`` is no
Herdr kind or alias (``herdr agent start --kind ocr`` answers ``unsupported interactive agent
kind``); :data:`~.kinds.AGENT_LABELS` follows Herdr (``detect::agent_label``).
"""

from __future__ import annotations

# `typing` costs the CLI milliseconds at start-up; mypy treats this name specially.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .kinds import (
        AGENT_LABELS,
        RUST_WHITESPACE,
        SCREEN_MANIFEST_AGENTS,
        interactive_executable,
        normalized_lookup_name,
        parse_agent_label,
        parse_canonical_agent_label,
    )

#: Names of :mod:`.kinds`, loaded on first use: most ``herdr`` commands never need them.
_KINDS = frozenset(
    {
        "AGENT_LABELS",
        "RUST_WHITESPACE",
        "SCREEN_MANIFEST_AGENTS",
        "interactive_executable",
        "normalized_lookup_name",
        "parse_agent_label",
        "parse_canonical_agent_label",
    }
)

__all__ = [
    "AGENT_LABELS",
    "AGENT_NAME_MAX",
    "AGENT_NAME_PATTERN",
    "AGENT_STATUSES",
    "CLI_ERROR_CODES",
    "CLI_READ_SOURCES",
    "INVALID_AGENT_NAME_MESSAGE",
    "METHODS",
    "PROTOCOL",
    "READ_SOURCES",
    "REPORTABLE_STATES",
    "RUST_WHITESPACE",
    "SCREEN_MANIFEST_AGENTS",
    "SERVER_ERROR_CODES",
    "SETTLED_STATUSES",
    "interactive_executable",
    "is_agent_name",
    "normalized_lookup_name",
    "parse_agent_label",
    "parse_canonical_agent_label",
]

#: The socket protocol number of Herdr 0.9.x, the release the simulator reproduces and the
#: orchestrator's client speaks (a server answering another number is refused).
PROTOCOL = 22

#: Every method name of protocol 22, in the schema's order (``shared/contracts``).
METHODS: tuple[str, ...] = (
    "ping", "server.stop", "server.live_handoff", "server.reload_config",
    "server.agent_manifests", "server.reload_agent_manifests", "notification.show",
    "product_announcement.dismiss", "release_notes.dismiss", "command.invoke",
    "client.window_title.set", "client.window_title.clear", "client_shell.surface.set",
    "session.snapshot", "workspace.create", "workspace.list", "workspace.get",
    "workspace.focus", "workspace.rename", "workspace.move", "workspace.move_block",
    "workspace.report_metadata", "workspace.close", "worktree.list", "worktree.create",
    "worktree.open", "worktree.remove", "tab.create", "tab.list", "tab.get", "tab.focus",
    "tab.rename", "tab.move", "tab.close", "agent.list", "agent.get", "agent.read",
    "agent.explain", "agent.send_keys", "agent.rename", "agent.view.set", "agent.view.clear",
    "agent.focus", "agent.start", "agent.prompt", "agent.wait", "pane.split", "pane.swap",
    "pane.move", "pane.zoom", "pane.layout", "pane.process_info", "layout.export",
    "layout.apply", "layout.set_split_ratio", "pane.neighbor", "pane.edges",
    "pane.focus_direction", "pane.resize", "pane.scroll", "pane.edit_scrollback",
    "pane.selection.read", "pane.copy_motion", "pane.copy_search", "pane.list",
    "pane.current", "pane.get", "pane.focus", "pane.input.set", "pane.link.activate",
    "pane.rename", "pane.send_text", "pane.send_keys", "pane.send_input", "pane.read",
    "pane.graphics.set", "pane.graphics.clear", "pane.graphics.info", "pane.report_agent",
    "pane.report_agent_session", "pane.report_metadata", "pane.clear_agent_authority",
    "pane.release_agent", "pane.close", "popup.close", "events.subscribe", "events.wait",
    "pane.wait_for_output", "integration.list", "integration.install",
    "integration.uninstall", "plugin.link", "plugin.list", "plugin.unlink", "plugin.enable",
    "plugin.disable", "plugin.action.list", "plugin.action.invoke", "plugin.log.list",
    "plugin.pane.open", "plugin.pane.focus", "plugin.pane.close",
)  # fmt: skip

# -- agent states ---------------------------------------------------------------------------

#: Public agent statuses (``agent_status``; ``agent wait --until``), in Herdr's order.
AGENT_STATUSES: tuple[str, ...] = ("idle", "working", "blocked", "done", "unknown")
#: States a hook may report (``pane.report_agent``): ``done`` is derived, never reported.
REPORTABLE_STATES: tuple[str, ...] = ("idle", "working", "blocked", "unknown")
#: What ``agent.wait`` waits for when no ``until`` is given.
SETTLED_STATUSES: tuple[str, ...] = ("idle", "done", "blocked")

# -- reading panes --------------------------------------------------------------------------

#: ``source`` of ``pane.read`` / ``agent.read`` / ``pane.wait_for_output`` on the wire.
READ_SOURCES: tuple[str, ...] = ("visible", "recent", "recent_unwrapped", "detection")
#: The CLI's ``--source`` spellings and the wire value each stands for.
CLI_READ_SOURCES: dict[str, str] = {
    "visible": "visible",
    "recent": "recent",
    "recent-unwrapped": "recent_unwrapped",
    "recent_unwrapped": "recent_unwrapped",
    "detection": "detection",
}

# -- agent names ----------------------------------------------------------------------------

#: Herdr's agent-name grammar; always matched whole (``fullmatch``: ``$`` admits a newline).
AGENT_NAME_PATTERN = r"[a-z][a-z0-9_-]{0,31}"
AGENT_NAME_MAX = 32
#: Herdr's ``invalid_agent_name`` message.
INVALID_AGENT_NAME_MESSAGE = (
    "agent name must start with a lowercase letter and contain only lowercase letters, "
    "digits, '-' or '_' (1-32 characters)"
)
_NAME_FIRST = frozenset("abcdefghijklmnopqrstuvwxyz")
_NAME_REST = _NAME_FIRST | frozenset("0123456789_-")


def is_agent_name(name: str) -> bool:
    """Whether ``name`` is a valid agent name (:data:`AGENT_NAME_PATTERN`, matched whole)."""
    return (
        0 < len(name) <= AGENT_NAME_MAX
        and name[0] in _NAME_FIRST
        and all(char in _NAME_REST for char in name[1:])
    )


# -- error codes ----------------------------------------------------------------------------

#: Codes Herdr's server answers in an error envelope.
SERVER_ERROR_CODES: frozenset[str] = frozenset(
    {
        "invalid_request",
        "internal_error",
        "server_unavailable",
        "timeout",
        "agent_prompt_stalled",
        "agent_not_running",
        "invalid_regex",
        "unsupported_event_wait_match",
        "pane_not_found",
        "workspace_not_found",
        "tab_not_found",
        "target_pane_not_found",
        "pane_layout_unavailable",
        "pane_split_failed",
        "pane_move_failed",
        "pane_send_failed",
        "invalid_pane_swap",
        "invalid_key",
        "invalid_env",
        "workspace_create_failed",
        "tab_create_failed",
        "tab_close_failed",
        "tab_move_failed",
        "workspace_move_failed",
        "workspace_move_block_failed",
        "confirmation_required",
        "invalid_agent",
        "invalid_metadata_source",
        "invalid_metadata_token",
        "invalid_metadata_ttl",
        "invalid_metadata_request",
        "invalid_state_label",
        "metadata_token_limit",
        "metadata_sequence_source_limit",
        "invalid_params",
        "invalid_layout",
        "integration_install_failed",
        "integration_uninstall_failed",
        "agent_not_found",
        "agent_target_ambiguous",
        "agent_not_ready",
        "agent_blocked",
        "empty_agent_prompt",
        "agent_prompt_failed",
        "agent_send_keys_failed",
        "agent_launch_pending",
        "agent_name_taken",
        "invalid_agent_name",
        "unsupported_agent_kind",
        "invalid_agent_argument",
        "invalid_agent_timeout",
        "agent_pane_not_found",
        "agent_pane_busy",
        "agent_pane_unavailable",
        "agent_start_input_failed",
        "agent_explain_unavailable",
        "agent_not_idle",
        "invalid_resume_argv",
        "not_implemented",
        "unsupported_in_app_mode",
        # worktree.*
        "workspace_group_close_required",
        "not_git_worktree",
        "linked_worktree_source",
        "worktree_list_failed",
        "worktree_not_found",
        "ambiguous_worktree_branch",
        "worktree_open_failed",
        "worktree_create_failed",
        "worktree_operation_in_progress",
        "not_linked_worktree",
        "dirty_worktree_requires_force",
        "worktree_remove_failed",
        # TUI-free methods and pane graphics
        "popup_not_open",
        "invalid_agent_view",
        "plugin_not_found",
        "feature_disabled",
        "cell_size_unavailable",
        "invalid_layer_id",
        "invalid_image",
        "image_too_large",
        "layer_limit",
        "graphics_budget_exceeded",
        # client-shell methods answered to a socket client
        "stale_announcement",
        "stale_release_notes",
        "command_not_found",
        "connection_local_only",
        # agent reports (0.9.2, herdr-protocol.md)
        "resume_not_accepted",
        # layouts (src/app/api/layouts.rs)
        "invalid_ratio",
        "invalid_target",
        "layout_apply_failed",
        "layout_not_found",
        "split_not_found",
        # plugins (src/app/api/plugins)
        "ambiguous_plugin_action",
        "invalid_plugin_action_id",
        "invalid_plugin_command",
        "invalid_plugin_entrypoint",
        "invalid_plugin_id",
        "invalid_plugin_link_handler_action",
        "invalid_plugin_link_handler_id",
        "invalid_plugin_link_handler_pattern",
        "invalid_plugin_min_herdr_version",
        "invalid_plugin_pane_id",
        "invalid_plugin_pane_size",
        "invalid_plugin_platform",
        "invalid_plugin_source",
        "no_active_pane",
        "no_active_workspace",
        "platform_unsupported",
        "plugin_action_not_found",
        "plugin_command_limit_reached",
        "plugin_disabled",
        "plugin_manifest_not_found",
        "plugin_manifest_parse_failed",
        "plugin_manifest_read_failed",
        "plugin_manifest_unavailable",
        "plugin_pane_not_found",
        "plugin_pane_open_failed",
        "plugin_registry_load_failed",
        "plugin_registry_save_failed",
        "plugin_requires_newer_herdr",
        "plugin_user_dir_create_failed",
    }
)
#: Codes only Herdr's CLI produces (the server never does): the connection guard's and
#: those of the ``agent start`` loop (:mod:`.startup`), plus the session commands'.
CLI_ERROR_CODES: frozenset[str] = frozenset(
    {
        "server_not_running",
        "protocol_mismatch",
        "agent_start_failed",
        "agent_kind_mismatch",
        "agent_name_not_found",
        "agent_start_transport_failed",
        "invalid_session_name",
        "session_stop_failed",
        "session_delete_failed",
    }
)


def __getattr__(name: str) -> Any:
    # Hand-written on purpose, not orchestrator.client._lazy's: the `herdr` CLI reads these names
    # on its hot path, and the shared loader's package (orchestrator: logging, typing) would
    # cost every CLI start milliseconds (tests/cli/test_startup.py counts its modules).
    if name not in _KINDS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import kinds

    value = getattr(kinds, name)
    globals()[name] = value
    return value
