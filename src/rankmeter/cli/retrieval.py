"""`rankmeter bm25`, `rankmeter fuse` and `rankmeter two-stage`: baselines, hybrids, pipelines."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    MetricOption,
    OutputOption,
    PerQueryOption,
    QrelsArgument,
    QuietOption,
    RunFormatOption,
    check_output,
    keep_inputs,
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
    keep_inputs(output, {"COLLECTION": collection}, more={"--run-out": run_out})
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
    keep_inputs(output, {"RUNS": runs})
    from rankmeter.report import render
    from rankmeter.vector.fusion import fuse_runs

    fused = fuse_runs(
        runs, method.value, k=k, weights=weights, depth=depth, name=name,
        normalisation=None if normalisation is None else normalisation.value,
        format=run_format.value if run_format else None, names={"weights": "--weights"},
    )  # fmt: skip
    render(fused, "trec", output, path=output)


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
    keep_inputs(
        output, {"QRELS": qrels, "RETRIEVER_RUN": retriever_run, "RERANKED_RUN": reranked_run}
    )
    from rankmeter.report import render
    from rankmeter.vector.pipeline import two_stage_runs

    result = two_stage_runs(
        qrels, retriever_run, reranked_run, pool=pool, metrics=metric,
        run_format=run_format.value if run_format else None,
    )  # fmt: skip
    render(result, output_format.value, output, per_query=per_query)


def register(app: typer.Typer) -> None:
    app.command(no_args_is_help=True)(bm25)
    app.command(no_args_is_help=True)(fuse)
    app.command(name="two-stage", no_args_is_help=True)(two_stage)
