"""What the suites share: the episode format, results files and metrics, the official protocols, the runner and
its workers, parallel runs and the report."""
