"""Managed pi agents (seed 002): the controller side of delegation, steering and results."""
