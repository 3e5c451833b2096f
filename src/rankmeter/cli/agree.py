"""`rankmeter agree LABELS [LABELS ...]`: agreement between raters.

One file is a long table (query_id, doc_id, rater, label); several files are qrels, one per
rater, each rater named after its file (``--raters`` names them otherwise).
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import OutputOption, keep_inputs


class AgreeFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


def agree(
    labels: Annotated[
        list[str],
        typer.Argument(
            help="One long table (CSV/TSV with a header, JSONL, Parquet: query_id, doc_id, "
            "rater, label), or several qrels files, one per rater.",
        ),
    ],
    scale: Annotated[
        str | None,
        typer.Option(help="The grades raters may give, e.g. 0-3: a label off it is an error."),
    ] = None,
    raters: Annotated[
        str | None,
        typer.Option(
            help="With several qrels files: the raters' names, in order, comma separated "
            "(default: each file's name)."
        ),
    ] = None,
    output_format: Annotated[
        AgreeFormat, typer.Option("--format", "-f", help="Output format.")
    ] = AgreeFormat.table,
    top: Annotated[int, typer.Option(help="How many of the most disputed items to list.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap interval of alpha.")] = 0,
    resamples: Annotated[
        int, typer.Option(help="Bootstrap resamples (of items) for alpha's interval.")
    ] = 1000,
    output: OutputOption = None,
) -> None:
    """Agreement between raters: raw agreement, Cohen's and weighted kappa per pair, Fleiss'
    kappa, Krippendorff's alpha with a bootstrap interval, confusion matrices, leniency and
    the most disputed items."""
    keep_inputs(output, {"LABELS": labels})
    from rankmeter.errors import PolicyError
    from rankmeter.judgments import agreement
    from rankmeter.judgments.agreement import rater_files
    from rankmeter.report import render

    given: str | dict[str, str]
    if len(labels) == 1:
        if raters is not None:
            raise PolicyError(
                "--raters names the raters of several qrels files; a long table names them in "
                "its rater column"
            )
        given = labels[0]
    else:
        if labels.count("-") > 1:
            raise PolicyError("only one input can be read from stdin ('-')")
        given = rater_files(labels, raters)
    result = agreement(given, scale=scale, top=top, seed=seed, resamples=resamples)
    render(result, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(agree)
