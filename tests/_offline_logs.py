"""Two rankers and their A/B log, built by hand for the offline-vs-online tests: the treatment
ranks each query's one relevant document first, the control fifth (every tenth query the other
way round)."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa

QUERIES = 30


def collection(folder: Path) -> tuple[Path, Path, Path, dict[str, dict[str, list[str]]]]:
    """Each query has one relevant document: the treatment ranks it first, the control fifth
    (on every tenth query the other way round)."""
    qrels, runs = [], {"control": [], "treatment": []}
    rankings: dict[str, dict[str, list[str]]] = {"control": {}, "treatment": {}}
    for q in range(QUERIES):
        relevant = f"d{q}-rel"
        qrels.append(f"q{q} 0 {relevant} 2")
        others = [f"d{q}-{i}" for i in range(9)]
        control, treatment = [*others[:4], relevant, *others[4:]], [relevant, *others]
        if q % 10 == 0:
            control, treatment = treatment, control
        for variant, ranking in (("control", control), ("treatment", treatment)):
            rankings[variant][f"q{q}"] = ranking
            runs[variant] += [f"q{q} Q0 {d} {r} {10 - r} {variant}" for r, d in
                              enumerate(ranking, 1)]  # fmt: skip
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    for variant, lines in runs.items():
        (folder / f"{variant}.run").write_text("\n".join(lines) + "\n")
    return folder / "qrels.txt", folder / "control.run", folder / "treatment.run", rankings


def log_of(
    rankings: dict[str, dict[str, list[str]]], *, users: int, clicks_follow: bool
) -> pa.Table:
    """Users click the relevant document with a chance falling with its rank; with
    ``clicks_follow`` False they click rank 1 whatever it is, more often under the control."""
    rng = random.Random(7)
    rows = []
    start = dt.datetime(2026, 1, 1)
    for u in range(users):
        variant = "control" if u % 2 == 0 else "treatment"
        for r in range(4):
            q = f"q{rng.randrange(QUERIES)}"
            docs = rankings[variant][q]
            if clicks_follow:
                at = docs.index(q.replace("q", "d") + "-rel") + 1
                click = at if rng.random() < 0.9 / at**0.7 else None
            else:
                click = 1 if rng.random() < (0.6 if variant == "control" else 0.3) else None
            for position, doc in enumerate(docs, 1):
                clicked = position == click
                rows.append(
                    dict(
                        event_ts=start + dt.timedelta(minutes=10 * u + 3 * r),
                        user_id=f"u{u}",
                        session_id=f"s{u}",
                        request_id=f"r{u}-{r}",
                        query_id=q,
                        result_count=len(docs),
                        latency_ms=100.0,
                        variant=variant,
                        doc_id=doc,
                        position=position,
                        clicked=clicked,
                        dwell_ms=45_000.0 if clicked else None,
                    )
                )
    return pa.Table.from_pylist(rows)
