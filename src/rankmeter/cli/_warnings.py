"""The data warnings that ``evaluate`` and ``compare`` print on stderr beside their numbers
(a partial query overlap, scores rising with the rank), from what the evaluation saw itself
(:func:`rankmeter.checking.result_warnings`)."""

from __future__ import annotations

from typing import Any


def print_data_warnings(result: Any, *, quiet: bool, run_format: str | None = None) -> None:
    """One line per finding on stderr, control characters made visible; none when ``quiet``."""
    if quiet:
        return
    from rankmeter.checking import result_warnings
    from rankmeter.report.checking import warning_lines
    from rankmeter.report.streams import note

    for line in warning_lines(result_warnings(result, run_format=run_format)):
        note(line)
