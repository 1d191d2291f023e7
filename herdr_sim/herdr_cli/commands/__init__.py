"""One module per `herdr` command group; each exposes ``run(ctx, args) -> int``.

The application imports only the group a command line names, so ``herdr pane list`` never
pays for parsing code of ``agent start`` or ``status``.
"""

from __future__ import annotations
