"""Method handlers, one module per API area; each registers itself in :mod:`herdr_sim.registry`."""
