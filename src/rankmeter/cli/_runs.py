"""Run arguments as every command reads them: ``PATH`` or ``NAME=PATH`` (no Typer here: the
fast start of ``evaluate`` reads its runs with these same functions). They live in the
library, :mod:`rankmeter.io.run_args`, where Python users reach them too.
"""

from __future__ import annotations

from rankmeter.io.run_args import (
    RunArgument,
    read_one_run,
    read_run_list,
    read_runs,
    run_argument,
    run_arguments,
    run_names,
)

__all__ = [
    "RunArgument",
    "read_one_run",
    "read_run_list",
    "read_runs",
    "run_argument",
    "run_arguments",
    "run_names",
]
