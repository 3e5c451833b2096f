"""The command-line interface: a thin Typer app over the library."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import typer

from rankmeter._escape import visible
from rankmeter.errors import MetricError, PolicyError, RankmeterError

app = typer.Typer(
    name="rankmeter",
    help="Is your search any good, and did the change make it better?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

from rankmeter.cli import ann as _ann  # noqa: E402
from rankmeter.cli import compare as _compare  # noqa: E402
from rankmeter.cli import demo as _demo  # noqa: E402
from rankmeter.cli import embed as _embed  # noqa: E402
from rankmeter.cli import evaluate as _evaluate  # noqa: E402
from rankmeter.cli import explain as _explain  # noqa: E402
from rankmeter.cli import metrics as _metrics  # noqa: E402
from rankmeter.cli import retrieval as _retrieval  # noqa: E402

_evaluate.register(app)
_explain.register(app)
_compare.register(app)
_demo.register(app)
_metrics.register(app)
_ann.register(app)
_retrieval.register(app)
_embed.register(app)


def _one_line(text: str) -> str:
    """The message on one line, its control characters visible: a file name or an id in it
    must not drive the terminal (rankmeter._escape)."""
    return visible(" ".join(text.split()))


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: data to stdout, one clear line to stderr on error (exit 2 usage, 1 data)."""
    command = typer.main.get_command(app)
    try:
        code = command.main(
            args=list(argv) if argv is not None else None,
            prog_name="rankmeter",
            standalone_mode=False,
        )
    except (MetricError, PolicyError) as exc:
        print(f"rankmeter: error: {_one_line(str(exc))}", file=sys.stderr)
        sys.exit(2)
    except RankmeterError as exc:
        print(f"rankmeter: error: {_one_line(str(exc))}", file=sys.stderr)
        sys.exit(1)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:
        # Typer vendors click in recent versions, so its exceptions are matched by class name.
        kinds = {cls.__name__ for cls in type(exc).__mro__}
        if "NoArgsIsHelpError" in kinds:
            sys.exit(2)  # the help is already printed: no empty error line after it
        if "UsageError" in kinds:
            ctx = getattr(exc, "ctx", None)
            hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
            message = exc.format_message()  # type: ignore[attr-defined]
            print(f"rankmeter: error: {_one_line(message)}{hint}", file=sys.stderr)
            sys.exit(2)
        if "Abort" in kinds:
            print("rankmeter: interrupted", file=sys.stderr)
            sys.exit(130)
        if os.environ.get("RANKMETER_DEBUG"):
            raise
        # A bug, not bad input: still one line (the traceback with RANKMETER_DEBUG=1).
        print(
            f"rankmeter: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
            "(a bug in rankmeter: please report it with the command; RANKMETER_DEBUG=1 shows "
            "the traceback)",
            file=sys.stderr,
        )
        sys.exit(70)
    sys.exit(code if isinstance(code, int) else 0)
