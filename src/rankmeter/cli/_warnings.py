"""The data warnings that ``evaluate`` and ``compare`` print on stderr beside their numbers
(a partial query overlap, scores rising with the rank), from what the evaluation saw itself
(:func:`rankmeter.checking.result_warnings`)."""

from __future__ import annotations

import sys
from typing import Any


def print_data_warnings(result: Any, *, quiet: bool, run_format: str | None = None) -> None:
    """One line per finding on stderr, control characters made visible; none when ``quiet``."""
    if quiet:
        return
    from rankmeter.checking import result_warnings
    from rankmeter.report import visible
    from rankmeter.report.checking import warning_lines

    for line in warning_lines(result_warnings(result, run_format=run_format)):
        print(f"rankmeter: {visible(line)}", file=sys.stderr)
