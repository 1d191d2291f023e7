"""Managed agents (seed 002): labels, clock, health attention and the other foundations."""
