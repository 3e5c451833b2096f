"""Diffs for the report tests: a hand-made pair of runs and one full of hostile text."""

from __future__ import annotations

from rankmeter.comparison import RunDiff, diff_runs
from rankmeter.io.beir import Document

QRELS = {
    "q1": {"a": 2, "b": 1, "c": 0, "n": -1},
    "q2": {"x": 3},
    "q3": {"z": 1},
    "q4": {"a": 1},
}
RUN_A = {
    "q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0},
    "q2": {"x": 2.0, "y": 1.0},
    "q4": {"a": 1.0},
}
RUN_B = {
    "q1": {"d": 4.0, "a": 3.0, "e": 2.0, "b": 1.0},
    "q2": {"y": 2.0, "x": 1.0},
    "q3": {"z": 1.0},
}
TEXTS = {"q1": "wing flutter", "q2": "heat transfer", "q3": "shock waves", "q4": "boundary layer"}
CORPUS = {d: Document(f"Title {d}", f"The text of {d}. " * 30) for d in "abcdexyz"}


def hand_made() -> RunDiff:
    """P@1 over four queries: q1, q2, q4 lose 1, q3 gains 1; q1's moves are known (see
    tests/comparison/test_diff.py)."""
    return diff_runs(QRELS, RUN_A, RUN_B, metric="P@1", depth=3, corpus=CORPUS, queries=TEXTS)


#: Text that would run, style, break out or recolour a terminal were it not escaped.
HOSTILE = [
    "</script><script>window.__pwned = 1</script>",
    '<img src=x onerror="window.__pwned = 2">',
    "\"'><svg onload=alert(1)>",
    "\x1b[31mred\x1b[0m \x07",
    "</textarea></style></details><b>bold</b>&amp;",
]
LONG = "very long " * 5_000


def hostile() -> RunDiff:
    """Query ids, doc ids, run names, query and document texts that attack every format."""
    qrels = {q: {d: 1 for d in HOSTILE} for q in HOSTILE}
    run_a = {q: {d: float(i) for i, d in enumerate(HOSTILE)} for q in HOSTILE}
    run_b = {q: {d: float(-i) for i, d in enumerate(HOSTILE)} for q in HOSTILE}
    from rankmeter.io import as_run

    corpus = {d: Document(d, d + " " + LONG) for d in HOSTILE}
    return diff_runs(
        qrels,
        as_run(run_a, name=HOSTILE[0]),
        as_run(run_b, name=HOSTILE[1]),
        metric="P@1",
        corpus=corpus,
        queries={q: q + " " + LONG for q in HOSTILE},
    )
