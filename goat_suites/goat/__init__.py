"""GOAT-Bench: the procedural episode generator and the noise-robustness helpers of the GOAT suite."""
