"""The compiled loops (rankmeter.data._native) against the NumPy ones they replace.

Every function of the C extension has a NumPy twin in rankmeter/data; each test runs both on
the same random input and asks for the same answer, bit for bit. Where the extension was not
built (no C compiler when installing), the comparisons skip and say so; the pure path is what
the rest of the suite then runs. ``RANKMETER_PURE=1`` switches the extension off.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from rankmeter import evaluate
from rankmeter.data import _compiled
from rankmeter.data.csr import segments_repeat
from rankmeter.data.hashing import KeyTable, PairLookup, string_hashes
from rankmeter.data.run import Run
from rankmeter.errors import RankmeterError
from rankmeter.io import as_qrels, as_run

NATIVE = _compiled.NATIVE
needs_native = pytest.mark.skipif(
    NATIVE is None,
    reason="the C extension rankmeter.data._native was not built here (no C compiler when "
    "installing, or RANKMETER_PURE=1): only the NumPy loops run",
)


def both(monkeypatch: pytest.MonkeyPatch, work: Callable[[], Any]) -> tuple[Any, Any]:
    """``work()`` with the compiled loops, then with NumPy's."""
    monkeypatch.setattr(_compiled, "NATIVE", NATIVE)
    native = work()
    monkeypatch.setattr(_compiled, "NATIVE", None)
    pure = work()
    monkeypatch.setattr(_compiled, "NATIVE", NATIVE)
    return native, pure


def random_ids(rng: np.random.Generator, n: int, *, alphabet: str = "ab\u00e9\u4e2d0") -> list[str]:
    """Ids of 0 to 40 characters (multi-byte ones too), many sharing prefixes."""
    lengths = rng.integers(0, 41, size=n)
    short = rng.random(n) < 0.3
    lengths[short] = rng.integers(0, 17, size=int(short.sum()))
    chars = list(alphabet)
    return ["".join(rng.choice(chars, size=int(k))) for k in lengths]


@needs_native
@pytest.mark.parametrize("seed", range(6))
def test_string_hashes_equal(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ids = random_ids(rng, 3000)
    array = pa.array(ids, type=pa.string())
    cases = [
        array,
        array.slice(7, 1500),  # an offset into the buffers
        array.cast(pa.large_string()),
        pa.chunked_array([array.slice(0, 100), array.slice(100)]),
        pa.array([""] * 5),
        pa.array([], type=pa.string()),
    ]
    for case in cases:
        native, pure = both(monkeypatch, lambda case=case: string_hashes(case))
        assert native.dtype == pure.dtype == np.uint64
        assert np.array_equal(native, pure)


@needs_native
@pytest.mark.parametrize("n_keys", [1, 50, 5_000, 200_000])
def test_key_table_find_equal(monkeypatch: pytest.MonkeyPatch, n_keys: int) -> None:
    """Small tables and those past the bitmap threshold; slots several keys share (keys that
    differ only in their low bits)."""
    rng = np.random.default_rng(n_keys)
    keys = rng.integers(0, 2**63, size=n_keys, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    keys[: n_keys // 4] = keys[n_keys // 2 : n_keys // 2 + n_keys // 4] ^ np.uint64(1 << 3)
    keys = np.unique(keys)
    rng.shuffle(keys)
    table = KeyTable(keys)
    probes = np.concatenate(
        [
            rng.choice(keys, size=3 * len(keys)),
            rng.integers(0, 2**63, size=len(keys), dtype=np.uint64),
        ]
    )
    rng.shuffle(probes)
    native, pure = both(monkeypatch, lambda: table.find(probes))
    assert len(pure[0]) >= 3 * len(keys)
    for got, want in zip(native, pure, strict=True):
        assert got.dtype == want.dtype == np.int64
        assert np.array_equal(got, want)


@needs_native
@pytest.mark.parametrize("seed", range(4))
def test_pair_lookup_find_segmented_equal(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Groups of few judgments (scanned in place) and of many (probed in the table), probes
    in groups without judgments (-1) and matches judged for another group only."""
    rng = np.random.default_rng(seed)
    n_groups = 300
    sizes = rng.integers(1, 40, size=n_groups)
    sizes[rng.random(n_groups) < 0.5] = rng.integers(1, 4)
    groups = np.repeat(np.arange(n_groups, dtype=np.int64), sizes)
    vocab = pa.array([f"d{i}" for i in range(500)])
    string_rows = rng.integers(0, len(vocab), size=len(groups)).astype(np.int64)
    # one judgment per (group, doc)
    keep = np.unique(groups * 10_000 + string_rows, return_index=True)[1]
    keep.sort()
    groups, string_rows = groups[keep], string_rows[keep]
    lookup = PairLookup(groups, string_hashes(vocab)[string_rows], vocab, string_rows)
    assert lookup.exact
    # a run: 400 segments of random lengths, each in a group (or none)
    lengths = rng.integers(0, 60, size=400)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    segment_groups = rng.integers(-1, n_groups, size=len(lengths)).astype(np.int64)
    docs_rows = rng.integers(0, len(vocab), size=int(offsets[-1])).astype(np.int64)
    hashes = string_hashes(vocab)[docs_rows]
    native, pure = both(
        monkeypatch,
        lambda: lookup.find_segmented(hashes, offsets, segment_groups, vocab, docs_rows),
    )
    assert len(pure[0]) > 50
    for got, want in zip(native, pure, strict=True):
        assert np.array_equal(got, want)


@needs_native
@pytest.mark.parametrize("seed", range(6))
def test_segments_repeat_equal(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 300, size=200)
    lengths[::7] = 1000
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    keys = rng.integers(0, 2**64 - 1, size=int(offsets[-1]), dtype=np.uint64)
    cases = [(offsets, keys)]
    for segment in (0, 5, 199):  # a repeat inside one segment
        if lengths[segment] >= 2:
            copy = keys.copy()
            copy[offsets[segment] + 1] = copy[offsets[segment + 1] - 1]
            cases.append((offsets, copy))
    copy = keys.copy()  # equal keys in neighbouring segments only: no repeat
    copy[offsets[3]] = copy[offsets[3] - 1]
    cases.append((offsets, copy))
    cases.append((offsets[5:9], keys))  # segments that do not start at 0
    cases.append((np.zeros(1, dtype=np.int64), keys[:0]))
    answers = []
    for offs, ks in cases:
        native, pure = both(monkeypatch, lambda offs=offs, ks=ks: segments_repeat(offs, ks))
        assert native is pure
        answers.append(pure)
    assert True in answers and False in answers


def tied_run(rng: np.random.Generator, n_queries: int, *, shuffled: bool) -> dict[str, Any]:
    """Columns of a run whose scores tie often (few distinct values), doc ids that share
    prefixes (\"d1\" < \"d10\"), some queries written bottom-up or shuffled."""
    qs, ds, ss = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(1, 80))
        docs = rng.choice(5000, size=n, replace=False)
        scores = rng.integers(0, max(2, n // 6), size=n).astype(np.float64) / 4
        scores[rng.random(n) < 0.05] = -0.0
        scores[rng.random(n) < 0.05] = 0.0
        order = np.argsort(-scores, kind="stable")
        if not shuffled:
            docs, scores = docs[order], scores[order]
        qs += [f"q{q}"] * n
        ds += [f"d{d}" for d in docs]
        ss += scores.tolist()
    if shuffled:
        perm = rng.permutation(len(qs))
        qs, ds, ss = [qs[i] for i in perm], [ds[i] for i in perm], [ss[i] for i in perm]
    return {"query_ids": qs, "doc_ids": ds, "scores": ss}


def run_state(run: Run) -> tuple[Any, ...]:
    rankings = tuple(tuple(run.ranking(q)) for q in run.query_ids)
    return (run.offsets.tolist(), run.scores.tolist(), rankings, run.doc_hashes().tolist())


@needs_native
@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("ties", ["trec_eval", "input"])
def test_rank_order_equal(monkeypatch: pytest.MonkeyPatch, shuffled: bool, ties: str) -> None:
    """Run construction (rank order, tie moves, hashes, duplicate check) and re-ranking under
    the other tie policy give the same run both ways."""
    rng = np.random.default_rng(11 if shuffled else 12)
    columns = tied_run(rng, 120, shuffled=shuffled)
    other = "input" if ties == "trec_eval" else "trec_eval"

    def work() -> list[tuple[Any, ...]]:
        run = Run.from_columns(**columns, ties=ties)
        arrow = Run.from_columns(
            pa.array(columns["query_ids"]),
            pa.array(columns["doc_ids"]).cast(pa.large_string()),
            pa.array(columns["scores"]),
            ties=ties,
        )
        return [run_state(r) for r in (run, run.with_ties(other), arrow)]

    native, pure = both(monkeypatch, work)
    assert native == pure


@needs_native
def test_tie_order_is_trec_evals() -> None:
    """Equal scores go doc id descending in byte order: a prefix sorts first of the two it
    shares, multi-byte characters by their UTF-8 bytes."""
    docs = ["d1", "d10", "d2", "\u00e9", "e", "d", "d1\u00e9"]
    run = Run.from_columns(["q"] * len(docs), docs, [1.0] * len(docs))
    assert run.ranking("q") == sorted(docs, key=lambda d: d.encode(), reverse=True)


@needs_native
@pytest.mark.parametrize("seed", range(3))
def test_evaluate_equal(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Whole evaluations on random data with ties, queries missing both ways, grade 2."""
    rng = np.random.default_rng(seed)
    columns = tied_run(rng, 60, shuffled=bool(seed % 2))
    judged = {}
    for q in range(0, 70, 1):
        docs = rng.choice(5000, size=int(rng.integers(1, 30)), replace=False)
        judged[f"q{q}"] = {f"d{d}": int(rng.integers(0, 3)) for d in docs}
    qrels = as_qrels(judged)
    metrics = ["nDCG@10", "AP", "RR", "P@5", "R@100", "bpref", "nDCG"]

    def work() -> Any:
        run = as_run(Run.from_columns(**columns))
        return [
            evaluate(qrels, run, metrics, rel=rel, include_missing=missing).per_query.to_dict()
            for rel in (1, 2)
            for missing in (False, True)
        ]

    native, pure = both(monkeypatch, work)
    assert native == pure


@needs_native
def test_duplicate_error_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated (query, doc) is found both ways, with the same message."""
    rng = np.random.default_rng(5)
    columns = tied_run(rng, 40, shuffled=True)
    columns["query_ids"].append(columns["query_ids"][17])
    columns["doc_ids"].append(columns["doc_ids"][17])
    columns["scores"].append(0.125)

    def work() -> str:
        with pytest.raises(RankmeterError, match="duplicate result") as caught:
            Run.from_columns(**columns)
        return str(caught.value)

    native, pure = both(monkeypatch, work)
    assert native == pure


def test_pure_switch() -> None:
    """RANKMETER_PURE=1 turns the extension off (so a suspected bug in it can be ruled out
    from the command line), and rankmeter still evaluates."""
    code = (
        "from rankmeter.data import _compiled; from rankmeter import evaluate; "
        "from rankmeter.io import as_qrels, as_run; "
        "r = evaluate(as_qrels({'q': {'a': 1}}), as_run({'q': {'b': 2.0, 'a': 1.0}}), ['RR']); "
        "print(_compiled.NATIVE is None, r.metrics['RR'])"
    )
    env = dict(os.environ, RANKMETER_PURE="1")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "0.5"]


@needs_native
@pytest.mark.parametrize("seed", range(4))
def test_dictionary_codes_equal_arrows(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Interning (qrels' query and doc ids, a run's queries that come back) numbers ids as
    Arrow's dictionary_encode does: codes in order of first appearance, the same strings."""
    from rankmeter.data.ids import intern, intern_docs, intern_first_seen
    from rankmeter.data.origin import Origin

    rng = np.random.default_rng(seed)
    pool = random_ids(rng, 300)
    pool = [p or "x" for p in pool]  # (an empty id is refused before interning)
    values = [pool[i] for i in rng.integers(0, len(pool), size=5000)]
    cases = [
        pa.array(values),
        pa.array(values).cast(pa.large_string()),
        pa.chunked_array([pa.array(values[:1000]), pa.array(values[1000:])]),
        pa.array(values).slice(123, 2000),
    ]
    origin = Origin("<test>")
    for case in cases:

        def work(case: Any = case) -> Any:
            codes, vocab = intern_docs(case, origin)
            first_codes, first_vocab = intern_first_seen(case, origin, "query id")
            natural_codes, natural_vocab = intern(case, origin, "query id")
            return (
                codes.tolist(),
                vocab.to_pylist(),
                first_codes.tolist(),
                first_vocab.tolist(),
                natural_codes.tolist(),
                natural_vocab.tolist(),
            )

        native, pure = both(monkeypatch, work)
        assert native == pure
