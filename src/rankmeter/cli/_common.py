"""Helpers shared by commands: the options they share (declared once each, so that names,
short forms and help never drift apart), writing output atomically, consoles."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from enum import Enum
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from rankmeter.errors import MetricError, RankmeterError
from rankmeter.metrics.goals import GOAL_NAMES


class Ties(str, Enum):
    trec_eval = "trec_eval"
    input = "input"


class InputFormat(str, Enum):
    trec = "trec"
    csv = "csv"
    tsv = "tsv"
    jsonl = "jsonl"
    parquet = "parquet"


def _whole(value: float | None) -> float | None:
    """``--rel 2`` as the integer 2 (as the API's ``rel=2``), a fraction as it is."""
    return int(value) if value is not None and float(value).is_integer() else value


# Options and arguments shared by the commands: one declaration each. A command names its
# default metrics in its own help (they differ: evaluate's five, embed-eval's three).
QRELS_HELP = "Qrels file (TREC, CSV/TSV, JSONL, Parquet; .gz; - for stdin)."
QrelsArgument = Annotated[str, typer.Argument(help=QRELS_HELP)]
MetricOption = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        "-m",
        help="Metric, repeatable: nDCG@10, P@10, R@100, RR, AP, nDCG(gain=exp)@10, P(rel=2)@5, "
        "trec_eval names (ndcg_cut.10, map). See `rankmeter metrics`.",
    ),
]
GOAL_HELP = (
    f"The metrics that answer a goal, and why: {', '.join(GOAL_NAMES)} (finding everything "
    "relevant; a good first page; one right answer; the pool a reranker reads). evaluate and "
    "compare add them after any -m metrics; metrics lists them."
)
GoalOption = Annotated[str | None, typer.Option("--goal", metavar="GOAL", help=GOAL_HELP)]
PerQueryOption = Annotated[
    bool,
    typer.Option(
        "--per-query",
        "-q",
        help="Also give every query's values (as trec_eval -q).",
    ),
]
RelOption = Annotated[
    float,
    typer.Option(
        "--rel", "-l", callback=_whole, help="Minimum grade counted relevant (trec_eval -l)."
    ),
]
JudgedOnlyOption = Annotated[
    bool,
    typer.Option("--judged-only", "-J", help="Drop unjudged documents first (trec_eval -J)."),
]
TiesOption = Annotated[
    Ties,
    typer.Option(help="Order of equal scores: trec_eval (doc id descending) or input order."),
]


def check_output(ctx: typer.Context, param: typer.CallbackParam, value: str | None) -> str | None:
    """The callback of every option that names a file to write (``-o``, ``--run-out``,
    ``--report``): the target is checked as the final write will check it
    (:func:`rankmeter.io._atomic.check_target`), while the options are parsed, so before any
    input is read; and two outputs of one command must not be one file (the second write would
    replace the first). ``-`` is standard output."""
    if value is None or value == "-":
        return value
    from rankmeter.errors import PolicyError
    from rankmeter.io import check_target, same_target

    check_target(value)
    option = max(param.opts, key=len)
    seen: list[tuple[str, str]] = ctx.meta.setdefault("rankmeter.outputs", [])
    for earlier_option, earlier in seen:
        if same_target(earlier, value):
            raise PolicyError(
                f"{earlier_option} {earlier} and {option} {value} are the same file: give each "
                "output its own"
            )
    seen.append((option, value))
    return value


def check_optional_output(
    ctx: typer.Context, param: typer.CallbackParam, value: str | None
) -> str | None:
    """:func:`check_output` for an option where ``''`` means no file at all."""
    return value if value == "" else check_output(ctx, param, value)


OutputOption = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="Write to this file (atomically) instead of stdout.",
        callback=check_output,
    ),
]
QrelsFormatOption = Annotated[
    InputFormat | None, typer.Option(help="Qrels format, when the file name does not tell.")
]
QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet", help="No progress bar (it appears on a terminal's stderr after 2 s of work)."
    ),
]
RunFormatOption = Annotated[
    InputFormat | None, typer.Option(help="Run format, when the file name does not tell.")
]


class GoalCommand(TyperCommand):
    """A command with a ``--goal`` option: ``--goal`` without a value lists the valid goals."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except Exception as exc:
            # Typer vendors click, so its "Option '--goal' requires an argument" is matched by
            # the option it names; the main entry point turns MetricError into exit 2.
            if getattr(exc, "option_name", None) == "--goal":
                raise MetricError(
                    f"--goal needs a value; choose one of {', '.join(GOAL_NAMES)}"
                ) from None
            raise


class OutputError(RankmeterError):
    """Standard output cannot take the output: it is closed, the disk is full, an I/O error."""


class ClosedOutput(io.TextIOBase):
    """Stands for a standard output the command was started without (``>&-``)."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it is closed")


class DiscardedOutput(io.TextIOBase):
    """Stands for a standard error the command was started without (``2>&-``): diagnostics
    and the progress bar go nowhere (the exit status still tells), and never to stdout, where
    ``print(file=None)`` would send them."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)

    def isatty(self) -> bool:
        return False


def plug_closed_descriptors() -> None:
    """Open the null device on each of descriptors 0, 1 and 2 that the process started
    without: otherwise the next file opened (an input, the output's temporary file) would get
    that number, and whatever a library writes to "stderr" would land in it. Python's
    ``sys.stdin``/``sys.stdout``/``sys.stderr`` stay None: reading or writing them is still
    the error (or silence) the command chooses. Read-only, so a write there fails (EBADF)."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            with contextlib.suppress(OSError):
                plug = os.open(os.devnull, os.O_RDONLY)
                if plug != descriptor:  # a lower one was free too: plugged in its own turn
                    os.dup2(plug, descriptor)
                    os.close(plug)


class GuardedOutput:
    """Standard output whose write errors are :class:`OutputError` (one line), whoever writes:
    our emit, Rich, or Click printing the help. A closed reader (EPIPE) stays
    BrokenPipeError, which ends the command quietly. Everything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self.stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def silence_stdout() -> None:
    """After a failed write, send what is still buffered for stdout to /dev/null, so that
    Python's final flush at exit adds no "Exception ignored" message to the one error line."""
    with contextlib.suppress(Exception):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def emit(text: str, output: str | None) -> None:
    """Write text to stdout, or to a file (atomically: see :mod:`rankmeter.io._atomic`)."""
    if output is None or output == "-":
        try:
            sys.stdout.write(text)
        except UnicodeEncodeError:
            # A terminal or pipe set to ASCII (PYTHONIOENCODING, LANG=C on old systems) cannot
            # take non-ASCII ids; data is UTF-8 then, as in every file rankmeter writes.
            sys.stdout.flush()
            sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
        return
    from rankmeter.io import atomic_write

    with atomic_write(output) as handle:
        handle.write(text)


def render_rich(renderable: Any, output: str | None) -> None:
    """Print a rich renderable to stdout (or to a file, as plain text)."""
    from rich.console import Console

    if output is None or output == "-":
        try:
            Console(soft_wrap=False).print(renderable)
            return
        except UnicodeEncodeError:  # stdout cannot take the text: plain UTF-8 text, as emit does
            output = None
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(renderable)
    emit(console.export_text(), output)
