"""`rankmeter bm25`, `rankmeter fuse` and `rankmeter two-stage`: baselines, hybrids, pipelines."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

from rankmeter.cli._common import (
    MetricOption,
    OutputOption,
    PerQueryOption,
    QrelsArgument,
    QuietOption,
    RunFormatOption,
    check_output,
    emit,
)
from rankmeter.report import Steps
from rankmeter.vector import RUN_DEPTH


class EvalFormat(str, Enum):
    table = "table"
    json = "json"


class FuseMethod(str, Enum):
    rrf = "rrf"
    combsum = "combsum"
    minmax = "minmax"
    zscore = "zscore"


class Normalisation(str, Enum):
    minmax = "minmax"
    zscore = "zscore"


FormatOption = Annotated[EvalFormat, typer.Option("--format", "-f", help="Output format.")]


def bm25(
    collection: Annotated[
        str,
        typer.Argument(
            help="A collection in BEIR layout: a folder with corpus.jsonl, queries.jsonl and "
            "qrels/<split>.tsv."
        ),
    ],
    k: Annotated[int, typer.Option("-k", "--top-k", help="Results per query.")] = RUN_DEPTH,
    k1: Annotated[float, typer.Option("--k1", help="BM25 term-frequency saturation.")] = 1.5,
    b: Annotated[float, typer.Option("--b", help="BM25 document-length normalisation.")] = 0.75,
    stemmer: Annotated[
        str | None,
        typer.Option(
            help="Snowball stemmer language, e.g. english (needs PyStemmer). Default: none."
        ),
    ] = None,
    split: Annotated[str, typer.Option(help="Qrels split: qrels/<split>.tsv.")] = "test",
    name: Annotated[str, typer.Option(help="The run's name (its TREC tag).")] = "bm25",
    run_out: Annotated[
        str | None,
        typer.Option(
            "--run-out",
            help="Also write the run to this file (TREC, atomically).",
            callback=check_output,
        ),
    ] = None,
    metric: MetricOption = None,
    per_query: PerQueryOption = False,
    output_format: FormatOption = EvalFormat.table,
    output: OutputOption = None,
    quiet: QuietOption = False,
) -> None:
    """Retrieve with BM25 (bm25s) over a BEIR collection and evaluate the run on its qrels.

    Every judged query counts: one that matches no document (stopwords only) scores 0 and is
    listed. Default metrics: nDCG@10 P@10 R@100 RR AP.
    """
    from rankmeter.report import render
    from rankmeter.vector.bm25 import evaluate_bm25

    with Steps(total=3, enabled=False if quiet else None) as steps:
        result = evaluate_bm25(
            collection, metric, k=k, k1=k1, b=b, stemmer=stemmer, split=split, name=name,
            run_out=run_out, progress=steps.start,
        )  # fmt: skip
    # The Judged@k warning is evaluate's and compare's: this report does not give it.
    render(result, output_format.value, output, per_query=per_query)


def fuse(
    runs: Annotated[list[str], typer.Argument(help="Two or more run files (NAME=PATH names one).")],
    method: Annotated[
        FuseMethod,
        typer.Option(
            help="rrf: reciprocal-rank fusion; combsum: sum of normalised scores "
            "(--normalisation); minmax / zscore: combsum with that normalisation."
        ),
    ] = FuseMethod.rrf,
    normalisation: Annotated[
        Normalisation | None,
        typer.Option(help="How combsum normalises each run's scores (default minmax)."),
    ] = None,
    k: Annotated[float, typer.Option("--k", help="RRF's rank constant: 1 / (k + rank).")] = 60,
    weights: Annotated[
        str | None,
        typer.Option(help="One weight per run, comma-separated, e.g. 0.7,0.3 (default all 1)."),
    ] = None,
    depth: Annotated[
        int, typer.Option(help="Results read from each run per query, and written.")
    ] = RUN_DEPTH,
    name: Annotated[
        str | None, typer.Option(help="The fused run's name (default e.g. rrf(bm25+dense)).")
    ] = None,
    run_format: RunFormatOption = None,
    output: OutputOption = None,
) -> None:
    """Fuse runs into one (a hybrid), written as a TREC run."""
    from rankmeter.cli._runs import read_run_list
    from rankmeter.errors import PolicyError
    from rankmeter.io import trec_run_text, write_trec_run
    from rankmeter.report import terminal_safe
    from rankmeter.vector.fusion import fuse as fuse_runs
    from rankmeter.vector.fusion import parse_weights

    if runs.count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    if len(runs) < 2:
        raise PolicyError(f"fuse needs two runs or more; got {len(runs)}")
    parsed = None if weights is None else parse_weights(weights, what="--weights")
    loaded = read_run_list(runs, format=run_format.value if run_format else None, distinct=False)
    fused = fuse_runs(
        loaded,
        method.value,
        k=k,
        weights=parsed,
        normalisation=None if normalisation is None else normalisation.value,
        depth=depth,
        name=name,
    )
    _warn_depths(loaded, depth)
    if output is None or output == "-":
        emit(terminal_safe(trec_run_text(fused), output), None)
    else:
        import sys

        from rankmeter.io import trec_run_tag
        from rankmeter.report import visible
        from rankmeter.report.vector import fused_line

        write_trec_run(fused, output)
        line = fused_line(
            trec_run_tag(fused.name),  # the tag written, not the name given ("a b" -> "a_b")
            method=method.value,
            runs=len(loaded),
            queries=fused.n_queries,
            results=len(fused),
            path=output,
        )
        print(f"rankmeter: {visible(line)}", file=sys.stderr)


def _warn_depths(runs: list[Any], depth: int) -> None:
    """On stderr: the runs fused are cut at different depths (up to ``depth``)."""
    import sys

    from rankmeter.report import visible
    from rankmeter.report.checking import fusion_depth_line
    from rankmeter.results import depth_gap, depth_of

    gap = depth_gap([(r.name, min(depth_of(r.offsets), depth)) for r in runs])
    if gap is not None:
        print(f"rankmeter: {visible(fusion_depth_line(gap))}", file=sys.stderr)


def two_stage(
    qrels: QrelsArgument,
    retriever_run: Annotated[str, typer.Argument(help="The first stage's run file.")],
    reranked_run: Annotated[
        str, typer.Argument(help="The reranker's run over the retriever's top --pool results.")
    ],
    pool: Annotated[int, typer.Option(help="Candidates per query the reranker sees.")] = 100,
    metric: MetricOption = None,
    per_query: PerQueryOption = False,
    output_format: FormatOption = EvalFormat.table,
    run_format: RunFormatOption = None,
    output: OutputOption = None,
) -> None:
    """Evaluate retrieve-then-rerank: the pool's recall, the reranking, the ceiling.

    Recall@pool of the retriever, the reranked pool, and the ceiling (the pool sorted by grade).
    Every judged query counts: one the retriever did not answer scores 0 and is listed.
    Default metric: nDCG@10.
    """
    from rankmeter.cli._runs import read_run_list
    from rankmeter.errors import PolicyError
    from rankmeter.io import read_qrels
    from rankmeter.report import render
    from rankmeter.vector.pipeline import two_stage as run_two_stage

    if [qrels, retriever_run, reranked_run].count("-") > 1:
        raise PolicyError("only one input can be read from stdin ('-')")
    result = run_two_stage(
        read_qrels(qrels),
        *read_run_list(
            [retriever_run, reranked_run],
            format=run_format.value if run_format else None,
            distinct=False,
        ),
        pool=pool,
        metrics=metric or ["nDCG@10"],
    )
    render(result, output_format.value, output, per_query=per_query)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(bm25)
    app.command(no_args_is_help=True)(fuse)
    app.command(name="two-stage", no_args_is_help=True)(two_stage)
