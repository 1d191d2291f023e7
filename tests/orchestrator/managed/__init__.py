"""Unit tests of the managed-agent foundations (orchestrator.managed)."""
