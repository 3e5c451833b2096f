"""`rankmeter compare QRELS RUN_A RUN_B [RUN_C ...]`."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    EvalEngine,
    EvalEngineOption,
    GoalCommand,
    GoalOption,
    IncludeMissingOption,
    JudgedBelowOption,
    JudgedOnlyOption,
    MetricOption,
    OutputOption,
    PerQueryOption,
    PoolOption,
    QrelsArgument,
    QrelsFormatOption,
    QuietOption,
    RelOption,
    RunFormatOption,
    SparkConfOption,
    SparkMasterOption,
    Ties,
    TiesOption,
    keep_inputs,
)
from rankmeter.cli._warnings import print_data_warnings
from rankmeter.report import Steps


class CompareFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    latex = "latex"
    html = "html"


class Test(str, Enum):
    randomization = "randomization"
    t = "t"
    bootstrap = "bootstrap"
    wilcoxon = "wilcoxon"
    sign = "sign"


class Correction(str, Enum):
    holm = "holm"
    bonferroni = "bonferroni"
    bh = "bh"
    none = "none"


class FailOn(str, Enum):
    regression = "regression"


#: The exit status of a failed regression gate (1 is bad data, 2 a usage error).
REGRESSION_EXIT = 3


class Interval(str, Enum):
    bca = "bca"
    percentile = "percentile"


def compare(
    qrels: QrelsArgument,
    runs: Annotated[
        list[str],
        typer.Argument(
            help="Two or more run files (NAME=PATH names a run); the first is the baseline."
        ),
    ],
    metric: MetricOption = None,
    goal: GoalOption = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline", "-b", help="The run (name or file) to compare with; default the first."
        ),
    ] = None,
    test: Annotated[
        Test,
        typer.Option(
            help="Paired test. randomization (default, sign flips), t, bootstrap; wilcoxon and "
            "sign test medians/signs, not the difference of means (not recommended)."
        ),
    ] = Test.randomization,
    correction: Annotated[
        Correction,
        typer.Option(help="Correction for the many comparisons (bh = Benjamini-Hochberg)."),
    ] = Correction.holm,
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    seed: Annotated[
        int, typer.Option(help="Seed of the randomizations: same seed, same numbers.")
    ] = 0,
    resamples: Annotated[int, typer.Option(help="Randomizations / bootstrap resamples.")] = 10_000,
    interval: Annotated[Interval, typer.Option(help="Bootstrap interval method.")] = Interval.bca,
    level: Annotated[float, typer.Option(help="Confidence level of the intervals.")] = 0.95,
    segments: Annotated[
        str | None,
        typer.Option(
            help="Table of query id -> tag columns (CSV/TSV/JSONL/Parquet), e.g. columns "
            "query_id,user,freq: every metric per segment, worse segments flagged."
        ),
    ] = None,
    min_segment: Annotated[
        int, typer.Option(help="Segments smaller than this are shown but never flagged.")
    ] = 20,
    queries: Annotated[
        str | None,
        typer.Option(help="Query texts (TSV qid<TAB>text, or BEIR queries.jsonl) for the lists."),
    ] = None,
    corpus: Annotated[
        str | None,
        typer.Option(
            help="BEIR corpus.jsonl (or its folder): with -f html -o REPORT.html, each system's "
            "diff against the baseline (rankmeter diff) is written beside the report "
            "(REPORT.diff.html) and its worst queries link to their rankings there."
        ),
    ] = None,
    worst: Annotated[
        int, typer.Option(help="How many of the most-losing queries to list per system.")
    ] = 10,
    cutoff: Annotated[
        int, typer.Option(help="Failure list: queries with nothing relevant in the top k.")
    ] = 10,
    rel: RelOption = 1,
    judged_only: JudgedOnlyOption = False,
    ties: TiesOption = Ties.trec_eval,
    include_missing: IncludeMissingOption = True,
    simultaneous: Annotated[
        bool,
        typer.Option(
            "--simultaneous/--marginal",
            help="Intervals of the differences: each on its own (default), or simultaneous "
            "(Bonferroni: all hold together at --level).",
        ),
    ] = False,
    output_format: Annotated[
        CompareFormat,
        typer.Option("--format", "-f", help="Output format (html: one self-contained file)."),
    ] = CompareFormat.table,
    per_query: PerQueryOption = False,
    qrels_format: QrelsFormatOption = None,
    run_format: RunFormatOption = None,
    output: OutputOption = None,
    judged_below: JudgedBelowOption = 0.9,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            "--fail-on",
            help="regression: a gate for CI. After the report, exit 3 when a system is "
            "significantly worse than the baseline (after the correction) on a metric or on "
            "a segment (see --segments) by more than --min-effect, one line per reason on "
            "stderr.",
        ),
    ] = None,
    min_effect: Annotated[
        float | None,
        typer.Option(
            "--min-effect",
            help="With --fail-on: the smallest drop of a mean, in the metric's units, that "
            "fails the gate (default 0: any significant drop).",
        ),
    ] = None,
    quiet: QuietOption = False,
    engine: EvalEngineOption = EvalEngine.process,
    spark_master: SparkMasterOption = None,
    spark_conf: SparkConfOption = None,
    pool: PoolOption = None,
) -> None:
    """Compare runs with a baseline: differences, intervals, paired tests, failures, segments.

    Default metrics: nDCG@10 P@10 R@100 RR AP. -q adds every query's values to the JSON. A
    run whose Judged@k is below --judged-below gets a warning in every format. With --engine
    spark the per-query values are computed on Spark, the statistics here; no run is read
    here (only the worst queries' results, for their explanations).

    Exit status: 0, or with --fail-on regression exit 3 when the gate fails (1 = bad data,
    2 = usage error).
    """
    from rankmeter.checking import result_warnings
    from rankmeter.comparison import check_min_effect, compare_files
    from rankmeter.errors import PolicyError
    from rankmeter.report import render, visible
    from rankmeter.report.comparison import gate_lines
    from rankmeter.results import check_judged_below

    judged_below = check_judged_below(judged_below)
    if min_effect is not None and fail_on is None:
        raise PolicyError(
            "--min-effect is the threshold of the regression gate: give --fail-on regression "
            "with it"
        )
    threshold = check_min_effect(0.0 if min_effect is None else min_effect)
    keep_inputs(
        output,
        {"QRELS": qrels, "RUNS": runs, "--segments": segments, "--queries": queries,
         "--corpus": corpus, "--pool": pool},
    )  # fmt: skip
    done = compare_files(
        qrels,
        runs,
        metric,
        goal=goal,
        baseline=baseline,
        test=test.value,
        correction=correction.value,
        alpha=alpha,
        resamples=resamples,
        seed=seed,
        interval=interval.value,
        level=level,
        segments=segments,
        min_segment=min_segment,
        queries=queries,
        corpus=corpus,
        output_format=output_format.value,
        worst=worst,
        cutoff=cutoff,
        rel=rel,
        judged_only=judged_only,
        ties=ties.value,
        include_missing=include_missing,
        simultaneous=simultaneous,
        qrels_format=qrels_format.value if qrels_format else None,
        run_format=run_format.value if run_format else None,
        engine=engine.value,
        spark_master=spark_master,
        spark_conf=spark_conf,
        stages=lambda total: Steps(total=total, enabled=False if quiet else None),
        command_line=True,
        inclusion=pool,
    )
    for note in () if quiet else done.goal_notes:
        print(visible(f"note: {note}"), file=sys.stderr)
    # The documents say what the CI log says (print_data_warnings below): a partial query
    # overlap, scores rising with the rank, runs cut at different depths.
    result = done.comparison
    found = result_warnings(result)
    render(
        result,
        output_format.value,
        output,
        per_query=per_query,
        judged_below=judged_below,
        data_warnings=found,
        diffs=done.diffs,
        written_to=output,
    )
    print_data_warnings(result, quiet=quiet)
    if fail_on is FailOn.regression:
        gate = result.gate(threshold)
        for line in gate_lines(gate) if gate.regressions or not quiet else ():
            print(f"rankmeter: {visible(line)}", file=sys.stderr)
        if not gate.passed:
            raise typer.Exit(REGRESSION_EXIT)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True, cls=GoalCommand)(compare)
