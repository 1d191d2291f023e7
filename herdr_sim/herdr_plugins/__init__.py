"""Herdr plugins (``herdr-plugin.toml``: the manifest and registry in :mod:`.registry`,
running a plugin command in :mod:`.commands`) — Herdr's own plugin system, not the
pytest plugin (that is the ``pytest_herdr`` package). Handlers: ``herdr_sim.methods.plugins``,
``plugin_panes``, ``plugin_hooks``.
"""
