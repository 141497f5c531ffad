"""`goat-nav render`: a top-down map, first-person views and the model credits of one procedural home."""

from __future__ import annotations

import argparse
import time

from goat_suites.common.run_args import home_config_from_args
from sim_bridge.embedded.home import generate_home
from sim_bridge.embedded.home_render import render_home


def run_render(args: argparse.Namespace) -> int:
    started = time.monotonic()
    home = generate_home(args.seed, home_config_from_args(args))
    built = time.monotonic()
    written = render_home(home, args.out, views=args.views)
    print(f"home {args.seed} ({home.config.furniture}, {len(home.rooms)} rooms, {len(home.objects)} objects) built in "
          f"{built - started:.1f} s, rendered in {time.monotonic() - built:.1f} s")
    print(f"top-down map: {written.top_down}")
    for path in written.views:
        print(f"view: {path}")
    print(f"credits: {written.credits}")
    return 0
