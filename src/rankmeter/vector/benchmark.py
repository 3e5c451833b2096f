"""Embedding models benchmarked: every model (and BM25, and their hybrids) on every collection.

What ``rankmeter embed-eval`` runs, for Python: :func:`embed_benchmark` takes the collections,
the models, the baselines and one :class:`BenchmarkSettings`, checks everything it can before
the first embedding (the models are available offline and named apart, the collections are
readable and named apart, the results folder is a folder), then embeds, retrieves and evaluates
each, and returns an :class:`EmbedBenchmark`: each result with what a stored result says about
what made it (``infos``), its :meth:`~EmbedBenchmark.entries` for
:func:`rankmeter.report.leaderboard.save_entry` and its
:meth:`~EmbedBenchmark.leaderboard`.

>>> import numpy as np
>>> from pathlib import Path
>>> from rankmeter import Qrels
>>> from rankmeter.io.beir import BeirCollection, Document
>>> class Letters:
...     def encode(self, texts, **options):
...         return np.array([[t.count(c) for c in "abc"] for t in texts], dtype=float)
>>> docs = {"d1": Document("", "aaa"), "d2": Document("", "bb a"), "d3": Document("c", "c")}
>>> qrels = Qrels.from_dict({"q1": {"d2": 1}, "q2": {"d3": 1}})
>>> toy = BeirCollection(Path("toy"), docs, {"q1": "b", "q2": "cc"}, qrels)
>>> bench = embed_benchmark([toy], [Letters()], BenchmarkSettings(metrics=("RR",), k=2),
...                         cache=False)
>>> [(r.model, dict(r.metrics)) for r in bench.results]
[('Letters', {'RR': 1.0})]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from rankmeter.vector import RUN_DEPTH
from rankmeter.vector._model_eval import DEFAULT_EMBED_METRICS

__all__ = ["RETRIEVERS", "BenchmarkSettings", "EmbedBenchmark", "embed_benchmark"]

#: The baselines a benchmark can add on every collection: ``bm25`` (a row of its own) and
#: ``hybrid`` (reciprocal-rank fusion of BM25 and each model).
RETRIEVERS = ("bm25", "hybrid")

#: A source of progress: called with the number of steps of a stage, it gives a context
#: manager whose value has ``start(label)`` (``rankmeter.cli``'s progress bar is one).
Stages = Callable[[int], AbstractContextManager[Any]]


@dataclass(frozen=True)
class BenchmarkSettings:
    """How every model and baseline of a benchmark runs; stored with each result.

    Attributes
    ----------
    metrics : metric names (checked, and kept as :func:`rankmeter.metrics.parse_metrics` labels
        them); default nDCG@10, R@100, RR@10
    index : ``"flat"`` (exact inner product) or an ANN index spec
    k : results retrieved per query
    batch_size : texts per forward pass of a model
    backend : ANN library for ``index`` (None: the default)
    split : the qrels split of a BEIR folder
    preset : the preset the settings came from (:meth:`of`), recorded with each result
    ignore_identical_ids : BEIR's rule: drop a retrieved document whose id is its query's
    query_prefix, passage_prefix, max_seq_length, device : as
        :func:`rankmeter.vector.embed.retrieve_model` takes them
    detailed : each result also holds the embedding's details and notes
    bm25_k1, bm25_b, bm25_stopwords : BM25's settings (:func:`rankmeter.vector.bm25.bm25_run`),
        bm25s's defaults
    fusion_k : the constant of the reciprocal-rank fusion of a hybrid
    """

    metrics: tuple[str, ...] = DEFAULT_EMBED_METRICS
    index: str = "flat"
    k: int = RUN_DEPTH
    batch_size: int = 32
    backend: str | None = None
    split: str = "test"
    preset: str | None = None
    ignore_identical_ids: bool = False
    query_prefix: str = ""
    passage_prefix: str = ""
    max_seq_length: int | None = None
    device: str | None = None
    detailed: bool = False
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    bm25_stopwords: str | None = "en"
    fusion_k: int = 60
    _measures: tuple[Any, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from rankmeter.metrics import parse_metrics

        given = [self.metrics] if isinstance(self.metrics, str) else list(self.metrics)
        measures = tuple(parse_metrics(given))
        object.__setattr__(self, "_measures", measures)
        object.__setattr__(self, "metrics", tuple(str(m) for m in measures))

    @classmethod
    def of(
        cls,
        preset: str | None = None,
        *,
        metrics: Sequence[str] | None = None,
        ignore_identical_ids: bool | None = None,
        detailed: bool | None = None,
        **settings: Any,
    ) -> BenchmarkSettings:
        """Settings with a preset and the defaults that depend on what is given, as
        ``rankmeter embed-eval`` chooses them: ``preset="mteb"`` gives MTEB's metrics (nDCG,
        MAP, Recall, Precision, MRR at 1, 3, 5, 10, 100 and 1000; give no ``metrics`` then) and
        BEIR's identical-ids rule; ``detailed`` is on with the preset or any MTEB-style
        setting given (a prefix, ``max_seq_length``, ``device``, ``ignore_identical_ids``).
        ``settings``: the other fields.

        >>> BenchmarkSettings.of("mteb").ignore_identical_ids
        True
        >>> BenchmarkSettings.of(query_prefix="query: ").detailed
        True
        """
        from rankmeter._validate import choice
        from rankmeter.errors import PolicyError
        from rankmeter.vector.retrieval import MTEB_METRICS

        mteb = preset is not None and choice("preset", preset, ("mteb",)) == "mteb"
        if mteb and metrics is not None:
            raise PolicyError("preset='mteb' chooses the metrics: give preset or metrics, not both")
        if metrics is None:
            metrics = MTEB_METRICS if mteb else DEFAULT_EMBED_METRICS
        if detailed is None:
            detailed = (
                mteb
                or bool(settings.get("query_prefix") or settings.get("passage_prefix"))
                or settings.get("max_seq_length") is not None
                or settings.get("device") is not None
                or ignore_identical_ids is not None
            )
        return cls(
            metrics=tuple(metrics),
            preset=preset,
            ignore_identical_ids=mteb if ignore_identical_ids is None else ignore_identical_ids,
            detailed=detailed,
            **settings,
        )

    @classmethod
    def of_options(
        cls,
        preset: str | None = None,
        *,
        metrics: Sequence[str] | None = None,
        collections: Sequence[Any] = (),
        files: Sequence[Any | None] = (None, None, None),
        models: Sequence[Any] = (),
        retrievers: Sequence[str] = (),
        name: str | None = None,
        run_out: str | os.PathLike[str] | None = None,
        per_query: bool = False,
        **settings: Any,
    ) -> BenchmarkSettings:
        """The settings of ``rankmeter embed-eval`` (:meth:`of`), after the combinations of
        its options that do not go together are refused, each worded with the command's option
        names (``--qrels``, ``--preset``, ``-m``, ``--name``, ...): collection folders or the three ``files``
        (qrels, queries, corpus) all given; a preset or metrics; ``name``, ``run_out`` and
        ``per_query`` only with one model on one collection without baselines. ``k`` None:
        :data:`~rankmeter.vector.RUN_DEPTH`.

        >>> BenchmarkSettings.of_options("mteb", metrics=["AP"], collections=["data/x"])
        Traceback (most recent call last):
        ...
        rankmeter.errors.PolicyError: --preset mteb chooses the metrics: give --preset or -m, not both
        """
        from rankmeter.errors import PolicyError

        given = [f for f in files if f is not None]
        if collections and given:
            raise PolicyError("give a collection folder or --qrels/--queries/--corpus, not both")
        if not collections and len(given) < len(files):
            if given:
                raise PolicyError("--qrels, --queries and --corpus go together: give all three")
            raise PolicyError("give a collection folder (or --qrels, --queries and --corpus)")
        if preset == "mteb" and metrics:
            raise PolicyError("--preset mteb chooses the metrics: give --preset or -m, not both")
        if settings.get("k", RUN_DEPTH) is None:
            settings["k"] = RUN_DEPTH
        chosen = cls.of(preset, metrics=metrics or None, **settings)
        if len(collections) > 1 or len(models) > 1 or retrievers:
            for value, option in ((name, "--name"), (run_out, "--run-out")):
                if value is not None:
                    raise PolicyError(
                        f"{option} names one run: give it with one model on one collection"
                    )
            if per_query:
                raise PolicyError(
                    "--per-query shows one run's queries: with several models or collections, "
                    "--results-dir stores every query's values"
                )
        return chosen

    @property
    def measures(self) -> tuple[Any, ...]:
        """The parsed metrics."""
        return self._measures

    def shallow(self) -> list[str]:
        """The metrics that read deeper than ``k`` results (they measure the top ``k`` only)."""
        return [m.label for m in self._measures if m.cutoff is not None and m.cutoff > self.k >= 1]

    def to_dict(self) -> dict[str, Any]:
        """The settings as a stored result records them (BM25's and the fusion's aside)."""
        return {
            "index": self.index,
            "k": self.k,
            "batch_size": self.batch_size,
            "backend": self.backend,
            "split": self.split,
            "metrics": list(self.metrics),
            "preset": self.preset,
            "ignore_identical_ids": self.ignore_identical_ids,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
            "max_seq_length": self.max_seq_length,
            "device": self.device,
            "detailed": self.detailed,
        }

    def bm25_defaults(self) -> bool:
        """Whether BM25 runs with bm25s's defaults."""
        return (self.bm25_k1, self.bm25_b, self.bm25_stopwords) == (1.5, 0.75, "en")


@dataclass(frozen=True)
class EmbedBenchmark:
    """What a benchmark made: one evaluation per model (or baseline) and collection.

    Attributes
    ----------
    settings : the :class:`BenchmarkSettings`
    results : each :class:`rankmeter.vector.retrieval.RetrievalResult`, collection by
        collection: BM25 (if asked for), then each model and its hybrid (if asked for)
    infos : for each result, what ran (``dataset``, ``retriever``, ``model``, ``settings``,
        ``seconds``, the embedding's details, when and by which rankmeter), as a stored result
        records it
    single : one model on one collection without baselines (the result is the output)
    """

    settings: BenchmarkSettings
    results: tuple[Any, ...]
    infos: tuple[Mapping[str, Any], ...] = field(repr=False)
    single: bool = False

    def entries(self) -> list[Any]:
        """Each result as a :class:`rankmeter.vector.leaderboard.LeaderboardEntry`."""
        from rankmeter.vector.leaderboard import entry_of

        return [
            entry_of(r, dataset=info["dataset"], info=info)
            for r, info in zip(self.results, self.infos, strict=True)
        ]

    def leaderboard(self) -> Any:
        """The results ranked (:func:`rankmeter.vector.leaderboard.leaderboard_of`) by nDCG@10
        where it was measured, else by the first metric."""
        from rankmeter.vector.leaderboard import MAIN_METRIC, leaderboard_of

        labels = list(self.settings.metrics)
        main = MAIN_METRIC if MAIN_METRIC in labels else labels[0]
        return leaderboard_of(self.entries(), metric=main)

    def to_dict(self) -> dict[str, Any]:
        """``{"settings", "runs": [{"result", "info"}]}``: each result with every query's
        values."""
        return {
            "settings": self.settings.to_dict(),
            "runs": [
                {"result": r.to_dict(per_query=True), "info": dict(info)}
                for r, info in zip(self.results, self.infos, strict=True)
            ],
        }


def embed_benchmark(
    collections: Sequence[Any] = (),
    models: Sequence[Any] = (),
    settings: BenchmarkSettings | None = None,
    *,
    retrievers: Sequence[str] = (),
    files: tuple[Any, Any, Any] | None = None,
    name: str | None = None,
    run_out: str | os.PathLike[str] | None = None,
    cache: str | os.PathLike[str] | bool | None = True,
    results_dir: str | os.PathLike[str] | None = None,
    stages: Stages | None = None,
) -> EmbedBenchmark:
    """Evaluate every model, and each baseline, on every collection.

    Parameters
    ----------
    collections : BEIR-layout folders or loaded :class:`~rankmeter.io.beir.BeirCollection`
        objects; or none, with ``files``
    files : ``(qrels, queries, corpus)`` of one collection
        (:func:`rankmeter.vector.embed.collection_from_files`), instead of ``collections``
    models : each as :func:`rankmeter.vector.embed.evaluate_model` takes it; none: the
        packaged all-MiniLM-L6-v2
    settings : how each runs (default: :class:`BenchmarkSettings`'s defaults)
    retrievers : baselines from :data:`RETRIEVERS`, evaluated on every collection
    name, run_out : the run's name and a file to write it to: one model on one collection only
    cache : the embedding cache, as :func:`~rankmeter.vector.embed.evaluate_model` takes it
    results_dir : where the caller will store the entries: with several runs, checked to be a
        folder (if it exists) before any work
    stages : progress, as ``rankmeter.cli`` shows it (see :data:`Stages`); None: none

    Returns
    -------
    EmbedBenchmark
    """
    from rankmeter._validate import choice
    from rankmeter.errors import PolicyError

    chosen = settings if settings is not None else BenchmarkSettings()
    baselines = list(dict.fromkeys(retrievers))
    for retriever in baselines:
        choice("retriever", retriever, RETRIEVERS)
    given = list(collections)
    if not given and files is None:
        raise PolicyError("give a collection (or files: qrels, queries and corpus)")
    if given and files is not None:
        raise PolicyError("give collections or files, not both")
    sources: list[Any] = given or [None]
    model_list = list(models) or [None]
    single = len(sources) == 1 and len(model_list) == 1 and not baselines
    if not single and (name is not None or run_out is not None):
        raise PolicyError(
            "name and run_out name one run: give them with one model on one collection"
        )
    run = _Benchmark(chosen, files, cache, stages or _silent)
    if single:
        done = [run.one(sources[0], model_list[0], name=name, run_out=run_out)]
    else:
        done = run.many(sources, model_list, baselines, results_dir)
    return EmbedBenchmark(
        chosen, tuple(r for r, _ in done), tuple(i for _, i in done), single=single
    )


class _Step:
    def start(self, label: str) -> None:
        pass


@contextmanager
def _silent(total: int) -> Iterator[_Step]:
    yield _Step()


Info = dict[str, Any]


@dataclass
class _Benchmark:
    """One benchmark's settings, inputs and progress, and the steps it takes."""

    settings: BenchmarkSettings
    files: tuple[Any, Any, Any] | None
    cache: Any
    stages: Stages

    def load(self, collection: Any) -> Any:
        if collection is not None:
            from rankmeter.io.beir import BeirCollection, load_beir

            if isinstance(collection, BeirCollection):
                return collection
            return load_beir(collection, split=self.settings.split)
        from rankmeter.vector._collections import collection_from_files

        assert self.files is not None
        qrels, queries, corpus = self.files
        return collection_from_files(
            qrels if not isinstance(qrels, os.PathLike) else os.fspath(qrels),
            str(queries),
            str(corpus),
        )

    @staticmethod
    def dataset(collection: Any, loaded: Any) -> str:
        from rankmeter.vector.leaderboard import dataset_name

        return dataset_name(
            collection if isinstance(collection, (str, os.PathLike)) else loaded.root
        )

    def retrieve(self, loaded: Any, model: Any, **given: Any) -> tuple[Any, Any]:
        """A model's run on a loaded collection, and its evaluation."""
        from rankmeter.vector._model_eval import count_steps, retrieve_model

        s = self.settings
        batch = max(s.batch_size, 1)
        total = count_steps(len(loaded.corpus), len(loaded.queries), batch, s.index)
        with self.stages(total) as steps:
            retrieved = retrieve_model(
                loaded,
                model,
                index=s.index,
                k=s.k,
                cache=self.cache,
                batch_size=s.batch_size,
                backend=s.backend,
                progress=steps.start,
                query_prefix=s.query_prefix,
                passage_prefix=s.passage_prefix,
                max_seq_length=s.max_seq_length,
                device=s.device,
                ignore_identical_ids=s.ignore_identical_ids,
                count_truncated=s.detailed,
                **given,
            )
            steps.start("evaluating")
            result = retrieved.evaluate(s.measures, detailed=s.detailed)
        return retrieved, result

    def model_info(self, collection: Any, loaded: Any, identity: Info, retrieved: Any) -> Info:
        from rankmeter.vector.leaderboard import stamp

        return {
            "dataset": self.dataset(collection, loaded),
            "retriever": "embedding model",
            "model": identity,
            "dimension": retrieved.dimension,
            "settings": self.settings.to_dict(),
            "seconds": {
                "embedding": retrieved.embed_seconds,
                "search": retrieved.search_seconds,
            },
            "embeddings_from_cache": retrieved.cached,
            **retrieved.details(),
            **stamp(),
        }

    def one(
        self, collection: Any, model: Any, *, name: str | None, run_out: Any
    ) -> tuple[Any, Info]:
        """One model on one collection."""
        from rankmeter.vector.embed import model_identity

        identity = model_identity(model)  # a model not available offline fails before reading
        with self.stages(1) as steps:
            steps.start("reading the collection")
            loaded = self.load(collection)
        retrieved, result = self.retrieve(loaded, model, run_out=run_out, name=name)
        return result, self.model_info(collection, loaded, identity, retrieved)

    def many(
        self,
        collections: list[Any],
        models: list[Any],
        baselines: list[str],
        results_dir: str | os.PathLike[str] | None,
    ) -> list[tuple[Any, Info]]:
        """Every model and baseline on every collection. Everything that can be checked is
        checked before the first embedding: the models (available offline, distinct names),
        the results folder, the collections (readable, distinct names)."""
        from rankmeter.errors import PolicyError
        from rankmeter.vector.embed import model_identity

        identities = [model_identity(m) for m in models]
        names = [i["name"] for i in identities]
        for i, label in enumerate(names):
            if label in names[:i]:
                raise PolicyError(
                    f"two models are named {label!r} ({models[names.index(label)]} and "
                    f"{models[i]}): the leaderboard tells models apart by name; give one of "
                    "them from a folder with another name"
                )
        if results_dir is not None:
            from pathlib import Path

            target = Path(results_dir)
            if target.exists() and not target.is_dir():
                from rankmeter.errors import FormatError

                raise FormatError(
                    os.fspath(results_dir), "is not a folder; --results-dir names a folder"
                )
        loaded_all = []
        with self.stages(len(collections)) as steps:
            for collection in collections:
                shown = collection if isinstance(collection, (str, os.PathLike)) else None
                steps.start(f"reading {shown if shown is not None else 'the collection'}")
                loaded_all.append(self.load(collection))
        datasets = [
            self.dataset(c, loaded) for c, loaded in zip(collections, loaded_all, strict=True)
        ]
        for i, dataset in enumerate(datasets):
            if dataset in datasets[:i]:
                raise PolicyError(
                    f"two collections are named {dataset!r}: the leaderboard tells datasets "
                    "apart by their folder's name"
                )
        done: list[tuple[Any, Info]] = []
        for collection, loaded, dataset in zip(collections, loaded_all, datasets, strict=True):
            label = str(loaded.root) if collection is not None else str(loaded.qrels.source)
            bm25 = None
            if baselines:  # BM25 is a row, or half of each hybrid, or both
                bm25, row = self.bm25(loaded, dataset, label)
                if "bm25" in baselines:
                    done.append(row)
            for model, identity in zip(models, identities, strict=True):
                retrieved, result = self.retrieve(loaded, model)
                model_info = self.model_info(collection, loaded, identity, retrieved)
                done.append((result, model_info))
                if "hybrid" in baselines:
                    assert bm25 is not None
                    done.append(self.hybrid(loaded, bm25, retrieved, model_info, label))
        return done

    def bm25(self, loaded: Any, dataset: str, label: str) -> tuple[Any, tuple[Any, Info]]:
        """BM25's run on a collection, and its row (its evaluation and what ran)."""
        import dataclasses
        import time

        from rankmeter.vector.bm25 import bm25_run, describe_bm25
        from rankmeter.vector.leaderboard import stamp
        from rankmeter.vector.retrieval import (
            IDENTICAL_IDS_RULE,
            drop_identical_ids,
            evaluate_retrieval,
        )

        s = self.settings
        bm25_settings = {"k1": s.bm25_k1, "b": s.bm25_b, "stopwords": s.bm25_stopwords}
        described = describe_bm25(k1=s.bm25_k1, b=s.bm25_b, stopwords=s.bm25_stopwords)
        started = time.perf_counter()
        with self.stages(2) as steps:
            steps.start(f"BM25 on {dataset}")
            ignore = s.ignore_identical_ids
            run = bm25_run(
                loaded,
                k=s.k + int(ignore),
                name="bm25",
                k1=s.bm25_k1,
                b=s.bm25_b,
                stopwords=s.bm25_stopwords,
            )
            dropped = None
            if ignore:
                run, dropped = drop_identical_ids(run, s.k)
            steps.start("evaluating")
            result = evaluate_retrieval(
                loaded.qrels, run, s.measures, model=described, collection=label
            )
        info: Info = {
            "dataset": dataset,
            "retriever": "bm25",
            "model": {"name": "BM25", "description": described},
            "settings": {**s.to_dict(), **bm25_settings},
            "seconds": {"retrieval": time.perf_counter() - started},
            **stamp(),
        }
        if dropped is not None:
            info["identical_ids"] = {"rule": IDENTICAL_IDS_RULE, "dropped": dropped}
        return run, (dataclasses.replace(result, model="BM25"), info)

    def hybrid(
        self, loaded: Any, bm25: Any, retrieved: Any, model_info: Info, label: str
    ) -> tuple[Any, Info]:
        """The reciprocal-rank fusion of BM25's run and a model's, evaluated."""
        from rankmeter.vector.bm25 import describe_bm25
        from rankmeter.vector.fusion import fuse
        from rankmeter.vector.retrieval import evaluate_retrieval

        s = self.settings
        fused = fuse([bm25, retrieved.run], "rrf", k=s.fusion_k, depth=s.k, name="hybrid")
        result = evaluate_retrieval(
            loaded.qrels,
            fused.head(s.k),
            s.measures,
            model=f"BM25 + {retrieved.model} (RRF)",
            collection=label,
        )
        which = (
            "bm25s defaults"
            if s.bm25_defaults()
            else describe_bm25(k1=s.bm25_k1, b=s.bm25_b, stopwords=s.bm25_stopwords)
        )
        info = {
            **model_info,
            "retriever": "hybrid",
            "fusion": f"reciprocal-rank fusion (k {s.fusion_k}) of BM25 ({which}) and "
            f"{retrieved.model}, each run's top {s.k}",
        }
        return result, info
