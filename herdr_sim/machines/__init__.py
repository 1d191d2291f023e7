"""herdr_sim.machines."""
