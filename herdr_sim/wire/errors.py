"""Herdr's wire error codes and message templates, in one place.

Every error the simulator puts on the wire is a :class:`HerdrRequestError` raised by a handler and
serialised by the server alone. Keeping the codes and message templates here means matching
real Herdr's strings is a one-file job (the fakeredis ``_msgs.py`` idea).
"""

from __future__ import annotations

from typing import Final

# --- codes -----------------------------------------------------------------------------------
INVALID_REQUEST: Final = "invalid_request"
INTERNAL_ERROR: Final = "internal_error"
SERVER_UNAVAILABLE: Final = "server_unavailable"
TIMEOUT: Final = "timeout"
INVALID_REGEX: Final = "invalid_regex"
UNSUPPORTED_EVENT_WAIT_MATCH: Final = "unsupported_event_wait_match"
PANE_NOT_FOUND: Final = "pane_not_found"
WORKSPACE_NOT_FOUND: Final = "workspace_not_found"
TAB_NOT_FOUND: Final = "tab_not_found"
TARGET_PANE_NOT_FOUND: Final = "target_pane_not_found"
PANE_LAYOUT_UNAVAILABLE: Final = "pane_layout_unavailable"
PANE_SPLIT_FAILED: Final = "pane_split_failed"
PANE_MOVE_FAILED: Final = "pane_move_failed"
PANE_SEND_FAILED: Final = "pane_send_failed"
INVALID_PANE_SWAP: Final = "invalid_pane_swap"
INVALID_KEY: Final = "invalid_key"
INVALID_ENV: Final = "invalid_env"
WORKSPACE_CREATE_FAILED: Final = "workspace_create_failed"
TAB_CREATE_FAILED: Final = "tab_create_failed"
TAB_MOVE_FAILED: Final = "tab_move_failed"
WORKSPACE_MOVE_FAILED: Final = "workspace_move_failed"
INVALID_AGENT: Final = "invalid_agent"
INVALID_METADATA_SOURCE: Final = "invalid_metadata_source"
INVALID_METADATA_TOKEN: Final = "invalid_metadata_token"
INVALID_METADATA_TTL: Final = "invalid_metadata_ttl"
INVALID_METADATA_REQUEST: Final = "invalid_metadata_request"
INVALID_STATE_LABEL: Final = "invalid_state_label"
METADATA_TOKEN_LIMIT: Final = "metadata_token_limit"
METADATA_SEQUENCE_SOURCE_LIMIT: Final = "metadata_sequence_source_limit"
INVALID_PARAMS: Final = "invalid_params"
INVALID_LAYOUT: Final = "invalid_layout"
# worktree groups (src/app/api/workspaces.rs, tabs.rs, panes.rs; #2874)
CONFIRMATION_REQUIRED: Final = "confirmation_required"
WORKSPACE_GROUP_CLOSE_REQUIRED: Final = "workspace_group_close_required"
# worktree.* (src/app/api/worktrees.rs, worktrees/deferred.rs)
NOT_GIT_WORKTREE: Final = "not_git_worktree"
LINKED_WORKTREE_SOURCE: Final = "linked_worktree_source"
WORKTREE_LIST_FAILED: Final = "worktree_list_failed"
WORKTREE_NOT_FOUND: Final = "worktree_not_found"
AMBIGUOUS_WORKTREE_BRANCH: Final = "ambiguous_worktree_branch"
WORKTREE_OPEN_FAILED: Final = "worktree_open_failed"
WORKTREE_CREATE_FAILED: Final = "worktree_create_failed"
WORKTREE_OPERATION_IN_PROGRESS: Final = "worktree_operation_in_progress"
NOT_LINKED_WORKTREE: Final = "not_linked_worktree"
DIRTY_WORKTREE_REQUIRES_FORCE: Final = "dirty_worktree_requires_force"
WORKTREE_REMOVE_FAILED: Final = "worktree_remove_failed"
WORKSPACE_MOVE_BLOCK_FAILED: Final = "workspace_move_block_failed"
POPUP_NOT_OPEN: Final = "popup_not_open"
# what a client shell sends (Herdr 0.9; evidence in docs/simulator/fidelity.md)
STALE_ANNOUNCEMENT: Final = "stale_announcement"
STALE_RELEASE_NOTES: Final = "stale_release_notes"
COMMAND_NOT_FOUND: Final = "command_not_found"
CONNECTION_LOCAL_ONLY: Final = "connection_local_only"
INVALID_AGENT_VIEW: Final = "invalid_agent_view"
PLUGIN_NOT_FOUND: Final = "plugin_not_found"
# pane graphics (``src/app/api/pane_graphics.rs``)
FEATURE_DISABLED: Final = "feature_disabled"
CELL_SIZE_UNAVAILABLE: Final = "cell_size_unavailable"
INVALID_LAYER_ID: Final = "invalid_layer_id"
INVALID_IMAGE: Final = "invalid_image"
IMAGE_TOO_LARGE: Final = "image_too_large"
LAYER_LIMIT: Final = "layer_limit"
GRAPHICS_BUDGET_EXCEEDED: Final = "graphics_budget_exceeded"
INTEGRATION_INSTALL_FAILED: Final = "integration_install_failed"
INTEGRATION_UNINSTALL_FAILED: Final = "integration_uninstall_failed"
#: The simulator's own code for a protocol method it deliberately does not implement.
NOT_SUPPORTED: Final = "not_supported_by_simulator"
# codes of the simulator's own, where Herdr's source gives none (docs/simulator/fidelity.md):
# a copy-mode request made against content that changed since; Herdr's toast title when
# opening the scrollback editor fails, answered as a code; a plugin file another user planted
CONTENT_REVISION_MISMATCH: Final = "content_revision_mismatch"
EDIT_SCROLLBACK_FAILED: Final = "edit_scrollback_failed"
PLUGIN_UNTRUSTED: Final = "plugin_untrusted"
#: every code the simulator answers that is not Herdr's, each listed in fidelity.md
SIMULATOR_OWN_CODES: Final = frozenset(
    {NOT_SUPPORTED, CONTENT_REVISION_MISMATCH, EDIT_SCROLLBACK_FAILED, PLUGIN_UNTRUSTED}
)


class HerdrRequestError(Exception):
    """An error answered on the wire as ``{"id":…,"error":{"code":…,"message":…}}``: the
    simulator's refusal of a request (the client's side of it is
    :class:`orchestrator.client.HerdrError`)."""

    def __init__(self, code: str, message: str, *, id_suffix: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        #: Herdr answers some internal-probe failures with ``<request id><suffix>`` as id
        #: (e.g. ``:sub:0:probe`` when ``events.wait`` cannot find its pane).
        self.id_suffix = id_suffix

    def body(self) -> dict[str, str]:
        """The ``error`` object of the response envelope."""
        return {"code": self.code, "message": self.message}


# --- message builders (exact templates of real Herdr) ----------------------------------------


#: the simulator's modules' spelling of :class:`HerdrRequestError` (the same class; the public
#: face, ``herdr_sim.HerdrRequestError``, has the one name, distinct from the client's
#: ``orchestrator.client.HerdrError``)
HerdrError = HerdrRequestError


def invalid_request(detail: str) -> HerdrError:
    """A request line that does not parse, answered with an empty id."""
    return HerdrError(INVALID_REQUEST, f"invalid request: {detail}")


def pane_not_found(pane_id: str | None = None) -> HerdrError:
    """Direct targets name the pane; optional/current targets say just "pane not found"."""
    if pane_id is None:
        return HerdrError(PANE_NOT_FOUND, "pane not found")
    return HerdrError(PANE_NOT_FOUND, f"pane {pane_id} not found")


def workspace_not_found(workspace_id: str) -> HerdrError:
    """An unknown workspace id or position."""
    return HerdrError(WORKSPACE_NOT_FOUND, f"workspace {workspace_id} not found")


def no_active_workspace() -> HerdrError:
    """``tab.create`` without a workspace while none is active."""
    return HerdrError(WORKSPACE_NOT_FOUND, "no active workspace")


def tab_not_found(tab_id: str) -> HerdrError:
    """An unknown tab id or position."""
    return HerdrError(TAB_NOT_FOUND, f"tab {tab_id} not found")


def invalid_key(key: str) -> HerdrError:
    """A key combo that Herdr's parser rejects; nothing has been written."""
    return HerdrError(INVALID_KEY, f"unsupported key {key}")


def group_close_needs_confirmation(what: str) -> HerdrError:
    """Closing the last ``what`` ("pane", "tab") of a worktree group's parent workspace
    would close the whole group; Herdr asks for confirmation (``confirm_close`` is on by
    default) and closes nothing."""
    return HerdrError(CONFIRMATION_REQUIRED, f"closing this {what} would close a worktree group")


def server_shutting_down() -> HerdrError:
    """Every request after ``server.stop`` was accepted."""
    return HerdrError(SERVER_UNAVAILABLE, "server is shutting down")


def not_supported(method: str) -> HerdrError:
    """A protocol-22 method the simulator does not implement (listed in docs/simulator)."""
    return HerdrError(
        NOT_SUPPORTED,
        f"{method} is not supported by the simulator (herdr-sim); see docs/simulator/fidelity.md",
    )
