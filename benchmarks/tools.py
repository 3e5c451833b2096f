"""One tool's whole job, as a user would write it: read the files, compute the five metrics.

Run as a fresh process by the harness (``python benchmarks/tools.py TOOL QRELS RUN [RUN ...]``),
so that the timing covers interpreter start, imports, parsing and evaluation. Prints one JSON
object: ``{"runs": [{metric: mean}, ...], "seconds": {stage: seconds}}``. With ``--per-query PATH``
it also writes ``[{metric: {query: value}}, ...]`` there (only for agreement checks, untimed).

The module imports nothing heavy at the top: each tool imports its own library.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

#: The benchmark's metrics, in rankmeter's names (trec_eval semantics).
METRICS = ("nDCG@10", "RR@10", "R@100", "P@10", "AP")

Values = dict[str, dict[str, float]]  # metric -> query -> value


class Clock:
    """Stage timings inside the child process."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self._last
        self._last = now


def _mean(values: dict[str, float]) -> float:
    return sum(values.values()) / len(values) if values else 0.0


# -- the tools ------------------------------------------------------------------------------------
# Each returns, per run, {metric: mean} (the timed path: what a user asking for the means writes)
# or, with per_query, {metric: {query: value}}.
Result = dict[str, Any]


def run_rankmeter_api(qrels: str, runs: list[str], clock: Clock, per_query: bool) -> list[Result]:
    """The one call a user writes: ``rankmeter.evaluate(qrels_path, run_path(s), metrics)``."""
    import rankmeter

    clock.lap("import")
    results = rankmeter.evaluate(qrels, runs if len(runs) > 1 else runs[0], list(METRICS))
    out: list[Result] = []
    for result in results.results if len(runs) > 1 else [results]:
        if per_query:
            table = result.per_query
            out.append(
                {m: dict(zip(table.query_ids, table[m].tolist(), strict=True)) for m in METRICS}
            )
        else:
            out.append(dict(result.metrics))
    clock.lap("load and evaluate")
    return out


def run_pytrec_eval(qrels: str, runs: list[str], clock: Clock, per_query: bool) -> list[Result]:
    import pytrec_eval

    clock.lap("import")
    with open(qrels) as handle:
        judgments = pytrec_eval.parse_qrel(handle)
    clock.lap("load")
    evaluator = pytrec_eval.RelevanceEvaluator(
        judgments, {"ndcg_cut.10", "recip_rank", "recall.100", "P.10", "map"}
    )
    clock.lap("evaluate")
    names = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "P@10": "P_10", "AP": "map"}
    out: list[Result] = []
    for path in runs:
        with open(path) as handle:
            results = pytrec_eval.parse_run(handle)
        clock.lap("load")
        scores = evaluator.evaluate(results)
        values: Values = {m: {q: s[n] for q, s in scores.items()} for m, n in names.items()}
        # trec_eval's recip_rank has no cutoff. RR@10 is recip_rank where the first relevant
        # document is within rank 10, i.e. where 1/rank >= 0.1 (exact in floating point: 1/10
        # rounds to the double 0.1), else 0.
        values["RR@10"] = {
            q: (s["recip_rank"] if s["recip_rank"] >= 0.1 else 0.0) for q, s in scores.items()
        }
        out.append({m: values[m] if per_query else _mean(values[m]) for m in METRICS})
        clock.lap("evaluate")
    return out


RANX_NAMES = {
    "nDCG@10": "ndcg@10",
    "RR@10": "mrr@10",
    "R@100": "recall@100",
    "P@10": "precision@10",
    "AP": "map",
}


def run_ranx(qrels: str, runs: list[str], clock: Clock, per_query: bool) -> list[Result]:
    import ranx

    clock.lap("import")
    loaded_qrels = ranx.Qrels.from_file(qrels, kind="trec")
    clock.lap("load")
    out: list[Result] = []
    for path in runs:
        run = ranx.Run.from_file(path, kind="trec")
        clock.lap("load")
        means = ranx.evaluate(loaded_qrels, run, list(RANX_NAMES.values()))
        if per_query:  # evaluate() leaves the per-query scores in the run
            out.append(
                {m: {q: float(v) for q, v in run.scores[n].items()} for m, n in RANX_NAMES.items()}
            )
        else:
            out.append({m: float(means[n]) for m, n in RANX_NAMES.items()})
        clock.lap("evaluate")
    return out


def run_ir_measures(qrels: str, runs: list[str], clock: Clock, per_query: bool) -> list[Result]:
    import ir_measures
    from ir_measures import AP, RR, P, R, nDCG

    clock.lap("import")
    measures = {"nDCG@10": nDCG @ 10, "RR@10": RR @ 10, "R@100": R @ 100, "P@10": P @ 10, "AP": AP}
    # Read once, reused for every run (the reader is a generator).
    judgments = list(ir_measures.read_trec_qrels(qrels))
    clock.lap("load")
    out: list[Result] = []
    for path in runs:
        if per_query:
            by_measure = {str(m): name for name, m in measures.items()}
            values: Values = {m: {} for m in METRICS}
            results = list(ir_measures.read_trec_run(path))
            for metric in ir_measures.iter_calc(list(measures.values()), judgments, results):
                values[by_measure[str(metric.measure)]][metric.query_id] = float(metric.value)
            out.append(values)
        else:
            means = ir_measures.calc_aggregate(
                list(measures.values()), judgments, ir_measures.read_trec_run(path)
            )
            out.append({name: float(means[m]) for name, m in measures.items()})
        clock.lap("evaluate")
    return out


def run_floor(qrels: str, runs: list[str], clock: Clock, per_query: bool) -> list[Result]:
    """The floor: only read and parse the run file(s), with Arrow's multi-threaded CSV reader."""
    import pyarrow as pa
    import pyarrow.csv as csv

    clock.lap("import")
    out: list[Result] = []
    for path in runs:
        table = csv.read_csv(
            path,
            read_options=csv.ReadOptions(
                column_names=["qid", "q0", "docid", "rank", "score", "tag"], use_threads=True
            ),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=csv.ConvertOptions(
                column_types={"qid": pa.string(), "docid": pa.string(), "score": pa.float64()},
                include_columns=["qid", "docid", "score"],
            ),
        )
        out.append({"rows": table.num_rows})
    clock.lap("load")
    return out


TOOLS: dict[str, Callable[[str, list[str], Clock, bool], list[Result]]] = {
    "rankmeter-api": run_rankmeter_api,
    "pytrec_eval": run_pytrec_eval,
    "ranx": run_ranx,
    "ir_measures": run_ir_measures,
    "floor": run_floor,
}


def main(argv: list[str]) -> int:
    per_query_path = None
    if "--per-query" in argv:
        at = argv.index("--per-query")
        per_query_path = argv[at + 1]
        argv = argv[:at] + argv[at + 2 :]
    tool, qrels, *runs = argv
    clock = Clock()
    results = TOOLS[tool](qrels, runs, clock, per_query_path is not None)
    means = [{m: _mean(r[m]) if isinstance(r[m], dict) else r[m] for m in r} for r in results]
    if per_query_path:
        with open(per_query_path, "w") as handle:
            json.dump(results, handle)
    json.dump({"runs": means, "seconds": clock.seconds}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
