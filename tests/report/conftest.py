"""Fixtures for the report tests: comparisons with hostile names, and a small HTML tree parser.

``synthetic`` builds a Comparison directly from its dataclasses (every number known in advance,
names full of ``<``, ``&`` and quotes); ``generated`` runs the real :func:`rankmeter.compare` on a
small generated collection with three systems, segments and query texts.
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import numpy as np
import pytest

import rankmeter
from rankmeter.comparison import (
    Comparison,
    Difference,
    Failures,
    QueryLoss,
    SegmentMean,
    SegmentResult,
    Settings,
    SystemMean,
)
from rankmeter.explanation import Explanation
from rankmeter.results import Policies

BASE = "bm25 <base>"
NEW = 'dense & "new"'
OTHER = "hybrid's <script>alert(1)</script>"
SYSTEMS = (BASE, NEW, OTHER)
METRICS = ("nDCG@10", "P@10")
HOSTILE = (BASE, NEW, OTHER, "q<1>&'\"", "<b>bold</b> & co", "len=<short>")


def query_id(i: int) -> str:
    return f"q<{i}>&'\"" if i == 1 else f"q{i:02d}"


def query_text(i: int) -> str:
    return "<b>bold</b> & co" if i == 1 else f"text of query {i} with 'quotes' & \"more\""


# -- a comparison built by hand ------------------------------------------------------------------


def synthetic(n: int = 12, seed: int = 1, notes: tuple[str, ...] | None = None) -> Comparison:
    """Three systems, two metrics, ``n`` queries; NEW significantly better on nDCG@10, OTHER
    significantly worse on it, a relative change that is NaN (the baseline's P@10 is 0)."""
    rng = np.random.default_rng(seed)
    ids = tuple(query_id(i) for i in range(1, n + 1))
    scores = {m: {s: np.round(rng.random(n), 4) for s in SYSTEMS} for m in METRICS}
    scores["P@10"][BASE] = np.zeros(n)
    base = scores["nDCG@10"][BASE]
    scores["nDCG@10"][NEW] = np.round(np.clip(base + rng.random(n) * 0.3 - 0.1, 0, 1), 4)
    scores["nDCG@10"][OTHER] = np.round(np.clip(base - rng.random(n) * 0.3, 0, 1), 4)
    means = tuple(
        SystemMean(
            s,
            m,
            float(scores[m][s].mean()),
            float(scores[m][s].mean()) - 0.05,
            float(scores[m][s].mean()) + 0.0625,
            n,
        )
        for m in METRICS
        for s in SYSTEMS
    )
    differences = []
    for m in METRICS:
        for s in SYSTEMS[1:]:
            b, v = float(scores[m][BASE].mean()), float(scores[m][s].mean())
            diffs = scores[m][s] - scores[m][BASE]
            significant = m == "nDCG@10"
            differences.append(
                Difference(
                    s,
                    BASE,
                    m,
                    n,
                    b,
                    v,
                    v - b,
                    (v - b) / b if b else math.nan,
                    v - b - 0.03125,
                    v - b + 0.046875,
                    0.5 + len(s) / 100,
                    0.00005 if significant else 0.25,
                    0.0002 if significant else 0.5,
                    significant,
                    int((diffs > 0).sum()),
                    int((diffs == 0).sum()),
                    int((diffs < 0).sum()),
                )
            )
    first = METRICS[0]
    failures = []
    for s in SYSTEMS:
        diffs = scores[first][s] - scores[first][BASE]
        order = np.lexsort((np.arange(n), diffs))
        worst = tuple(
            QueryLoss(
                ids[i],
                query_text(i + 1),
                float(scores[first][BASE][i]),
                float(scores[first][s][i]),
                float(diffs[i]),
            )
            for i in order[:4]
            if diffs[i] < 0
        )
        names = ("min", "5%", "25%", "median", "75%", "95%", "max")
        points = np.quantile(diffs, [0, 0.05, 0.25, 0.5, 0.75, 0.95, 1])
        failures.append(
            Failures(
                s,
                first,
                worst if s != BASE else (),
                (ids[0],) if s == OTHER else (),
                (ids[0], ids[2]) if s != NEW else (),
                {k: float(v) for k, v in zip(names, points, strict=True)},
            )
        )
    segments = (
        SegmentResult("len=<short>", NEW, first, 8, 0.5, 0.375, -0.125, -0.25, -0.0625, 0.001,
                      0.003, False, True),
        SegmentResult("len=<short>", OTHER, first, 8, 0.5, 0.5625, 0.0625, -0.03, 0.15, 0.2,
                      0.4, False, False),
        SegmentResult("len=long", NEW, first, 4, 0.25, 0.125, -0.125, math.nan, math.nan,
                      math.nan, math.nan, True, False),
    )  # fmt: skip
    segment_means = (
        SegmentMean("len=<short>", BASE, first, 0.5, 0.4, 0.6, 8),
        SegmentMean("len=<short>", NEW, first, 0.375, 0.25, 0.5, 8),
    )
    depth = np.arange(1, 101)
    curves = {
        family: {s: (1 - np.exp(-depth / (10 + 5 * j + f))) * 0.9 for j, s in enumerate(SYSTEMS)}
        for f, family in enumerate(("nDCG", "P", "R"))
    }
    settings = Settings(
        BASE, "randomization", "holm", 0.05, 1000, 7, "bca", 0.95, 5, 10, Policies()
    )
    return Comparison(
        SYSTEMS,
        METRICS,
        ids,
        scores,
        means,
        tuple(differences),
        tuple(failures),
        segments,
        segment_means,
        curves,
        settings,
        notes if notes is not None else ("2 judged queries <without> results are left out",),
        {q: query_text(i) for i, q in enumerate(ids, 1)},
    )


# -- explanations --------------------------------------------------------------------------------


def by_hand(query: str, metric: str, system: str, run: str) -> Explanation:
    """An explanation made by hand: its one step names the query and the system it explains;
    its anchor names ``run``, the query and the metric (as every explanation's does)."""
    return Explanation(
        metric=metric,
        query=query,
        value=0.5,
        columns=("rank",),
        rows=({"rank": 1},),
        steps=(f"{metric} for {query} in {system}",),
        run=run,
    )


def with_explanations(comparison: Comparison, explanations: Mapping[str, Any]) -> Comparison:
    """The comparison carrying ``explanations``, whether or not Comparison has that field yet."""
    names = {f.name for f in dataclasses.fields(comparison)}
    if "explanations" in names:
        return dataclasses.replace(comparison, explanations=explanations)  # type: ignore[call-arg]
    copy = dataclasses.replace(comparison)
    object.__setattr__(copy, "explanations", explanations)
    return copy


def fake_explanations(comparison: Comparison, shared: bool = True) -> dict[str, Any]:
    """One explanation per listed worst query. With ``shared``, every system's run has the same
    name (as runs read from files of one name do), so two systems losing on the same query
    ask for the same anchor."""
    out: dict[str, Any] = {}
    for f in comparison.failures:
        if not f.worst:
            continue
        run = "run" if shared else f.system
        out[f.system] = {w.query: by_hand(w.query, f.metric, f.system, run) for w in f.worst}
    return out


# -- a real comparison ---------------------------------------------------------------------------


def collection(n_queries: int = 40, seed: int = 5) -> dict[str, Any]:
    """Qrels, three runs of different quality, query texts and segments, with hostile ids."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, dict[str, float]]] = {s: {} for s in SYSTEMS}
    texts: dict[str, str] = {}
    segments: dict[str, dict[str, str]] = {"len": {}}
    for q in range(1, n_queries + 1):
        qid = query_id(q)
        texts[qid] = query_text(q)
        segments["len"][qid] = "<short>" if q % 3 else "long"
        docs = [f"d{q}_{i}" for i in range(25)]
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=25)
        qrels[qid] = {d: int(g) for d, g in zip(docs[:18], grades[:18], strict=True)}
        truth = grades + rng.normal(0, 1.0, 25)
        noise = {BASE: 2.0, NEW: 0.8, OTHER: 3.0}
        for s in SYSTEMS:
            if s == OTHER and q == 2:
                continue  # OTHER returns nothing for one query
            scores = truth + rng.normal(0, noise[s], 25)
            runs[s][qid] = {d: float(v) for d, v in zip(docs, scores, strict=True)}
    return {"qrels": qrels, "runs": runs, "queries": texts, "segments": segments}


def generated(**options: Any) -> Comparison:
    data = collection()
    return rankmeter.compare(
        data["qrels"],
        data["runs"],
        ["nDCG@10", "P@10", "AP"],
        queries=data["queries"],
        segments=data["segments"],
        min_segment=20,
        resamples=400,
        seed=3,
        worst=5,
        **options,
    )


def real_explanations(comparison: Comparison) -> dict[str, Any]:
    """rankmeter.explain for every listed worst query (what compare will attach itself)."""
    data = collection()
    return {
        f.system: {
            w.query: rankmeter.explain(data["qrels"], data["runs"][f.system], w.query, f.metric)
            for w in f.worst
        }
        for f in comparison.failures
        if f.worst
    }


@pytest.fixture(scope="session")
def synthetic_comparison() -> Comparison:
    return synthetic()


@pytest.fixture(scope="session")
def real_comparison() -> Comparison:
    """The real compare() with explanations attached (by compare itself, once it does)."""
    comparison = generated()
    if getattr(comparison, "explanations", None):
        return comparison
    return with_explanations(comparison, real_explanations(comparison))


@pytest.fixture(scope="session")
def kit() -> types.SimpleNamespace:
    """The helpers of this file, for the test modules (a conftest is not imported by name)."""
    return types.SimpleNamespace(
        BASE=BASE,
        NEW=NEW,
        OTHER=OTHER,
        SYSTEMS=SYSTEMS,
        METRICS=METRICS,
        HOSTILE=HOSTILE,
        synthetic=synthetic,
        generated=generated,
        collection=collection,
        with_explanations=with_explanations,
        fake_explanations=fake_explanations,
        real_explanations=real_explanations,
        parse=parse,
    )


# -- a small HTML tree ---------------------------------------------------------------------------

VOID = {"meta", "link", "br", "hr", "img", "input", "col", "area", "base", "wbr", "source"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    @property
    def elements(self) -> list[Node]:
        return [c for c in self.children if isinstance(c, Node)]

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.elements:
            yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag)
            and (cls is None or cls in n.classes)
            and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def find(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag} class={cls} {attrs}>"
        return found[0]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.unclosed: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    """The page as a tree; fails on an end tag that closes the wrong element."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    assert builder.stack == [builder.root], [n.tag for n in builder.stack]
    return builder.root
