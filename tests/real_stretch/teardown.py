"""Ending a real stretch_body Robot completely between tests (many Robots start in one test process here)."""

from __future__ import annotations

from typing import Any


def end_event_loop(robot: Any) -> None:
    """End the asyncio thread that stretch_body 0.7.31's ``Robot.stop()`` leaves running.

    ``Robot.stop_event_loop`` passes ``loop.stop()``'s return value (None) to ``asyncio.run_coroutine_threadsafe``,
    which raises TypeError (swallowed there), so the thread idles in its selector for ever; one is left per Robot.
    A robot process starts one Robot and exits, so only tests pile them up.
    """
    loop, thread = getattr(robot, "async_event_loop", None), getattr(robot, "event_loop_thread", None)
    if loop is None or thread is None or not thread.is_alive():
        return
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5.0)
    if thread.is_alive():
        raise RuntimeError("stretch_body's event loop thread did not end")
