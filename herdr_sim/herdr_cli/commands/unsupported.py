"""Commands real Herdr has but the simulator cannot provide.

They fail loudly (exit 2, a message naming the simulator) instead of pretending to work:
a test that silently got an empty success from ``herdr agent attach`` would be a test
that passes against the simulator and fails against real Herdr.
"""

from __future__ import annotations

from ..output import write_err

__all__ = ["unsupported"]


def unsupported(command: str, reason: str) -> int:
    """Print why ``command`` is unavailable in the simulator and return exit code 2."""
    write_err(
        f"herdr {command}: not supported by the Herdr simulator's CLI ({reason}); "
        "the simulator implements the socket-API commands only"
    )
    return 2
