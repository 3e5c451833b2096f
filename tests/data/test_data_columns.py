"""The column helpers under Qrels and Run (rankmeter.data.hashing, .csr, .ids): hashing,
grouping, repeat detection, hash lookup.

These are the fast paths of loading and joining; each is checked against a plain-Python
reference on random inputs, including the awkward cases (NUL bytes, ids longer than a word,
strings at the very end of a buffer, sliced and chunked arrays, hash collisions).
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankmeter.data import hashing
from rankmeter.data.csr import segments_repeat
from rankmeter.data.hashing import HashLookup, string_hashes
from rankmeter.data.ids import intern_first_seen, intern_grouped, natural_key, natural_order
from rankmeter.data.origin import Origin

ids = st.text(alphabet=st.sampled_from("ab\x00é7"), min_size=0, max_size=40)


@settings(max_examples=200, deadline=None)
@given(st.lists(ids, min_size=1, max_size=60), st.integers(0, 10), st.integers(0, 60))
def test_equal_strings_hash_equal_and_distinct_ones_apart(
    values: list[str], start: int, length: int
) -> None:
    array = pa.array(values, type=pa.string())
    hashes = string_hashes(array)
    by_hash: dict[int, str] = {}
    for value, h in zip(values, hashes.tolist(), strict=True):
        assert by_hash.setdefault(h, value) == value  # no collision among these
    # The same strings in another layout (slice, copy, chunks, large_string) hash the same.
    piece = array.slice(min(start, len(values)), length)
    expect = hashes[min(start, len(values)) :][:length]
    assert np.array_equal(string_hashes(piece), expect)
    assert np.array_equal(string_hashes(pa.array(piece.to_pylist(), type=pa.string())), expect)
    cut = len(values) // 2
    chunked = pa.chunked_array([array.slice(0, cut), array.slice(cut)], type=pa.string())
    assert np.array_equal(string_hashes(chunked), hashes)
    assert np.array_equal(string_hashes(array.cast(pa.large_string())), hashes)


def test_hashes_tell_apart_strings_that_differ_only_in_length_or_late_bytes() -> None:
    values = ["a", "a\x00", "\x00", "\x00\x00", "", "x" * 8, "x" * 9, "x" * 16 + "y", "x" * 17]
    hashes = string_hashes(pa.array(values))
    assert len(set(hashes.tolist())) == len(values)


def test_hashes_work_in_small_chunks_across_the_buffer_end() -> None:
    values = [f"doc-{i}" * (1 + i % 5) for i in range(3000)]
    array = pa.array(values)
    whole = string_hashes(array)
    assert np.array_equal(string_hashes(array, chunk=7), whole)
    assert np.array_equal(string_hashes(pa.array(values[-3:])), whole[-3:])


def _reference_repeat(offsets: np.ndarray, keys: np.ndarray) -> bool:
    return any(len(set(keys[a:b].tolist())) < b - a for a, b in itertools.pairwise(offsets))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 40), min_size=0, max_size=30),
    st.integers(1, 60),
    st.integers(0, 2**32 - 1),
)
def test_segments_repeat_matches_a_set_per_segment(
    lengths: list[int], alphabet: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    keys = rng.integers(0, alphabet, size=int(offsets[-1])).astype(np.uint64)
    keys[rng.random(len(keys)) < 0.05] = np.iinfo(np.uint64).max  # the padding value itself
    assert segments_repeat(offsets, keys) == _reference_repeat(offsets, keys)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([0, 1, 2, 3, 5, 8]), min_size=0, max_size=80),
    st.integers(1, 4),
    st.integers(1, 40),
    st.integers(0, 2**32 - 1),
)
def test_segments_repeat_with_many_equal_lengths_and_colliding_upper_halves(
    lengths: list[int], uppers: int, lowers: int, seed: int
) -> None:
    """Many segments of one length (sorted as a matrix, in place or gathered), and keys whose
    upper 32 bits often agree while the keys differ (checked again on all 64 bits)."""
    rng = np.random.default_rng(seed)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n = int(offsets[-1])
    upper = rng.integers(0, uppers, size=n).astype(np.uint64) << np.uint64(32)
    keys = upper | rng.integers(0, lowers, size=n).astype(np.uint64)
    assert segments_repeat(offsets, keys) == _reference_repeat(offsets, keys)


def test_segments_repeat_on_equal_lengths_and_the_largest_value() -> None:
    top = np.iinfo(np.uint64).max
    offsets = np.array([0, 3, 6], dtype=np.int64)
    assert not segments_repeat(offsets, np.array([1, 2, top, 1, 2, top], dtype=np.uint64))
    assert segments_repeat(offsets, np.array([1, 2, top, 1, top, top], dtype=np.uint64))
    # A repeat across segments is not a repeat.
    assert not segments_repeat(np.array([0, 1, 2, 4]), np.array([5, 5, 5, 6], dtype=np.uint64))


def test_intern_grouped_equals_intern_first_seen() -> None:
    origin = Origin("<test>")
    for values in (
        ["q2", "q2", "q1", "q1", "q1", "q3"],
        ["q2", "q1", "q2"],  # not grouped: falls back
        ["q1"],
        ["a", "b", "c", "a"],
    ):
        codes, vocab = intern_grouped(pa.array(values), origin, "query id")
        ref_codes, ref_vocab = intern_first_seen(pa.array(values), origin, "query id")
        assert codes.tolist() == ref_codes.tolist()
        assert vocab.tolist() == ref_vocab.tolist()
        assert [vocab[c] for c in codes] == values
    chunked = pa.chunked_array([["x", "x"], ["x", "y"], ["y"]])
    codes, vocab = intern_grouped(chunked, origin, "query id")
    assert codes.tolist() == [0, 0, 0, 1, 1] and vocab.tolist() == ["x", "y"]


@settings(max_examples=150, deadline=None)
@given(st.lists(ids.filter(bool), min_size=1, max_size=40, unique=True), st.lists(ids, max_size=80))
def test_hash_lookup_finds_exactly_the_vocabulary(vocab: list[str], probes: list[str]) -> None:
    lookup = HashLookup(pa.array(vocab, type=pa.string()))
    strings = pa.array(probes + vocab, type=pa.string())
    rows = np.arange(len(strings), dtype=np.int64)[::-1].copy()
    codes = lookup.codes(strings, string_hashes(strings)[rows], rows)
    where = {v: i for i, v in enumerate(vocab)}
    assert codes.tolist() == [where.get(s, -1) for s in strings.to_pylist()[::-1]]


def test_hash_lookup_confirms_matches_by_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every string hashes alike: matches must still come from the text, never the hash.
    def constant(strings: object, *, chunk: int = 0) -> np.ndarray:
        return np.zeros(len(strings), dtype=np.uint64)  # type: ignore[arg-type]

    monkeypatch.setattr(hashing, "string_hashes", constant)
    lookup = HashLookup(pa.array(["d1"]))
    strings = pa.array(["d2", "d1", "d3"])
    rows = np.arange(3, dtype=np.int64)
    assert lookup.codes(strings, np.zeros(3, dtype=np.uint64), rows).tolist() == [-1, 0, -1]
    colliding = HashLookup(pa.array(["d1", "d9"]))  # two vocabulary ids share a hash
    assert colliding.codes(strings, np.zeros(3, dtype=np.uint64), rows).tolist() == [-1, 0, -1]


def test_a_hash_collision_is_not_a_duplicate_but_a_real_duplicate_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rankmeter.data import Run
    from rankmeter.data import run as run_module
    from rankmeter.errors import FormatError

    def constant(strings: object, *, chunk: int = 0) -> np.ndarray:
        return np.zeros(len(strings), dtype=np.uint64)  # type: ignore[arg-type]

    monkeypatch.setattr(run_module, "string_hashes", constant)
    run = Run.from_columns(["q", "q", "q"], ["a", "b", "c"], [3.0, 2.0, 1.0])
    assert run.ranking("q") == ["a", "b", "c"]
    with pytest.raises(FormatError, match="duplicate result for query 'q', doc 'b'"):
        Run.from_columns(["q", "q", "q"], ["a", "b", "b"], [3.0, 2.0, 1.0])


def test_hash_lookup_with_many_entries_sharing_slots() -> None:
    vocab = [f"doc{i}" for i in range(5000)]  # 5,000 ids in 65,536 slots: many shared slots
    lookup = HashLookup(pa.array(vocab))
    probes = pa.array([f"doc{i}" for i in range(0, 10000, 3)])
    rows = np.arange(len(probes), dtype=np.int64)
    codes = lookup.codes(probes, string_hashes(probes), rows)
    assert codes.tolist() == [i if i < 5000 else -1 for i in range(0, 10000, 3)]


def test_a_run_leaves_the_callers_score_array_alone() -> None:
    from rankmeter.data import Run

    scores = np.array([1.0, 1.0, 0.5])
    run = Run.from_columns(["q", "q", "q"], ["a", "b", "c"], scores)
    assert run.ranking("q") == ["b", "a", "c"]
    assert scores.flags.writeable and scores.tolist() == [1.0, 1.0, 0.5]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 10**6).map(str),
            st.integers(0, 999).map(lambda i: f"{i:05d}"),
            st.text(alphabet=st.sampled_from("09aZé-_ "), min_size=1, max_size=6),
            st.integers(10**18, 10**22).map(str),
        ),
        unique=True,
        max_size=40,
    )
)
def test_natural_order_sorts_like_natural_key(ids: list[str]) -> None:
    expect = sorted(ids, key=natural_key)
    for given_as in (pa.array(ids, type=pa.string()), np.asarray(ids, dtype=object)):
        order = natural_order(given_as)
        assert [ids[i] for i in order] == expect


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_an_empty_id_is_named_by_its_row_in_any_chunk_and_slice(kind: pa.DataType) -> None:
    from rankmeter.data._inputs import string_column
    from rankmeter.errors import FormatError

    origin = Origin("<test>")
    whole = pa.array(["a", "b", "c", "", "d", ""], type=kind)
    for values, row in (
        (whole, 3),
        (whole.slice(4), 1),  # a slice: its own offsets start inside the buffer
        (pa.chunked_array([whole.slice(0, 2), whole.slice(2)], type=kind), 3),
        (pa.chunked_array([whole.slice(0, 3), whole.slice(4)], type=kind), 4),
    ):
        with pytest.raises(FormatError, match=rf"^<test>: row {row + 1}: empty doc id$"):
            string_column(values, Origin("<test>", describe=lambda r: f"row {r + 1}"), "doc id")
    assert string_column(whole.slice(0, 3), origin, "doc id").to_pylist() == ["a", "b", "c"]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=6),
    st.lists(st.integers(0, 1000), max_size=30),
)
def test_take_rows_from_chunks_equals_a_take_from_the_whole(
    sizes: list[int], picks: list[int]
) -> None:
    from rankmeter.data.arrays import take_rows

    values = [f"id{i}" for i in range(sum(sizes))]
    parts, at = [], 0
    for size in sizes:
        parts.append(pa.array(values[at : at + size], type=pa.string()))
        at += size
    chunked = pa.chunked_array(parts, type=pa.string())
    rows = np.array([p % len(values) for p in picks] if values else [], dtype=np.int64)
    expected = [values[r] for r in rows.tolist()]
    assert take_rows(chunked, rows).to_pylist() == expected
    assert take_rows(pa.array(values, type=pa.string()), rows).to_pylist() == expected


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abc"), ids.filter(bool)), max_size=30, unique=True),
    st.lists(st.tuples(st.sampled_from("abcd"), ids.filter(bool)), min_size=1, max_size=40),
)
def test_pair_lookup_finds_exactly_the_judged_pairs(
    judged: list[tuple[str, str]], results: list[tuple[str, str]]
) -> None:
    """A run's results whose (query, doc) pair is judged, and their judgment rows; a doc judged
    only for another query is not found."""
    from rankmeter.data import Qrels, Run

    results = list(dict.fromkeys(results))  # a doc once per query
    if not judged:
        judged = [("z", "never")]
    qrels = Qrels.from_columns([q for q, _ in judged], [d for _, d in judged], [1] * len(judged))
    run = Run.from_columns([q for q, _ in results], [d for _, d in results], np.zeros(len(results)))
    rows = qrels.query_rows()
    groups = np.array([rows.get(str(q), -1) for q in run.segment_ids], dtype=np.int64)
    positions, at = run.find_pairs(qrels.pair_lookup(), groups)
    found = {
        (str(run.segment_ids[np.searchsorted(run.offsets, p, side="right") - 1]), d)
        for p, d in zip(positions.tolist(), run.doc_ids(positions).to_pylist(), strict=True)
    }
    assert found == set(judged) & set(results)
    assert np.all(np.diff(positions) > 0)
    judged_docs = qrels.doc_ids(at).to_pylist()
    assert judged_docs == run.doc_ids(positions).to_pylist()
    assert [str(qrels.segment_ids[g]) for g in np.searchsorted(qrels.offsets, at, "right") - 1] == [
        str(run.segment_ids[s]) for s in np.searchsorted(run.offsets, positions, "right") - 1
    ]


@pytest.mark.parametrize("n_keys", [100, 20_000])  # a table alone; a table behind a bitmap
def test_key_table_finds_exactly_its_keys(n_keys: int) -> None:
    from rankmeter.data.hashing import KeyTable

    rng = np.random.default_rng(n_keys)
    keys = np.unique(rng.integers(0, 2**63, size=n_keys, dtype=np.int64).astype(np.uint64) * 2)
    # Probes: keys, keys' neighbours (same slot, other key) and random values.
    probes = np.concatenate((keys[::3], keys[::5] + np.uint64(1), rng.permutation(keys)[:50]))
    probes = np.concatenate((probes, rng.integers(0, 2**63, size=5000).astype(np.uint64)))
    table = KeyTable(keys)
    where, index = table.find(probes)
    position = {int(k): i for i, k in enumerate(keys.tolist())}
    expected = [(i, position[int(p)]) for i, p in enumerate(probes.tolist()) if int(p) in position]
    assert list(zip(where.tolist(), index.tolist(), strict=True)) == expected
