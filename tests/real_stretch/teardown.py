"""Ending a real stretch_body Robot completely between tests (many Robots start in one test process here)."""

from __future__ import annotations

import asyncio
from typing import Any


def end_event_loop(robot: Any) -> None:
    """End the asyncio thread that stretch_body 0.7.31's ``Robot.stop()`` leaves running, and close the event loops
    of that thread and of the NonDXLStatusThread with their default executors.

    ``Robot.stop_event_loop`` passes ``loop.stop()``'s return value (None) to ``asyncio.run_coroutine_threadsafe``,
    which raises TypeError (swallowed there), so the thread idles in its selector for ever; one is left per Robot.
    Each loop's default executor (``run_in_executor(None, lock.acquire)`` in ``Transport.do_*_rpc_async``) keeps
    its idle worker threads as long as the loop lives. A robot process starts one Robot and exits, so only tests
    pile them up (about a hundred threads by the ninth test, which also hid the main thread from faulthandler's
    hang dump).
    """
    loop, thread = getattr(robot, "async_event_loop", None), getattr(robot, "event_loop_thread", None)
    if loop is not None and thread is not None and thread.is_alive():
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5.0)
        if thread.is_alive():
            raise RuntimeError("stretch_body's event loop thread did not end")
    _close(loop)
    status = getattr(robot, "non_dxl_thread", None)
    if status is not None:
        status.join(timeout=5.0)  # Robot.stop() waits 1 s only
        if status.is_alive():
            raise RuntimeError("stretch_body's NonDXLStatusThread did not end")
        _close(status.loop)


def _close(loop: asyncio.AbstractEventLoop | None) -> None:
    """Shut ``loop``'s default executor down (its workers end) and close it; the loop must not be running."""
    if loop is None or loop.is_closed() or loop.is_running():
        return
    shutdown = loop.create_task(loop.shutdown_default_executor())
    # NonDXLStatusThread.stop() calls loop.stop() on its idle loop: that pending stop ends the next run at once
    # ("Event loop stopped before Future completed"), so the shutdown may need a second run.
    for _ in range(2):
        try:
            loop.run_until_complete(shutdown)
            break
        except RuntimeError:
            if shutdown.done():
                raise
    loop.close()
