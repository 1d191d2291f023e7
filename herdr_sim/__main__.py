"""``python -m herdr_sim`` is ``herdr-sim``."""

from __future__ import annotations

import sys

from herdr_sim.command import main

sys.exit(main())
