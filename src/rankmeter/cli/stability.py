"""`rankmeter stability QRELS RUN RUN [RUN ...]`: how much can this query set be trusted?"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    JudgedOnlyOption,
    MetricOption,
    OutputOption,
    QrelsArgument,
    RelOption,
    Ties,
    TiesOption,
    keep_inputs,
)


class StabilityFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


def stability(
    qrels: QrelsArgument,
    runs: Annotated[list[str], typer.Argument(help="Two or more run files.")],
    metric: MetricOption = None,
    resamples: Annotated[
        int, typer.Option(help="Bootstrap resamples of the queries (100 or more).")
    ] = 1_000,
    splits: Annotated[
        int, typer.Option(help="Random splits of the queries into two halves (100 or more).")
    ] = 1_000,
    seed: Annotated[int, typer.Option(help="Seed: the same seed gives the same numbers.")] = 0,
    rel: RelOption = 1,
    judged_only: JudgedOnlyOption = False,
    ties: TiesOption = Ties.trec_eval,
    output_format: Annotated[
        StabilityFormat,
        typer.Option("--format", "-f", help="Output format (html: one self-contained page)."),
    ] = StabilityFormat.table,
    output: OutputOption = None,
) -> None:
    """How much can this query set be trusted? How often bootstrap resamples of the queries
    and random halves of them keep the systems' order, per metric and pair, with Kendall's tau.

    Default metrics: nDCG@10 P@10 R@100 RR AP (compare's). The queries are every judged query;
    a run without results for one scores 0 on it (trec_eval -c).
    """
    keep_inputs(output, {"QRELS": qrels, "RUNS": runs})
    from rankmeter.comparison import stability as measure
    from rankmeter.errors import PolicyError
    from rankmeter.io import read_qrels, read_run
    from rankmeter.metrics import DEFAULT_METRICS
    from rankmeter.report import render
    from rankmeter.results import unique_names

    if [qrels, *runs].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    if len(runs) < 2:
        raise PolicyError(f"stability needs two runs or more; got {len(runs)}")
    names = list(dict.fromkeys(metric or [])) or list(DEFAULT_METRICS)
    loaded_qrels = read_qrels(qrels)
    loaded = [read_run(path, ties=ties.value) for path in runs]
    named = dict(zip(unique_names([r.name for r in loaded], runs), loaded, strict=True))
    result = measure(
        loaded_qrels,
        named,
        names,
        resamples=resamples,
        splits=splits,
        seed=seed,
        rel=rel,
        judged_only=judged_only,
        ties=ties.value,
    )
    render(result, output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(stability)
