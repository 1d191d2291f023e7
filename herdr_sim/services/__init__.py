"""herdr_sim.services."""
