"""herdr_sim.persist.session."""
