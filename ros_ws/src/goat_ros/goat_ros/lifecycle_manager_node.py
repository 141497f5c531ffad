"""The lifecycle manager: brings the graph's lifecycle nodes up, and pauses and resumes them, through their
``<node>/change_state`` services (lifecycle_msgs), as nav2's lifecycle_manager does for its nodes.

At start-up (``autostart``) it waits for each node of ``node_names`` to be discovered, configures them in order,
then activates them in order; a node that fails a transition, or does not answer in time, stops the start-up with
an error naming it (the node process then ends, and ``goat-nav launch`` stops the graph). Services (std_srvs/
Trigger) under the manager's name:

- ``~/pause``: deactivate every node, in reverse order (the robot stops, the controller ends its subtask as an
  error ``paused``; nothing restarts, maps and models stay);
- ``~/resume``: activate them again (also what starts a manager with ``autostart`` false, after configuring);
- ``~/status``: ``success`` when every node is active; ``message`` names each node's state.

e.g. ``ros2 service call /lifecycle_manager/pause std_srvs/srv/Trigger``. Every call is a coroutine: the manager
never blocks its executor, so it also runs in one process with the nodes it manages (``goat-nav launch``).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.task import Future
from std_srvs.srv import Trigger

from goat_ros.lifecycle import ACTIVATE, ACTIVE, CONFIGURE, DEACTIVATE, INACTIVE, STATE_NAMES, LifecycleError
from goat_ros.params import LifecycleManagerParams, declare

TRANSITION_NAMES = {CONFIGURE: "configure", ACTIVATE: "activate", DEACTIVATE: "deactivate"}
POLL_S = 0.05


class LifecycleManagerNode(Node):
    def __init__(self, name: str = "lifecycle_manager", cli_args: Optional[list[str]] = None) -> None:
        super().__init__(name, cli_args=cli_args)
        self.params = declare(self, LifecycleManagerParams)
        self.names = self.params.node_names.split()
        if not self.names:
            raise LifecycleError("lifecycle_manager: node_names is empty; name the nodes to manage")
        # Reentrant: a coroutine holds its callback group until it ends, and its own timers and service answers
        # must run meanwhile.
        self._group = ReentrantCallbackGroup()
        self._change = {n: self.create_client(ChangeState, f"/{n}/change_state", callback_group=self._group)
                        for n in self.names}
        self._get = {n: self.create_client(GetState, f"/{n}/get_state", callback_group=self._group)
                     for n in self.names}
        self.states: dict[str, int] = {n: 0 for n in self.names}  # the last state each node reported
        self.started = False  # every node configured (and, with autostart, activated)
        self.error: Optional[str] = None  # why the start-up failed
        self._starting = False
        self.create_service(Trigger, "~/pause", self._on_pause, callback_group=self._group)
        self.create_service(Trigger, "~/resume", self._on_resume, callback_group=self._group)
        self.create_service(Trigger, "~/status", self._on_status, callback_group=self._group)
        self._startup_timer = self.create_timer(0.0, self._startup, callback_group=self._group)

    # ----------------------------------------------------------------------------------------- waiting
    async def _sleep(self, seconds: float) -> None:
        done: Future = Future()

        def fire() -> None:
            timer.cancel()
            done.set_result(None)

        timer = self.create_timer(seconds, fire, callback_group=self._group)
        try:
            await done
        finally:
            self.destroy_timer(timer)

    async def _until(self, ready: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if time.monotonic() > deadline:
                raise LifecycleError(f"lifecycle_manager: {what} within {timeout_s:.0f} s")
            await self._sleep(POLL_S)

    async def _call(self, client: Any, request: Any, what: str) -> Any:
        await self._until(client.service_is_ready, self.params.service_timeout_s, f"no {client.srv_name} ({what})")
        future = client.call_async(request)
        await self._until(future.done, self.params.transition_timeout_s, f"no answer to {what}")
        return future.result()

    # ----------------------------------------------------------------------------------------- transitions
    async def transition(self, name: str, transition_id: int) -> None:
        """One transition of one node; LifecycleError naming both when it fails."""
        what = f"{TRANSITION_NAMES[transition_id]} {name!r}"
        response = await self._call(self._change[name], ChangeState.Request(transition=Transition(id=transition_id)),
                                    what)
        state = await self._call(self._get[name], GetState.Request(), f"the state of {name!r}")
        self.states[name] = int(state.current_state.id)
        if not response.success:
            raise LifecycleError(f"lifecycle_manager: {what} failed; the node is "
                                 f"{STATE_NAMES.get(self.states[name], '?')} (its log says why)")
        self.get_logger().info(f"{name}: {STATE_NAMES.get(self.states[name], '?')}")

    async def _to_state(self, names: list[str], want: int, transition_id: int) -> None:
        for name in names:
            state = await self._call(self._get[name], GetState.Request(), f"the state of {name!r}")
            self.states[name] = int(state.current_state.id)
            if self.states[name] != want:
                await self.transition(name, transition_id)

    async def _startup(self) -> None:
        self._startup_timer.cancel()  # once (destroying it would cancel this coroutine, the timer's task)
        if self._starting:  # the timer fired again before the first run cancelled it
            return
        self._starting = True
        try:
            await self._to_state(self.names, INACTIVE, CONFIGURE)
            if self.params.autostart:
                await self._to_state(self.names, ACTIVE, ACTIVATE)
        except LifecycleError as exc:
            self.error = str(exc)
            self.get_logger().error(self.error)
            raise
        self.started = True
        self.get_logger().info(f"managed nodes {'active' if self.params.autostart else 'configured'}: "
                               f"{', '.join(self.names)}")

    async def pause(self) -> None:
        await self._to_state(list(reversed(self.names)), INACTIVE, DEACTIVATE)

    async def resume(self) -> None:
        await self._to_state(self.names, ACTIVE, ACTIVATE)

    # ----------------------------------------------------------------------------------------- services
    async def _on_pause(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        return await self._answer(self.pause, response, "paused")

    async def _on_resume(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        return await self._answer(self.resume, response, "resumed")

    async def _answer(self, work: Callable[[], Any], response: Trigger.Response, done: str) -> Trigger.Response:
        if not self.started:
            response.success, response.message = False, self.error or "the start-up has not finished"
            return response
        try:
            await work()
        except LifecycleError as exc:
            response.success, response.message = False, str(exc)
            return response
        response.success, response.message = True, f"{done}: {self.describe()}"
        return response

    def _on_status(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success = all(s == ACTIVE for s in self.states.values())
        response.message = self.error or self.describe()
        return response

    def describe(self) -> str:
        return ", ".join(f"{n} {STATE_NAMES.get(s, '?')}" for n, s in self.states.items())


def main(args: Optional[list[str]] = None) -> None:
    from goat_ros.spin import run_nodes

    run_nodes([LifecycleManagerNode], args)


if __name__ == "__main__":
    main()
