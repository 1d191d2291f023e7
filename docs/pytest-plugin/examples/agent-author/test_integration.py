"""The integration guide's checklist for my-agent, one pytest item per rule."""

from __future__ import annotations

import pytest


@pytest.mark.herdr_integration(["my-agent"], timeout=5)
def test_herdr_integration(herdr_integration_rule):
    herdr_integration_rule.check()
