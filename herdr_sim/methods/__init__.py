"""Method handlers, one module per API area; each registers itself in
:mod:`herdr_sim.registry`.

The core (runtime, server, registry) never imports a handler: whoever builds a server
(:class:`herdr_sim.simulator.Simulator`) or documents the API loads them here and hands the
table over.
"""

from __future__ import annotations

from herdr_sim.registry import METHODS, MethodEntry

__all__ = ["load_all"]


def load_all() -> dict[str, MethodEntry]:
    """Import every handler module so the registry is complete, and return it."""
    from . import (  # noqa: F401  (imported for their registrations)
        agent_manifests,
        agent_reports,
        agent_start,
        agent_view,
        agents,
        client_shell,
        client_ui,
        events,
        integration,
        layout,
        notification,
        pane,
        pane_copy,
        pane_graphics,
        pane_input,
        pane_io,
        pane_link,
        pane_scroll,
        pane_scrollback_edit,
        plugin_panes,
        plugins,
        server,
        tab,
        workspace,
        workspace_blocks,
        worktree,
    )

    return METHODS
