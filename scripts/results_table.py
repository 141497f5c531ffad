"""Markdown rows of docs/results.md from results files of ``goat-nav bench --out`` (see goat_nav.results_table)."""

import sys

from goat_nav.results_table import main

if __name__ == "__main__":
    sys.exit(main())
