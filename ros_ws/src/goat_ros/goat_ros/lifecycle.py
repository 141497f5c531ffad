"""Lifecycle nodes (``rclpy.lifecycle``) of the graph: what they share, and the transitions a manager drives.

A lifecycle node starts *unconfigured*; *configure* builds what it needs (the robot, the agent) and its ROS
entities, *activate* lets it act, *deactivate* pauses it (it keeps its state and its entities), *cleanup* drops
what configure built. The stretch driver and the controller are such nodes. With their ``autostart`` parameter
(the default) they configure and activate themselves at start-up (:func:`autostart`), so a node started alone
behaves as a plain node; ``goat-nav launch`` and the launch files set ``autostart`` false and start the lifecycle
manager (:mod:`goat_ros.lifecycle_manager_node`), which drives the transitions and can pause and resume them.
"""

from __future__ import annotations

from typing import Any, Optional

from rclpy.action import ActionServer
from rclpy.lifecycle import LifecycleState, TransitionCallbackReturn

from goat_core.errors import GoatError

# Transition ids of lifecycle_msgs/msg/Transition and the primary state ids of lifecycle_msgs/msg/State
CONFIGURE, CLEANUP, ACTIVATE, DEACTIVATE = 1, 2, 3, 4
UNCONFIGURED, INACTIVE, ACTIVE = 1, 2, 3
STATE_NAMES = {0: "unknown", 1: "unconfigured", 2: "inactive", 3: "active", 4: "finalized"}


class LifecycleError(GoatError):
    """A lifecycle transition failed or did not answer in time."""


class ManagedEntities:
    """The subscriptions, publishers, timers and action servers a lifecycle node makes at *configure*, so that
    *cleanup* can destroy them all (and a later *configure* make them anew)."""

    def __init__(self, node: Any) -> None:
        self.node = node
        self._made: list[tuple[str, Any]] = []

    def subscription(self, *args: Any, **kwargs: Any) -> Any:
        return self._keep("subscription", self.node.create_subscription(*args, **kwargs))

    def publisher(self, *args: Any, **kwargs: Any) -> Any:
        return self._keep("publisher", self.node.create_publisher(*args, **kwargs))

    def timer(self, *args: Any, **kwargs: Any) -> Any:
        return self._keep("timer", self.node.create_timer(*args, **kwargs))

    def action_server(self, *args: Any, **kwargs: Any) -> Any:
        return self._keep("action_server", ActionServer(self.node, *args, **kwargs))

    def _keep(self, kind: str, entity: Any) -> Any:
        self._made.append((kind, entity))
        return entity

    def destroy_all(self) -> None:
        while self._made:
            kind, entity = self._made.pop()
            if kind == "action_server":
                entity.destroy()
            else:
                getattr(self.node, f"destroy_{kind}")(entity)

    def __len__(self) -> int:
        return len(self._made)


class ReleasedAtTeardown:
    """Mixin of a lifecycle node that builds what it needs at *configure*: *cleanup*, *shutdown* and *error* all
    release it (the node's ``_release_configured``), and ``active`` says whether it may act (set by the node's
    *activate* and *deactivate*). List it before ``LifecycleNode`` among the bases."""

    _active: bool
    params: Any  # the node's parameters (``autostart`` among them)

    def _start_lifecycle(self) -> None:
        """End of a node's ``__init__``: nothing configured (``_entities`` will hold what *configure* makes),
        inactive, and with ``autostart`` configured and activated at once."""
        self._entities = ManagedEntities(self)
        self._active = False
        self.start_error: Optional[BaseException] = None  # why the last configure failed
        if self.params.autostart:
            autostart(self)

    def _release_configured(self) -> None:
        raise NotImplementedError

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release_configured()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release_configured()
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release_configured()
        return TransitionCallbackReturn.SUCCESS

    @property
    def active(self) -> bool:
        return self._active


def autostart(node: Any) -> None:
    """Configure and activate ``node`` (a LifecycleNode) at once, as a plain node starts; a failed configure
    raises what the node stored in ``start_error`` (else LifecycleError)."""
    if node.trigger_configure() != TransitionCallbackReturn.SUCCESS:
        error = getattr(node, "start_error", None)
        if isinstance(error, BaseException):
            raise error
        raise LifecycleError(f"{node.get_name()}: configure failed (see its log)")
    if node.trigger_activate() != TransitionCallbackReturn.SUCCESS:
        raise LifecycleError(f"{node.get_name()}: activate failed (see its log)")
