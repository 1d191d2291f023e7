"""pytest_herdr: pytest fixtures for Herdr integrations (built on herdr_sim).

The plugin itself arrives with its own issue; the package exists so the layout is final.
"""

from __future__ import annotations
