"""The GOAT agent: a dispatcher (``dispatcher.Agent``) over its parts, configured by ``config.AgentConfig``.

Parts, one module each: ``scanning`` (head tilt, looking around), ``targets`` (which instance to head for),
``approach`` (goal spot, walk, check by sight and STOP), ``inspection`` (closer looks at unsure candidates),
``exploration`` (frontiers), ``motion`` (driving, stuck detection); ``context`` holds what they share. Recoveries
are in ``goat_core.control.recovery``; ``config_file`` reads ``config/agent.yaml``.
"""

from goat_core.agent.config import AgentConfig
from goat_core.agent.context import DebugState, Mode
from goat_core.agent.dispatcher import Agent

__all__ = ["Agent", "AgentConfig", "DebugState", "Mode"]
