"""Which method the benchmark runner runs (``goat-nav bench --agent``): the GOAT agent or a baseline of the core.

* ``goat`` (default): ``goat_core.agent.Agent`` with the perception backend and goal matcher of the stack;
* ``cow``: CLIP on Wheels (``goat_core.baselines.cow_agent``). With ground-truth perception (the default stack)
  its localizer is the goal category's ground-truth detections; with the ``cow`` goal matcher's stack (OWL or CLIP
  relevance from a local model folder) it is CoW's own open-vocabulary localizer (docs/baselines.md).
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
    if name == "cow" and stack is not None and stack.matcher != "cow" and (
            stack.perception.backend != "ground_truth" or stack.matcher != "structured"):
        raise ConfigError(f"agent 'cow' runs with ground-truth perception or with CoW's own localizer (matcher "
                          f"'cow'), got {stack.describe()!r}")


def build_baseline_agent(name: str, labels: Sequence[str], embedder: Optional[SentenceEmbedder] = None,
                         stack: Optional[StackConfig] = None, cow_config: Optional[CowAgentConfig] = None,
                         ) -> CowAgent:
    """The baseline ``name`` (not ``goat``) over ground-truth perception of ``labels``."""
    from goat_core.baselines.cow_agent import CowAgent, CowAgentConfig, RelevanceLocalizer, build_cow_agent
    from goat_core.matching.cow import CowPerception
    from goat_core.matching.embeddings import SentenceEmbedder
    from goat_core.matching.selection import build_stack
    from goat_core.perception.factory import PerceptionConfig, build_perception

    check_agent(name, stack)
    if name != "cow":
        raise ConfigError(f"agent {name!r} is not a baseline; build it with goat_suites.common.runner.build_agent")
    if stack is not None and stack.matcher == "cow":  # CoW's own localizer: its models load here
        relevance, _ = build_stack(stack, labels)
        assert isinstance(relevance, CowPerception)
        return CowAgent(cow_config or CowAgentConfig(), RelevanceLocalizer(relevance))
    perception = build_perception(PerceptionConfig(), labels)
    return build_cow_agent(cow_config or CowAgentConfig(), perception,
                           embedder if embedder is not None else SentenceEmbedder())
