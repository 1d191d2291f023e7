"""Version numbers, kept in a tiny module so the `herdr` CLI can import them in microseconds.

The socket protocol number lives with the other protocol facts in
:mod:`orchestrator.client.protocol`.
"""

from __future__ import annotations

from orchestrator.client.protocol import PROTOCOL

__all__ = ["HERDR_VERSION", "PROTOCOL", "__version__"]

__version__ = "0.1.0"
#: The Herdr release whose behaviour the simulator reproduces, reported by `ping` by default.
HERDR_VERSION = "0.9.2"
