"""Deterministic TREC qrels and run files for the benchmarks.

Shapes (issue 3):

- ``msmarco``: 7,000 queries x 1,000 results, about 1.1 relevant passages per query (grade 1), about
  15 % of them not retrieved; numeric query and passage ids like MS MARCO's.
- ``wide``: 100,000 queries x 100 results, about 3 judgments per query graded 0-2; ids like
  ``D1555982``.
- ``deep``: 200 queries x 1,000 results with about 300 judgments per query graded 0-3 (a pooled
  TREC collection); ids like ``FT923-01734``.
- ``smoke``: 20 queries x 50 results, for tests; ``two``: 2 queries x 100 results (cold start).

How a workload is made: every query has a row of distinct candidate documents, front columns more
likely to be relevant. A run draws ``depth`` of them without replacement, with weights falling
with the column (a Plackett-Luce ranking), so relevant documents land at varied ranks and some are
not retrieved. Scores fall with rank; with probability ``ties`` a result gets exactly the score of
the one above it (the tie order in the file is random, so tie-breaking rules matter). ``ties=0``
gives a tie-free workload on which every tool should agree to the last digit.

Queries come in a shuffled order, as in a topics file (``--sorted-queries``: ascending ids); each
query's lines are in rank order. Everything comes from one seed: the same arguments give
byte-identical files.

Usage::

    python benchmarks/generate.py msmarco --scale 0.01
    python benchmarks/generate.py --all --ties 0 --data-dir /tmp/bench
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_DATA_DIR = HERE / "data"
DEFAULT_TIES = 0.1
GENERATOR_VERSION = 3


@dataclass(frozen=True)
class Shape:
    name: str
    queries: int
    depth: int
    corpus: int  # size of the doc id space
    judged_mean: float  # judgments per query (before duplicates are dropped)
    judged_spread: float  # standard deviation of the judgments per query (0: 1 + Poisson)
    grade_probs: tuple[float, ...]  # probability of grade 0, 1, 2, ...
    unretrieved: float  # share of judged documents that come from outside the candidate pool
    rel_decay: float  # judged candidates are drawn with weight 1 / (column + 1) ** rel_decay
    run_decay: float  # runs draw candidates with weight 1 / (column + 1) ** run_decay
    doc_style: str  # int, D, FT, d
    query_style: str  # random (MS MARCO-like ids), consecutive (301, 302, ...)


def _shape(name: str, queries: int, depth: int, corpus: int, **model: Any) -> Shape:
    return Shape(name, queries, depth, corpus, **model)


SHAPES: dict[str, Shape] = {
    "msmarco": _shape(
        "msmarco", 7_000, 1_000, 8_841_823,
        judged_mean=1.1, judged_spread=0.0, grade_probs=(0.0, 1.0), unretrieved=0.15,
        rel_decay=1.2, run_decay=1.4, doc_style="int", query_style="random",
    ),
    "wide": _shape(
        "wide", 100_000, 100, 3_213_835,
        judged_mean=3.0, judged_spread=0.0, grade_probs=(0.5, 0.35, 0.15), unretrieved=0.25,
        rel_decay=1.0, run_decay=1.2, doc_style="D", query_style="random",
    ),
    "deep": _shape(
        "deep", 200, 1_000, 528_155,
        judged_mean=300.0, judged_spread=60.0, grade_probs=(0.7, 0.15, 0.1, 0.05),
        unretrieved=0.3, rel_decay=0.8, run_decay=1.0, doc_style="FT", query_style="consecutive",
    ),
    "smoke": _shape(
        "smoke", 20, 50, 10_000,
        judged_mean=5.0, judged_spread=0.0, grade_probs=(0.5, 0.3, 0.2), unretrieved=0.2,
        rel_decay=1.0, run_decay=1.2, doc_style="d", query_style="random",
    ),
    "two": _shape(
        "two", 2, 100, 100_000,
        judged_mean=6.0, judged_spread=0.0, grade_probs=(0.5, 0.3, 0.2), unretrieved=0.2,
        rel_decay=1.0, run_decay=1.2, doc_style="d", query_style="random",
    ),
}  # fmt: skip

#: shapes that ``--all`` (and the harness by default) generate; smoke and two are small helpers
MAIN_SHAPES = ("msmarco", "wide", "deep")


@dataclass(frozen=True)
class Workload:
    """Where a generated workload lives and what made it."""

    shape: str
    scale: float
    ties: float
    runs: int
    seed: int
    directory: Path
    sorted_queries: bool = False

    @property
    def qrels(self) -> Path:
        return self.directory / "qrels.txt"

    @property
    def run_files(self) -> list[Path]:
        if self.runs == 1:
            return [self.directory / "run.txt"]
        return [self.directory / f"run-{i:02d}.txt" for i in range(1, self.runs + 1)]

    @property
    def run(self) -> Path:
        return self.run_files[0]

    @property
    def manifest_path(self) -> Path:
        return self.directory / "manifest.json"

    def manifest(self) -> dict[str, Any]:
        return {
            "version": GENERATOR_VERSION,
            "shape": asdict(SHAPES[self.shape]),
            "scale": self.scale,
            "ties": self.ties,
            "runs": self.runs,
            "seed": self.seed,
            "sorted_queries": self.sorted_queries,
        }

    def is_current(self) -> bool:
        try:
            found = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError):
            return False
        files = [self.qrels, *self.run_files]
        # Through JSON, as the manifest was written (tuples read back as lists).
        expected = json.loads(json.dumps(self.manifest()))
        return found == expected and all(f.exists() for f in files)


def workload(
    shape: str,
    *,
    scale: float = 1.0,
    ties: float = DEFAULT_TIES,
    runs: int = 1,
    seed: int = 0,
    sorted_queries: bool = False,
    data_dir: Path = DEFAULT_DATA_DIR,
) -> Workload:
    """The workload for these parameters (not generated yet: see :func:`generate`)."""
    if shape not in SHAPES:
        raise SystemExit(f"unknown shape {shape!r}; choose from {', '.join(SHAPES)}")
    if not 0 <= ties < 1:
        raise SystemExit(f"ties={ties} must be in [0, 1)")
    if scale <= 0:
        raise SystemExit(f"scale={scale} must be positive")
    parts = [shape]
    if scale != 1:
        parts.append(f"x{scale:g}")
    parts.append(f"ties{ties:g}")
    if runs != 1:
        parts.append(f"{runs}runs")
    if seed:
        parts.append(f"seed{seed}")
    if sorted_queries:
        parts.append("sorted")
    directory = Path(data_dir) / "-".join(parts)
    return Workload(shape, scale, ties, runs, seed, directory, sorted_queries)


def n_queries(shape: Shape, scale: float) -> int:
    return max(2, round(shape.queries * scale))


#: Queries are generated in chunks of about this many candidate cells, so memory stays bounded
#: whatever the size (a 50M-line run needs no more than a small one).
CHUNK_CELLS = 4_000_000


def generate(w: Workload, *, force: bool = False, quiet: bool = True) -> Workload:
    """Write the workload's files (skipped when they exist and match the parameters)."""
    if not force and w.is_current():
        return w
    started = time.perf_counter()
    w.directory.mkdir(parents=True, exist_ok=True)
    shape = SHAPES[w.shape]
    # One independent stream per purpose, so that adding runs does not change the qrels.
    streams = np.random.SeedSequence([w.seed, GENERATOR_VERSION, *w.shape.encode()]).spawn(
        3 + w.runs
    )
    rng_ids, rng_pool, rng_qrels = (np.random.default_rng(s) for s in streams[:3])
    run_rngs = [np.random.default_rng(s) for s in streams[3:]]
    q = n_queries(shape, w.scale)
    pool = round(shape.depth * 1.3) + 1
    qids = _query_ids(shape, q, rng_ids)
    if w.sorted_queries:  # files in query order (by default they follow a topics file's order)
        qids = np.sort(qids)
    tags = ["bm25"] if w.runs == 1 else [f"system{i:02d}" for i in range(1, w.runs + 1)]
    judgments = 0
    with contextlib.ExitStack() as stack:
        qrels_out = stack.enter_context(_AtomicTable(w.qrels))
        runs_out = [stack.enter_context(_AtomicTable(path)) for path in w.run_files]
        step = max(1, CHUNK_CELLS // pool)
        for start in range(0, q, step):
            chunk = qids[start : start + step]
            candidates = _distinct_rows(len(chunk), pool, shape.corpus, rng_pool)
            q_col, d_col, grades = _judgments(shape, candidates, rng_qrels)
            qrels_out.write(_qrels_table(chunk[q_col], _doc_strings(shape, d_col), grades))
            judgments += len(grades)
            for out, rng, tag in zip(runs_out, run_rngs, tags, strict=True):
                docs, scores = _ranking(shape, candidates, w.ties, rng)
                out.write(
                    _run_table(chunk, _doc_strings(shape, docs.ravel()), scores, shape.depth, tag)
                )
    _atomic_write_bytes(w.manifest_path, json.dumps(w.manifest(), indent=2).encode() + b"\n")
    if not quiet:
        lines = q * shape.depth * w.runs
        print(
            f"generated {w.directory} ({q:,} queries, {lines:,} run lines, {judgments:,} "
            f"judgments) in {time.perf_counter() - started:.1f} s",
            file=sys.stderr,
        )
    return w


# -- the workload model ---------------------------------------------------------------------------
def _query_ids(shape: Shape, q: int, rng: np.random.Generator) -> np.ndarray:
    if shape.query_style == "consecutive":
        return np.arange(301, 301 + q, dtype=np.int64)
    # Unique ids in a range like MS MARCO's (up to about 1.1M), in no particular order, as in a
    # topics file.
    space = max(1_102_000, 2 * q)
    return rng.choice(space, size=q, replace=False).astype(np.int64)


def _distinct_rows(rows: int, width: int, space: int, rng: np.random.Generator) -> np.ndarray:
    """``rows x width`` doc numbers in ``[0, space)``, distinct within each row, random order."""
    if width > space:
        raise SystemExit(f"corpus of {space} documents cannot hold {width} distinct per query")
    # Sorted draws from [0, space - width] plus 0, 1, 2, ... are strictly increasing.
    drawn = rng.integers(0, space - width + 1, size=(rows, width), dtype=np.int64)
    drawn.sort(axis=1)
    drawn += np.arange(width, dtype=np.int64)
    return rng.permuted(drawn, axis=1)


def _plackett_luce(rows: int, width: int, decay: float, rng: np.random.Generator) -> np.ndarray:
    """Random keys whose descending order is a weighted random permutation of the columns.

    With weight ``w = 1 / (column + 1) ** decay``, ``log(U) / w`` sorts like drawing columns
    without replacement with probability proportional to ``w`` (Efraimidis and Spirakis).
    """
    weights = 1.0 / np.arange(1, width + 1, dtype=np.float64) ** decay
    return np.log(rng.random((rows, width))) / weights


def _judgments(
    shape: Shape, candidates: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Judged (query row, doc number, grade), one query after the other, no duplicates."""
    q, pool = candidates.shape
    if shape.judged_spread:
        counts = np.rint(rng.normal(shape.judged_mean, shape.judged_spread, q))
        counts = np.clip(counts, 1, pool - 1).astype(np.int64)
    else:
        counts = 1 + rng.poisson(shape.judged_mean - 1, q)
        counts = np.minimum(counts, pool - 1)
    # Judged candidates: the first counts[i] columns of a weighted permutation of row i.
    order = np.argsort(-_plackett_luce(q, pool, shape.rel_decay, rng), axis=1)
    take = np.arange(pool) < counts[:, None]
    rows = np.repeat(np.arange(q, dtype=np.int64), counts)
    docs = candidates[rows, order[take]]
    # Some judged documents were found by other systems only: fresh ids (outside every pool
    # with high probability; a rare collision is a duplicate and is dropped below).
    outside = rng.random(len(docs)) < shape.unretrieved
    docs[outside] = rng.integers(0, shape.corpus, int(outside.sum()))
    drawn = rng.choice(len(shape.grade_probs), size=len(docs), p=shape.grade_probs)
    # Every query keeps at least one relevant document, as in a real test collection.
    starts = np.cumsum(counts) - counts
    drawn[starts] = np.maximum(drawn[starts], 1)
    # Higher grades go to the documents a good system ranks first (front columns), with noise:
    # the query's grades, sorted descending, are dealt out in order of a noisy column position.
    place = (np.arange(len(docs)) - starts[rows]) / counts[rows]
    quality = place + rng.normal(0.0, 0.3, len(docs))
    grades = np.empty_like(drawn)
    grades[np.lexsort((quality, rows))] = drawn[np.lexsort((-drawn, rows))]
    keys = rows * shape.corpus + docs
    _, keep = np.unique(keys, return_index=True)
    keep.sort()
    return rows[keep], docs[keep], grades[keep].astype(np.int64)


def _ranking(
    shape: Shape, candidates: np.ndarray, ties: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One run: ``depth`` candidates per query in rank order, and their scores."""
    q, pool = candidates.shape
    depth = shape.depth
    keys = _plackett_luce(q, pool, shape.run_decay, rng)
    top = np.argpartition(-keys, depth - 1, axis=1)[:, :depth]
    ranked = np.take_along_axis(top, np.argsort(-np.take_along_axis(keys, top, 1), 1), 1)
    docs = np.take_along_axis(candidates, ranked, 1)
    # Scores: a query-specific top score falling by random gaps (at least 0.001 before rounding,
    # so that scores rounded to 4 decimals only tie where a gap is 0 on purpose).
    mean_gap = 10.0 / depth
    gaps = 0.001 + rng.exponential(mean_gap, size=(q, depth))
    gaps[:, 0] = 0.0
    gaps[rng.random((q, depth)) < ties] = 0.0
    top_score = rng.uniform(15.0, 30.0, size=(q, 1))
    scores = np.round(top_score - np.cumsum(gaps, axis=1), 4)
    return docs, scores


# -- writing --------------------------------------------------------------------------------------
def _doc_strings(shape: Shape, numbers: np.ndarray) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    ints = pa.array(np.ascontiguousarray(numbers, dtype=np.int64))
    if shape.doc_style == "int":
        return ints
    text = pc.cast(ints, pa.string())
    if shape.doc_style == "FT":
        high = pc.cast(pa.array(numbers // 100_000 + 900), pa.string())
        low = pc.utf8_lpad(pc.cast(pa.array(numbers % 100_000), pa.string()), 5, padding="0")
        return pc.binary_join_element_wise("FT", high, "-", low, "")
    return pc.binary_join_element_wise(shape.doc_style, text, "")


def _constant(text: str, n: int) -> Any:
    import pyarrow as pa

    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([text]))


def _qrels_table(qids: np.ndarray, docs: Any, grades: np.ndarray) -> Any:
    import pyarrow as pa

    return pa.table(
        {
            "qid": pa.array(qids),
            "iter": _constant("0", len(qids)),
            "docid": docs,
            "grade": pa.array(grades),
        }
    )


def _run_table(qids: np.ndarray, docs: Any, scores: np.ndarray, depth: int, tag: str) -> Any:
    import pyarrow as pa

    q = len(qids)
    n = q * depth
    return pa.table(
        {
            "qid": pa.array(np.repeat(qids, depth)),
            "q0": _constant("Q0", n),
            "docid": docs,
            "rank": pa.array(np.tile(np.arange(1, depth + 1, dtype=np.int64), q)),
            "score": pa.array(scores.ravel()),
            "tag": _constant(tag, n),
        }
    )


class _AtomicTable:
    """Space-separated lines appended table by table to a temporary file, renamed into place
    when every table is written (removed on error)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> _AtomicTable:
        fd, self.tmp = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        self.handle = os.fdopen(fd, "wb", buffering=1 << 22)
        return self

    def write(self, table: Any) -> None:
        import pyarrow.csv as csv

        options = csv.WriteOptions(
            include_header=False, delimiter=" ", quoting_style="none", batch_size=1 << 16
        )
        csv.write_csv(table, self.handle, options)

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        self.handle.close()
        if kind is None:
            os.chmod(self.tmp, 0o644)
            os.replace(self.tmp, self.path)
        else:
            Path(self.tmp).unlink(missing_ok=True)


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shapes", nargs="*", help=f"shapes to generate: {', '.join(SHAPES)}")
    parser.add_argument("--all", action="store_true", help=f"generate {', '.join(MAIN_SHAPES)}")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the number of queries")
    parser.add_argument(
        "--ties",
        type=float,
        default=DEFAULT_TIES,
        help=f"share of results tied with the one above (default {DEFAULT_TIES}; 0: no ties)",
    )
    parser.add_argument("--runs", type=int, default=1, help="runs against the same qrels")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sorted-queries",
        action="store_true",
        help="write queries in ascending id order (default: shuffled, like a topics file)",
    )
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--force", action="store_true", help="regenerate even if up to date")
    args = parser.parse_args(argv)
    shapes = list(args.shapes) + (list(MAIN_SHAPES) if args.all else [])
    if not shapes:
        parser.error("name at least one shape, or --all")
    for name in shapes:
        w = workload(
            name,
            scale=args.scale,
            ties=args.ties,
            runs=args.runs,
            sorted_queries=args.sorted_queries,
            seed=args.seed,
            data_dir=args.data_dir,
        )
        generate(w, force=args.force, quiet=False)
        print(w.directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
