"""GOAT-Bench: the procedural episode generator, the report's goal views and credits, and the suite's parts."""
