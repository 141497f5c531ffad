"""What the ROS nodes say of an error at their boundary (goat_ros.node_errors): a GoatError by its message, any
other error as an internal one, and a run of failing observation sets logged once."""

from __future__ import annotations

from goat_core.errors import InvalidObservationError
from goat_ros.node_errors import SetFailures, error_text


class _Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def error(self, line: str) -> None:
        self.lines.append(line)


def test_a_goat_error_is_said_by_its_message_any_other_as_internal() -> None:
    assert error_text(InvalidObservationError("depth has shape (2, 2)")) == "depth has shape (2, 2)"
    assert error_text(KeyError("rgb")) == "internal error KeyError: 'rgb'"


def test_a_run_of_failing_sets_is_logged_once_and_a_good_set_ends_it() -> None:
    log = _Log()
    failures = SetFailures(log, "observation set not localised")
    failures.failed(InvalidObservationError("no depth"))
    failures.failed(ValueError("again"))
    assert log.lines == ["observation set not localised: no depth"] and failures.failing
    failures.succeeded()
    failures.failed(ValueError("later"))
    assert log.lines[1:] == ["observation set not localised: internal error ValueError: later"]
