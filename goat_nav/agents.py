"""Which method the benchmark runner runs (``goat-nav bench --agent``): the GOAT agent or a baseline of the core.

* ``goat`` (default): ``goat_core.agent.Agent`` with the perception backend and goal matcher of the stack;
* ``cow``: CLIP on Wheels (``goat_core.baselines.cow_agent``), with ground-truth perception only: its localizer is
  the goal category's ground-truth detections (docs/baselines.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

from goat_core.errors import ConfigError

if TYPE_CHECKING:  # the command line reads AGENTS without importing the agents
    from goat_core.agent import Agent
    from goat_core.baselines.cow_agent import CowAgent, CowAgentConfig
    from goat_core.matching.embeddings import SentenceEmbedder
    from goat_core.matching.selection import StackConfig

AGENTS = ("goat", "cow")

BenchAgent = Union["Agent", "CowAgent"]


def check_agent(name: str, stack: Optional[StackConfig] = None) -> None:
    """ConfigError naming the bad value: an unknown agent, or a stack the agent cannot run with."""
    if name not in AGENTS:
        raise ConfigError(f"agent must be one of {AGENTS}, got {name!r}")
    if name == "cow" and stack is not None and (stack.perception.backend != "ground_truth"
                                                or stack.matcher != "structured"):
        raise ConfigError(f"agent 'cow' runs with ground-truth perception and no goal matcher of the GOAT agent's; "
                          f"got {stack.describe()!r} (leave --perception and --matcher at their defaults)")


def build_baseline_agent(name: str, labels: Sequence[str], embedder: Optional[SentenceEmbedder] = None,
                         stack: Optional[StackConfig] = None, cow_config: Optional[CowAgentConfig] = None,
                         ) -> CowAgent:
    """The baseline ``name`` (not ``goat``) over ground-truth perception of ``labels``."""
    from goat_core.baselines.cow_agent import CowAgentConfig, build_cow_agent
    from goat_core.matching.embeddings import SentenceEmbedder
    from goat_core.perception.factory import PerceptionConfig, build_perception

    check_agent(name, stack)
    if name != "cow":
        raise ConfigError(f"agent {name!r} is not a baseline; build it with goat_nav.runner.build_agent")
    perception = build_perception(PerceptionConfig(), labels)
    return build_cow_agent(cow_config or CowAgentConfig(), perception,
                           embedder if embedder is not None else SentenceEmbedder())
