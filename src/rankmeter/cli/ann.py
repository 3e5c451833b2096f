"""`rankmeter ann-recall CORPUS QUERIES --index "hnsw(M=16)" --sweep efSearch=16,32,64`."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import OutputOption, keep_inputs


class AnnFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


class Metric(str, Enum):
    ip = "ip"
    l2 = "l2"
    cosine = "cosine"


class Backend(str, Enum):
    faiss = "faiss"
    hnswlib = "hnswlib"


#: How ann-recall's messages name the settings of measure_indexes: its options and arguments.
OPTION_NAMES = {
    "corpus": "CORPUS", "queries": "QUERIES", "indexes": "--index", "backend": "--backend",
    "sweep": "--sweep", "model": "--model", "results_dir": "--results-dir",
}  # fmt: skip


def ann_recall(
    corpus: Annotated[
        str,
        typer.Argument(
            help="Corpus vectors: .npy, or .parquet (a list column of floats); or a BEIR "
            "collection folder, embedded with --model (then no QUERIES)."
        ),
    ],
    queries: Annotated[str | None, typer.Argument(help="Query vectors, same dimensions.")] = None,
    index: Annotated[
        list[str] | None,
        typer.Option(
            "--index",
            "-i",
            help="Index spec: flat, hnsw(M=16,efConstruction=200,efSearch=64), "
            "ivf(nlist=100,nprobe=8), pq(m=8,nbits=8), ivfpq(nlist=100,m=8,nbits=8,nprobe=8). "
            "Omitted parameters take these defaults; without --index: "
            "hnsw(M=16,efConstruction=200,efSearch=64). Repeat it to measure several indexes "
            "(each built once, each with the sweep's parameters it has) on one recall-vs-QPS "
            "chart with single-query latencies and, for a collection, the quality each "
            "setting loses against exact search.",
        ),
    ] = None,
    k: Annotated[
        list[int] | None,
        typer.Option(
            "-k", "--k", min=1, help="Recall@k for each k, repeatable. Default: 1 10 100."
        ),
    ] = None,
    metric: Annotated[
        Metric, typer.Option(help="ip (inner product), l2, or cosine (normalise, then ip).")
    ] = Metric.ip,
    backend: Annotated[
        Backend, typer.Option(help="faiss (every index) or hnswlib (hnsw, flat).")
    ] = Backend.faiss,
    sweep: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME=V1,V2,...",
            help="Measure each value of a parameter, e.g. efSearch=16,32,64,128,256 "
            "(search-time parameters reuse the built index). Repeatable: every combination.",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the training and the HNSW levels: same seed, same recall.")
    ] = 0,
    threads: Annotated[
        int,
        typer.Option(
            min=0,
            help="Threads for searching and IVF/PQ training; 0 = all cores. One (the default) "
            "gives QPS comparable between machines and steady on a busy one.",
        ),
    ] = 1,
    output_format: Annotated[
        AnnFormat,
        typer.Option("--format", "-f", help="Output format (html: one self-contained page)."),
    ] = AnnFormat.table,
    model: Annotated[
        str | None,
        typer.Option(
            help="With a collection folder: the embedding model (a local folder or name; "
            "default: the packaged all-MiniLM-L6-v2). Embeddings are cached."
        ),
    ] = None,
    results_dir: Annotated[
        str | None,
        typer.Option(
            "--results-dir",
            metavar="DIR",
            help="Also write one JSON file per index setting into DIR (made if missing; the "
            "same setting measured again replaces its file): `rankmeter ann-results DIR` "
            "renders them together. Gives the several-index view even for one --index.",
        ),
    ] = None,
    output: OutputOption = None,
) -> None:
    """Recall of an ANN index against the exact nearest neighbours, with QPS, build time, memory.

    Is the index what loses results? --sweep efSearch=16,32,64 gives the recall/QPS trade-off.
    """
    keep_inputs(output, {"CORPUS": corpus, "QUERIES": queries})
    from rankmeter.report import render
    from rankmeter.report.ann import write_results
    from rankmeter.vector.ann import AnnBenchmark, IndexSpecError, measure_indexes

    try:
        result = measure_indexes(
            corpus, queries, index, k=k, metric=metric.value, backend=backend.value,
            sweep=sweep, seed=seed, threads=threads, model=model, results_dir=results_dir,
            names=OPTION_NAMES,
        )  # fmt: skip
    except IndexSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint=f"'{exc.option}'") from None
    if results_dir is not None and isinstance(result, AnnBenchmark):
        write_results(result, results_dir)
    render(result, output_format.value, output)


def ann_results(
    folder: Annotated[
        str, typer.Argument(help="A folder of results written by ann-recall --results-dir.")
    ],
    dataset: Annotated[
        str | None,
        typer.Option(
            help="Where the folder holds several datasets (a corpus and a metric: "
            "'NAME [ip]'): the one to show (its name, or a part of it that names only one)."
        ),
    ] = None,
    output_format: Annotated[
        AnnFormat,
        typer.Option("--format", "-f", help="Output format (html: one self-contained page)."),
    ] = AnnFormat.table,
    output: OutputOption = None,
) -> None:
    """The index settings measured so far (ann-recall --results-dir), on one chart and table.

    Every run adds its settings to the folder; this renders them together, with the Pareto
    frontier of recall and queries per second.
    """
    keep_inputs(output, {"FOLDER": folder})
    from rankmeter.report import render
    from rankmeter.vector.ann import load_results

    render(load_results(folder, dataset), output_format.value, output)


def register(app: typer.Typer) -> None:
    app.command("ann-recall", no_args_is_help=True)(ann_recall)
    app.command("ann-results", no_args_is_help=True)(ann_results)
