"""Managed pi agents (seed 002): the foundations of delegation (labels, clock, health
attention, the V4 mailbox)."""
