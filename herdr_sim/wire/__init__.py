"""herdr_sim.wire."""
