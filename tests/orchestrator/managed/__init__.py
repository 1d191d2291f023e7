"""Tests of the managed agents of seed 002 (orchestrator/managed)."""
