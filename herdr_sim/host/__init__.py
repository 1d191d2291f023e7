"""herdr_sim.host."""
