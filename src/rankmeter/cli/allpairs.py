"""`rankmeter all-pairs QRELS RUN RUN RUN [...]`: every pair of three or more systems, family-wise.

A command of its own rather than ``compare --all-pairs``: compare measures systems against one
baseline, and most of its options (--baseline, --test, --correction, --interval, --level,
--simultaneous, --segments, --queries, --worst, --cutoff, --goal, --judged-below) have no
meaning when every pair is compared by one family-wise method; the queries and the scores are
compare's all the same.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    JudgedOnlyOption,
    MetricOption,
    OutputOption,
    PerQueryOption,
    QrelsArgument,
    RelOption,
    Ties,
    TiesOption,
    keep_inputs,
)
from rankmeter.cli._warnings import print_data_warnings


class AllPairsFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    latex = "latex"
    html = "html"


class Method(str, Enum):
    tukey = "tukey"
    randomised_tukey = "randomised-tukey"


def all_pairs(
    qrels: QrelsArgument,
    runs: Annotated[list[str], typer.Argument(help="Three or more run files.")],
    metric: MetricOption = None,
    method: Annotated[
        Method,
        typer.Option(
            help="tukey: Tukey's HSD on the two-way (system + query) model. randomised-tukey: "
            "Carterette's randomised Tukey HSD (permutations of each query's scores)."
        ),
    ] = Method.tukey,
    alpha: Annotated[
        float, typer.Option(help="Family-wise significance level (all pairs of a metric).")
    ] = 0.05,
    resamples: Annotated[
        int, typer.Option(help="Random permutations (randomised-tukey).")
    ] = 10_000,
    seed: Annotated[
        int, typer.Option(help="Seed of the permutations: same seed, same numbers.")
    ] = 0,
    rel: RelOption = 1,
    judged_only: JudgedOnlyOption = False,
    ties: TiesOption = Ties.trec_eval,
    include_missing: Annotated[
        bool,
        typer.Option(
            "--include-missing/--answered-only",
            help="Which queries are compared, as in compare: every judged query (default), or "
            "only those some run answered. A run's missing query scores 0 either way.",
        ),
    ] = True,
    output_format: Annotated[
        AllPairsFormat,
        typer.Option("--format", "-f", help="Output format (html: one self-contained file)."),
    ] = AllPairsFormat.table,
    per_query: PerQueryOption = False,
    output: OutputOption = None,
) -> None:
    """Compare every pair of three or more runs: a two-way ANOVA, all pairs with the
    family-wise error held (Tukey HSD), and groups of runs that do not differ (letters).

    Default metrics: nDCG@10 P@10 R@100 RR AP (compare's). The queries are compare's: every
    judged query, a run without results for one scoring 0 on it.
    """
    keep_inputs(output, {"QRELS": qrels, "RUNS": runs})
    from rankmeter.checking import result_warnings
    from rankmeter.comparison import compare_all
    from rankmeter.errors import PolicyError
    from rankmeter.io import read_qrels, read_run
    from rankmeter.metrics import DEFAULT_METRICS
    from rankmeter.report import render
    from rankmeter.results import unique_names

    if [qrels, *runs].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    if len(runs) < 3:
        raise PolicyError(
            f"all-pairs needs 3 runs or more; got {len(runs)} (compare two runs with compare)"
        )
    names = list(dict.fromkeys(metric or [])) or list(DEFAULT_METRICS)
    loaded_qrels = read_qrels(qrels)
    loaded = [read_run(path, ties=ties.value) for path in runs]
    named = dict(zip(unique_names([r.name for r in loaded], runs), loaded, strict=True))
    result = compare_all(
        loaded_qrels,
        named,
        names,
        method=method.value,
        alpha=alpha,
        resamples=resamples,
        seed=seed,
        rel=rel,
        judged_only=judged_only,
        ties=ties.value,
        include_missing=include_missing,
    )
    # Runs cut at different depths (all-pairs keeps no run facts): in every document, as
    # compare puts them, and on stderr.
    found = result_warnings(result)
    render(result, output_format.value, output, per_query=per_query, data_warnings=found)
    print_data_warnings(result, quiet=False)


def register(app: typer.Typer) -> None:
    app.command("all-pairs", no_args_is_help=True)(all_pairs)
