"""A Herdr client: socket, CLI and auto transports, typed results, an error hierarchy.

Import the pieces from their modules (``orchestrator.client.sync.HerdrClient``,
``orchestrator.client.aio.AsyncHerdrClient``, ``orchestrator.client.errors``); this package
module stays import-light so ``import orchestrator`` costs nothing.
"""

from __future__ import annotations
