"""`rankmeter ann-recall CORPUS QUERIES --index "hnsw(M=16)" --sweep efSearch=16,32,64`."""

from __future__ import annotations

import dataclasses
import re
from enum import Enum
from typing import Annotated, Any

import typer

from rankmeter.cli._common import OutputOption


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


def _parse_sweep(texts: list[str]) -> dict[str, list[int]]:
    from rankmeter.vector.ann import IndexSpecError, parse_sweep

    try:
        return parse_sweep(texts)
    except IndexSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--sweep'") from None


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
    from rankmeter.report import render
    from rankmeter.vector.ann import (
        IndexSpecError,
        ann_recall,
        check_backend,
        parse_index_spec,
        sweep_settings,
    )

    def usage(exc: Exception, option: str) -> typer.BadParameter:
        return typer.BadParameter(str(exc), param_hint=f"'{option}'")

    indexes = index or ["hnsw(M=16,efConstruction=200,efSearch=64)"]
    if len(indexes) > 1 or results_dir is not None:
        _benchmark(
            corpus, queries, indexes, k, metric.value, backend.value, sweep, seed, threads,
            output_format, model, results_dir, output,
        )  # fmt: skip
        return
    try:
        spec = parse_index_spec(indexes[0])
    except IndexSpecError as exc:
        raise usage(exc, "--index") from None
    try:
        check_backend(spec, backend.value)
    except IndexSpecError as exc:
        raise usage(exc, "--backend") from None
    swept = _parse_sweep(sweep or [])
    try:
        settings = sweep_settings(spec, swept)
    except IndexSpecError as exc:
        raise usage(exc, "--sweep") from None
    ks = tuple(k or (1, 10, 100))
    corpus_vectors, query_vectors, collection, _ = _vectors(corpus, queries, model, settings, ks)
    try:
        result = ann_recall(
            corpus_vectors,
            query_vectors,
            spec,
            k=ks,
            metric=metric.value,
            backend=backend.value,
            sweep=swept,
            seed=seed,
            threads=threads or None,
        )
    except IndexSpecError as exc:  # a spec that does not fit the data (pq m and the dimension)
        raise usage(exc, "--index") from None
    if collection is not None:
        result = dataclasses.replace(result, corpus=collection[0], queries=collection[1])
    render(result, output_format.value, output)


def _benchmark(
    corpus: str,
    queries: str | None,
    indexes: list[str],
    k: list[int] | None,
    metric: str,
    backend: str,
    sweep: list[str] | None,
    seed: int,
    threads: int,
    output_format: AnnFormat,
    model: str | None,
    results_dir: str | None,
    output: str | None,
) -> None:
    """Several indexes (or one with --results-dir): every setting checked before any work,
    the vectors embedded once, each index built once per build-time setting."""
    from pathlib import Path

    from rankmeter.report.ann import write_results
    from rankmeter.vector.ann import IndexSpecError, ann_benchmark, benchmark_settings

    swept = _parse_sweep(sweep or [])
    try:
        plans = benchmark_settings(indexes, swept, backend)
    except IndexSpecError as exc:
        # The spec checker names a swept value as in 'sweep efSearch'.
        hint = "--sweep" if re.search(r"\bswe(pt|ep)\b", str(exc)) else "--index"
        raise typer.BadParameter(str(exc), param_hint=f"'{hint}'") from None
    if results_dir is not None and Path(results_dir).exists() and not Path(results_dir).is_dir():
        raise typer.BadParameter(f"{results_dir} is not a folder", param_hint="'--results-dir'")
    ks = tuple(k or (1, 10, 100))
    settings = [setting for _, plan in plans for setting in plan]
    corpus_vectors, query_vectors, collection, loaded = _vectors(
        corpus, queries, model, settings, ks
    )
    judged: dict[str, Any] = {} if loaded is None else loaded.judged()
    try:
        bench = ann_benchmark(
            corpus_vectors,
            query_vectors,
            indexes,
            k=ks,
            metric=metric,
            backend=backend,
            sweep=swept,
            seed=seed,
            threads=threads or None,
            **judged,
        )
    except IndexSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--index'") from None
    if collection is not None:
        bench = dataclasses.replace(bench, corpus=collection[0], queries=collection[1])
    if results_dir is not None:
        write_results(bench, results_dir)
    from rankmeter.report import render

    render(bench, output_format.value, output)


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
    from rankmeter.report import render
    from rankmeter.vector.ann import load_results

    render(load_results(folder, dataset), output_format.value, output)


def _vectors(
    corpus: str, queries: str | None, model: str | None, settings: list[Any], ks: tuple[int, ...]
) -> tuple[Any, Any, tuple[str, str] | None, Any]:
    """Vector files as given, or a BEIR collection folder embedded by the model (cached:
    :func:`rankmeter.vector.ann.collection_vectors`), and then how the collection's vectors
    are named and the embedded collection (None for vector files)."""
    from pathlib import Path

    if not Path(corpus).is_dir():
        if queries is None:
            raise typer.BadParameter(
                "give QUERIES vectors beside the CORPUS vectors (or a collection folder alone)",
                param_hint="'QUERIES'",
            )
        if model is not None:
            raise typer.BadParameter(
                "--model embeds a collection folder; CORPUS is a vector file",
                param_hint="'--model'",
            )
        return corpus, queries, None, None
    if queries is not None:
        raise typer.BadParameter(
            "a collection folder is embedded whole: give it alone, without QUERIES",
            param_hint="'QUERIES'",
        )
    from rankmeter.vector.ann import IndexSpecError, collection_vectors

    try:
        embedded = collection_vectors(corpus, model, settings=settings, ks=ks)
    except IndexSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--index'") from None
    return embedded.corpus, embedded.queries, embedded.names, embedded


def register(app: typer.Typer) -> None:
    app.command("ann-recall", no_args_is_help=True)(ann_recall)
    app.command("ann-results", no_args_is_help=True)(ann_results)
