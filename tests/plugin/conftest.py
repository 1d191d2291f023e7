"""Fixtures for testing the plugin with ``pytester``: a stand-in "real" Herdr executable."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.standin_herdr import write_standin


@pytest.fixture
def standin_herdr(tmp_path: Path) -> Path:
    """An executable that behaves like a real ``herdr`` binary for the real backend
    (:mod:`tests.standin_herdr`): the simulator served where Herdr would serve a session.
    It lets the real-backend code path run in CI, where no Herdr is installed.
    """
    return write_standin(tmp_path)
