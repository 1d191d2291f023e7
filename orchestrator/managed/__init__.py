"""Managed pi agents (seed 002): the foundations of delegation (definitions, labels, clock,
health attention, the V4 mailbox); see docs/orchestrator/managed-agents.md."""
