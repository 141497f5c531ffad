"""The task families besides GOAT (``goat-nav bench --suite NAME``): one module per family with
``run_suite(args: argparse.Namespace) -> int``, called with the parsed ``goat-nav bench`` arguments."""
