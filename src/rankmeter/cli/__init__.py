"""The command-line interface: a thin Typer app over the library.

Typer is imported when a command line needs it: a plain ``rankmeter evaluate`` is read without
it (:mod:`rankmeter.cli._fast`), and ``rankmeter.cli.app`` (the Typer app) is built on first use.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from rankmeter.report.ending import Stopped, ending, stop_on_signals, tell
from rankmeter.report.streams import standard_streams

#: Set (to anything) to read every command line with Typer: no fast start (for tests).
NO_FAST_START = "RANKMETER_NO_FAST_START"

#: The modules of the commands, in the order of ``rankmeter --help``; each has ``register(app)``.
COMMANDS = (
    "evaluate",
    "check",
    "explain",
    "compare",
    "diff",
    "allpairs",
    "power",
    "stability",
    "sampling",
    "demo",
    "metrics",
    "ann",
    "retrieval",
    "embed",
    "pool",
    "agree",
    "label",
    "audit",
    "judge",
    "logs",
    "ab",
    "online",
    "interleave",
    "clicks",
    "leaderboard",
)


def __getattr__(name: str) -> Any:
    if name == "app":
        return _app()
    raise AttributeError(f"module 'rankmeter.cli' has no attribute {name!r}")


@functools.cache
def _app() -> Any:
    """The Typer app with every command (imports Typer and the commands' modules)."""
    import typer

    from rankmeter.cli._help import reflow_help

    app = typer.Typer(
        name="rankmeter",
        help="Is your search any good, and did the change make it better?",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for name in COMMANDS:
        importlib.import_module(f"rankmeter.cli.{name}").register(app)
    reflow_help(app)
    return app


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: data to stdout, one clear line to stderr on error (exit 2 usage, 1 data).

    Whatever ends the command ends it with one line (:func:`rankmeter.report.ending.ending`):
    bad input, an output that cannot be written, no memory, Ctrl-C (exit 130) or SIGTERM
    (exit 143), and a bug (exit 70).
    """
    with standard_streams():
        try:
            with stop_on_signals():
                code = _run(argv)
        except (Stopped, KeyboardInterrupt) as stop:  # (KeyboardInterrupt: where no handler
            code = tell(ending(stop))  # could be installed, in another thread)
    sys.exit(code)


def _run(argv: Sequence[str] | None) -> int:
    from rankmeter.cli import _fast

    fast = None
    if not os.environ.get(NO_FAST_START):
        fast = _fast.evaluate_args(list(sys.argv[1:] if argv is None else argv))
    try:
        if fast is not None:
            _fast.evaluate(fast)
            code = 0
        else:
            import typer

            command = typer.main.get_command(_app())
            code = command.main(
                args=list(argv) if argv is not None else None,
                prog_name="rankmeter",
                standalone_mode=False,
            )
        sys.stdout.flush()  # anything still buffered must fail here, not at exit
    except Exception as exc:
        end = ending(exc)
        if end.bug and os.environ.get("RANKMETER_DEBUG"):
            raise
        return tell(end)
    return code if isinstance(code, int) else 0
