"""A fake LLM server per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from herdr_sim.fake_llm import FakeLLM


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server
