"""Other methods run in the same harness as the GOAT agent, for comparison (``goat-nav bench --agent``)."""
