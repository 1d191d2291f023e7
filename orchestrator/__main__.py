"""``python -m orchestrator``: the ``herdr-orchestrator`` command without the console script."""

from __future__ import annotations

from orchestrator.cli import main

raise SystemExit(main())
