"""The pixels of the embedded simulator do not depend on llvmpipe's thread count: a worker of ``--workers N`` renders
with ``process_pool.renderer_threads`` (``LP_NUM_THREADS=0``, in its own thread, when it has a core of its own),
a serial run with a thread per core, and both must give the same observations and so the same actions.

Each thread count renders in a fresh process (Mesa reads LP_NUM_THREADS when the renderer starts)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

RENDER = """
import hashlib
import numpy as np
from goat_core.types import DiscreteAction
from sim_bridge.embedded.home import generate_home, home_config_for
from sim_bridge.embedded.sim import EmbeddedSim

sim = EmbeddedSim(generate_home(5000, home_config_for("small")))
sim.reset(sim.navgrid.sample_navigable(np.random.default_rng(0)), 0.0)
digest = hashlib.sha256()
for k in range(6):
    obs = sim.observe()
    for image in (obs.rgb, obs.depth_m, obs.segmentation):
        digest.update(np.ascontiguousarray(image).tobytes())
    sim.step(DiscreteAction.MOVE_FORWARD if k % 2 else DiscreteAction.TURN_LEFT)
print(digest.hexdigest())
"""


def _frames_digest(lp_threads: str) -> str:
    env = {**os.environ, "LP_NUM_THREADS": lp_threads}
    done = subprocess.run([sys.executable, "-c", RENDER], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_frames_are_the_same_whatever_llvmpipe_thread_count() -> None:
    in_thread = _frames_digest("0")  # a worker with a core of its own
    assert len(in_thread) == 64
    assert _frames_digest("2") == in_thread  # a serial run on two cores
