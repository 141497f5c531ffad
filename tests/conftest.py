"""Suite-wide set-up.

A shell that starts pytest in the background without job control (``cmd &`` in a script, ``nohup``) makes it
ignore SIGINT, and an ignored signal stays ignored in every child: the commands that the tests interrupt with
Ctrl-C (a benchmark run, ``goat-nav goal``, a launched graph) would never see it, and a graph a test cannot stop
would keep publishing into the next test's ROS domain. With a handler here instead, children start with the
default disposition (exec resets handlers, not ignores), as they do under an interactive shell or CI.
"""

import signal

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
