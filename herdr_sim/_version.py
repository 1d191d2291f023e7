"""Version numbers, kept in a tiny module so the `herdr` CLI can import them in microseconds."""

from __future__ import annotations

__version__ = "0.1.0"
#: The Herdr release whose behaviour the simulator reproduces, reported by `ping` by default.
HERDR_VERSION = "0.9.2"
#: The socket protocol number of that release.
PROTOCOL = 22
