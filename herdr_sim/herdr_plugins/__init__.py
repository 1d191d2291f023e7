"""herdr_sim.herdr_plugins."""
