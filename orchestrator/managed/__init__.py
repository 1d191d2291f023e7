"""Managed agents (seed 002): see docs/orchestrator/managed-agents.md."""
