"""Herdr's protocol facts under the simulator's name: :mod:`orchestrator.client.protocol`.

The facts live with the Herdr client library, the base layer every package builds on (the
simulator, its ``herdr`` CLI, the orchestrator and the pytest plugin). This public module
re-exports them for code that knows the simulator only; the project's own modules import
the home module.
"""

from __future__ import annotations

from orchestrator.client.protocol import *  # noqa: F403
