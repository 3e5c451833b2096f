"""Interleaved lists: two rankers' results merged into one shown list, each shown document
on the team of the ranker it came from (:func:`interleave`, one list; :func:`interleave_runs`,
every query of two runs; vectorised over requests for the log simulator).

- **team-draft** (Radlinski, Kurup & Joachims 2008, Algorithm 1): in each round a coin decides
  which ranker picks first; each picks its highest-ranked document not shown yet, and the
  document joins that ranker's team. The list grows while both rankings still have a document
  that is not shown (and up to ``length``).
- **balanced** (Joachims 2003): one coin decides which ranking starts; the two rankings are
  then read alternately (pointers ``k_a`` and ``k_b`` that never differ by more than one), a
  document already shown being skipped, so the shown top *n* is always A's top ``k_a`` together
  with B's top ``k_b``.

How clicks on such lists are credited and tested is :mod:`rankmeter.online.interleaving`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rankmeter import _validate
from rankmeter._validate import choice, integer
from rankmeter.errors import PolicyError

__all__ = ["METHODS", "TEAMS", "Interleaving", "interleave", "interleave_runs"]

METHODS = ("team-draft", "balanced")
TEAMS = ("A", "B")

IntArray = npt.NDArray[np.int64]

# -- building the shown lists -----------------------------------------------------------------


@dataclass(frozen=True)
class Interleaving:
    """One shown list made from two rankings, and how to credit its clicks.

    Attributes
    ----------
    doc_ids : the shown documents, top first
    teams : per shown document, the ranker ("A" or "B") it was taken from
    method : "team-draft" or "balanced"
    ranking_a, ranking_b : the two rankings it was made from
    """

    doc_ids: tuple[str, ...]
    teams: tuple[str, ...]
    method: str
    ranking_a: tuple[str, ...]
    ranking_b: tuple[str, ...]

    def credit(self, clicked: Iterable[int]) -> tuple[int, int]:
        """The clicks credited to A and to B, given the clicked positions (1-based).

        Team-draft: each click counts for the team of its document. Balanced: with ``d`` the
        lowest clicked document and ``k = min(rank of d in A, rank of d in B)``, A gets the
        clicked documents among A's top ``k`` and B those among B's top ``k``.

        >>> shown = interleave(["d1", "d2", "d3", "d4"], ["d2", "d3", "d4", "d1"],
        ...                    method="balanced", seed=0)
        >>> shown.credit([shown.doc_ids.index("d3") + 1])
        (0, 1)
        """
        positions = sorted({integer("clicked position", p, low=1) for p in clicked})
        if positions and positions[-1] > len(self.doc_ids):
            raise PolicyError(
                f"clicked position {positions[-1]} is not on the shown list (1-{len(self.doc_ids)})"
            )
        if not positions:
            return 0, 0
        docs = [self.doc_ids[p - 1] for p in positions]
        if self.method == "team-draft":
            teams = [self.teams[p - 1] for p in positions]
            return teams.count("A"), teams.count("B")
        rank_a = {d: r for r, d in enumerate(self.ranking_a, start=1)}
        rank_b = {d: r for r, d in enumerate(self.ranking_b, start=1)}
        lowest = docs[-1]
        k = min(rank_a.get(lowest, math.inf), rank_b.get(lowest, math.inf))
        return (
            sum(rank_a.get(d, math.inf) <= k for d in docs),
            sum(rank_b.get(d, math.inf) <= k for d in docs),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "doc_ids": list(self.doc_ids),
            "teams": list(self.teams),
            "ranking_a": list(self.ranking_a),
            "ranking_b": list(self.ranking_b),
        }


def _rng(seed: Any) -> np.random.Generator:
    if seed is None or isinstance(seed, np.random.Generator):
        return np.random.default_rng(seed)
    return np.random.default_rng(_validate.seed(seed))


def _ranking(name: str, ranking: Any) -> tuple[str, ...]:
    if isinstance(ranking, (str, bytes)) or not isinstance(ranking, Iterable):
        raise PolicyError(f"{name} must be a list of doc ids, not {type(ranking).__name__}")
    docs = tuple(str(d) for d in ranking)
    seen: set[str] = set()
    for doc in docs:
        if doc in seen:
            raise PolicyError(f"{name} has {doc!r} twice: a ranking lists each document once")
        seen.add(doc)
    return docs


def interleave(
    ranking_a: Sequence[str],
    ranking_b: Sequence[str],
    *,
    method: str = "team-draft",
    length: int | None = None,
    seed: int | np.random.Generator | None = None,
) -> Interleaving:
    """Build the list shown to a user from two rankings (lists of doc ids, best first).

    Parameters
    ----------
    ranking_a, ranking_b : the two rankers' results (A: the current one, B: the candidate)
    method : "team-draft" (Radlinski et al. 2008; the default) or "balanced" (Joachims 2003);
        see the module docstring
    length : at most this many shown documents (default: until a ranking runs out)
    seed : the coins' seed (an integer, or a NumPy Generator); None draws fresh coins, as live
        traffic needs: a fixed default seed would give every request the same coins

    Returns
    -------
    Interleaving: the shown doc ids, each one's team, and :meth:`Interleaving.credit`.

    Examples
    --------
    >>> shown = interleave(["a", "b", "c", "d"], ["b", "e", "a", "f"], length=4, seed=2)
    >>> shown.doc_ids, shown.teams
    (('a', 'b', 'e', 'c'), ('A', 'B', 'B', 'A'))
    >>> shown.credit([1, 3, 4])  # clicks on a, e and c
    (2, 1)
    """
    method = choice("method", method, METHODS)
    a, b = _ranking("ranking_a", ranking_a), _ranking("ranking_b", ranking_b)
    size = len(a) + len(b) if length is None else integer("length", length, low=1)
    vocabulary = list(dict.fromkeys(a + b))
    code = {d: i for i, d in enumerate(vocabulary)}
    depth = max(1, min(size, max(len(a), len(b))))
    a_codes = np.full((1, depth), -1, dtype=np.int64)
    b_codes = np.full((1, depth), -1, dtype=np.int64)
    a_codes[0, : min(len(a), depth)] = [code[d] for d in a[:depth]]
    b_codes[0, : min(len(b), depth)] = [code[d] for d in b[:depth]]
    docs, teams = _interleave_codes(
        a_codes, b_codes, np.zeros(1, dtype=np.int64), method, size, _rng(seed)
    )
    shown = docs[0] >= 0
    return Interleaving(
        doc_ids=tuple(vocabulary[int(c)] for c in docs[0][shown]),
        teams=tuple(TEAMS[int(t)] for t in teams[0][shown]),
        method=method,
        ranking_a=a,
        ranking_b=b,
    )


def _slots(a_codes: IntArray, b_codes: IntArray) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Per query, a slot per distinct document of the two top lists: A's ``i``-th document is
    slot ``i``; B's ``j``-th is the slot of the same document in A, else ``depth + j``.
    Returns A's slots, B's slots (-1 past a ranking's end), the doc code of every slot and
    the rankings' lengths as (a_len, b_len) stacked."""
    depth = a_codes.shape[1]
    a_slots = np.where(a_codes >= 0, np.arange(depth), -1)
    same = (b_codes[:, :, None] == a_codes[:, None, :]) & (b_codes[:, :, None] >= 0)
    in_a = same.any(axis=2)
    b_slots = np.where(in_a, same.argmax(axis=2), depth + np.arange(depth))
    b_slots = np.where(b_codes >= 0, b_slots, -1)
    slot_docs = np.concatenate([a_codes, b_codes], axis=1)
    lengths = np.stack([(a_codes >= 0).sum(axis=1), (b_codes >= 0).sum(axis=1)])
    return a_slots, b_slots, slot_docs, lengths


def _interleave_codes(
    a_codes: IntArray,
    b_codes: IntArray,
    query_of_request: IntArray,
    method: str,
    length: int,
    rng: np.random.Generator,
) -> tuple[IntArray, npt.NDArray[np.int8]]:
    """The shown lists of many requests at once.

    ``a_codes`` and ``b_codes`` (queries × depth, -1 padded) hold the doc codes of each
    query's two rankings; request ``r`` interleaves query ``query_of_request[r]``. Returns the
    shown doc codes (requests × length, -1 where the list ended) and their teams (0: A,
    1: B, -1: none). One loop over the shown positions; every request moves at once.
    """
    a_slots, b_slots, slot_docs, lengths = _slots(a_codes, b_codes)
    q = query_of_request
    n, depth = len(q), a_codes.shape[1]
    a_slot, b_slot = a_slots[q], b_slots[q]
    a_len, b_len = lengths[0][q], lengths[1][q]
    rows = np.arange(n)
    shown = np.zeros((n, 2 * depth), dtype=bool)
    out_slots = np.full((n, length), -1, dtype=np.int64)
    out_teams = np.full((n, length), -1, dtype=np.int8)
    ka = np.zeros(n, dtype=np.int64)
    kb = np.zeros(n, dtype=np.int64)
    n_out = np.zeros(n, dtype=np.int64)

    def at(slots: IntArray, k: IntArray) -> IntArray:
        found: IntArray = slots[rows, np.minimum(k, depth - 1)]
        return found

    def skip_shown(slots: IntArray, k: IntArray, lens: IntArray) -> None:
        # A ranking's pointer moves past documents already shown (at most depth times).
        while True:
            move = (k < lens) & shown[rows, at(slots, k)]
            if not move.any():
                return
            k[move] += 1

    if method == "team-draft":
        picks_a = np.zeros(n, dtype=np.int64)
        picks_b = np.zeros(n, dtype=np.int64)
        for step in range(length):
            skip_shown(a_slot, ka, a_len)
            skip_shown(b_slot, kb, b_len)
            live = (ka < a_len) & (kb < b_len)
            coin = rng.random(n) < 0.5  # drawn for every request: the same seed, the same coins
            if not live.any():
                break
            take_a = (picks_a < picks_b) | ((picks_a == picks_b) & coin)
            slot = np.where(take_a, at(a_slot, ka), at(b_slot, kb))
            live_rows = rows[live]
            out_slots[live_rows, step] = slot[live]
            out_teams[live_rows, step] = np.where(take_a, 0, 1)[live]
            shown[live_rows, slot[live]] = True
            picks_a += live & take_a
            picks_b += live & ~take_a
    else:
        a_first = rng.random(n) < 0.5
        for _ in range(2 * depth):
            live = (ka < a_len) & (kb < b_len) & (n_out < length)
            if not live.any():
                break
            take_a = (ka < kb) | ((ka == kb) & a_first)
            slot = np.where(take_a, at(a_slot, ka), at(b_slot, kb))
            new = live & ~shown[rows, slot]
            new_rows = rows[new]
            out_slots[new_rows, n_out[new]] = slot[new]
            out_teams[new_rows, n_out[new]] = np.where(take_a, 0, 1)[new]
            shown[new_rows, slot[new]] = True
            n_out += new
            ka += live & take_a
            kb += live & ~take_a
    docs = np.where(out_slots >= 0, slot_docs[q[:, None], np.maximum(out_slots, 0)], -1)
    return docs, out_teams


def interleave_runs(
    run_a: Any,
    run_b: Any,
    *,
    method: str = "team-draft",
    length: int = 10,
    impressions: int = 1,
    seed: int | np.random.Generator | None = None,
) -> Any:
    """The shown lists of ``impressions`` requests for every query both runs answer.

    Parameters
    ----------
    run_a, run_b : Runs (or anything :func:`rankmeter.as_run` reads)
    method : "team-draft" or "balanced" (see :func:`interleave`)
    length : documents shown per request (a results page)
    impressions : requests per query, each with its own coins
    seed : the coins' seed; None: fresh coins

    Returns
    -------
    pyarrow.Table with one row per shown document: request_id (``"<query_id>/<impression>"``),
    query_id, impression (0-based), position (1-based), doc_id, interleave_team ("A" or
    "B"); the log's columns, ready for a click model. Queries in natural order.

    Examples
    --------
    >>> from rankmeter import Run
    >>> a = Run.from_dict({"q1": {"x": 2.0, "y": 1.0}})
    >>> b = Run.from_dict({"q1": {"y": 2.0, "z": 1.0}})
    >>> shown = interleave_runs(a, b, length=3, impressions=2, seed=0)
    >>> shown.num_rows, sorted(set(shown["doc_id"].to_pylist()))
    (4, ['x', 'y'])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankmeter.io import as_run

    method = choice("method", method, METHODS)
    length = integer("length", length, low=1, what="documents shown per request")
    impressions = integer("impressions", impressions, low=1, what="requests per query")
    rng = _rng(seed)
    tables = [as_run(run).to_arrow() for run in (run_a, run_b)]
    tables = [t.filter(pc.less_equal(t["rank"], length)) for t in tables]
    in_b = set(tables[1]["query_id"].to_pylist())
    queries = [q for q in dict.fromkeys(tables[0]["query_id"].to_pylist()) if q in in_b]
    query_index = {q: i for i, q in enumerate(queries)}
    docs = pa.chunked_array([tables[0]["doc_id"], tables[1]["doc_id"]]).combine_chunks()
    encoded = pc.dictionary_encode(docs)
    vocabulary = encoded.dictionary
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    per_run = []
    start = 0
    for table in tables:
        stop = start + table.num_rows
        keep = np.array([q in query_index for q in table["query_id"].to_pylist()], dtype=bool)
        grid = np.full((len(queries), length), -1, dtype=np.int64)
        rows = np.array(
            [query_index[q] for q in table["query_id"].filter(pa.array(keep)).to_pylist()],
            dtype=np.int64,
        )
        ranks = table["rank"].to_numpy()[keep] - 1
        grid[rows, ranks] = codes[start:stop][keep]
        per_run.append(grid)
        start = stop
    query_of_request = np.repeat(np.arange(len(queries), dtype=np.int64), impressions)
    shown_docs, teams = _interleave_codes(
        per_run[0], per_run[1], query_of_request, method, length, rng
    )
    request, slot = np.nonzero(shown_docs >= 0)
    query_ids = pa.array(queries, type=pa.string()).take(pa.array(query_of_request[request]))
    impression = (request % impressions).astype(np.int64)
    request_ids = pc.binary_join_element_wise(
        query_ids, pc.cast(pa.array(impression), pa.string()), "/"
    )
    return pa.table(
        {
            "request_id": request_ids,
            "query_id": query_ids,
            "impression": pa.array(impression),
            "position": pa.array((slot + 1).astype(np.int64)),
            "doc_id": vocabulary.take(pa.array(shown_docs[request, slot])),
            "interleave_team": pa.array(np.array(TEAMS)[teams[request, slot]], type=pa.string()),
        }
    )
