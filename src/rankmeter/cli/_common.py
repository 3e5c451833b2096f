"""Helpers shared by commands: writing output atomically, consoles."""

from __future__ import annotations

import io
import sys
from enum import Enum
from typing import Annotated, Any

import typer


class Ties(str, Enum):
    trec_eval = "trec_eval"
    input = "input"


class InputFormat(str, Enum):
    trec = "trec"
    csv = "csv"
    tsv = "tsv"
    jsonl = "jsonl"
    parquet = "parquet"


# Options shared by the commands: one declaration each, so names and help never drift apart.
RelOption = Annotated[
    float, typer.Option("--rel", "-l", help="Minimum grade counted relevant (trec_eval -l).")
]
JudgedOnlyOption = Annotated[
    bool,
    typer.Option("--judged-only", "-J", help="Drop unjudged documents first (trec_eval -J)."),
]
TiesOption = Annotated[
    Ties,
    typer.Option(help="Order of equal scores: trec_eval (doc id descending) or input order."),
]
OutputOption = Annotated[
    str | None,
    typer.Option("--output", "-o", help="Write to this file (atomically) instead of stdout."),
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


def emit(text: str, output: str | None) -> None:
    """Write text to stdout, or atomically to a file."""
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
    from rankmeter.io._atomic import atomic_write

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
