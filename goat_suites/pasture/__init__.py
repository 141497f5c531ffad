"""PASTURE (CoWs on Pasture): the episode loader, the procedural generator and the suite run."""
