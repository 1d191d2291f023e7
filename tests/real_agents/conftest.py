"""The real-agent tier's opt-in part: opencode runs offline here, but too slowly and unevenly
for CI on two shared cores (16–20 s a test, and once in a loaded run it took over 5 s to
show a turn had started), so its tests are deselected — not skipped — unless
``PYTEST_HERDR_REAL_OPENCODE=1`` asks for them; .ci/install-real-agents does not install it.
See docs/simulator/real-agents.md."""

from __future__ import annotations

import os

import pytest

#: the test modules run only when their environment variable is ``1``
OPT_IN = {"test_opencode.py": "PYTEST_HERDR_REAL_OPENCODE"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the opt-in modules' tests unless asked for."""
    off = {name for name, variable in OPT_IN.items() if os.environ.get(variable) != "1"}
    if not off:
        return
    dropped = [item for item in items if item.path.name in off and "real_agents" in item.path.parts]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]
