"""Model labels checked against human ones (issue 11, item 4: audit_labels): hand-made cases
whose answer is known, equality with agreement(), evaluate(), compare() and scipy, every error,
and a real-data audit on Cranfield."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import kendalltau

from rankmeter import compare, evaluate, stats
from rankmeter.errors import FormatError, MetricError, PolicyError
from rankmeter.io import read_qrels
from rankmeter.judgments import agreement, audit_labels, label_pool, pool
from rankmeter.report._json import json_text

pytest.importorskip("krippendorff")
pytest.importorskip("statsmodels.stats.inter_rater")

Qrels = dict[str, dict[str, int]]
Runs = dict[str, dict[str, dict[str, float]]]


def collection(n_queries: int = 30, n_docs: int = 10, seed: int = 0) -> tuple[Qrels, Runs]:
    """Human grades 0-3 and three runs: ``good`` ranks by the grades, ``bad`` against them,
    ``mid`` at random (with a little noise each, so that no pair ties)."""
    rng = np.random.default_rng(seed)
    human = {
        f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in range(n_docs)} for i in range(n_queries)
    }
    runs = {
        "good": {q: {d: g + rng.random() for d, g in docs.items()} for q, docs in human.items()},
        "bad": {q: {d: -g + rng.random() for d, g in docs.items()} for q, docs in human.items()},
        "mid": {q: {d: float(rng.random()) for d in docs} for q, docs in human.items()},
    }
    return human, runs


METRICS = ["nDCG@10", "P@5"]


def test_model_equal_to_human_changes_nothing() -> None:
    human, runs = collection()
    audit = audit_labels(human, human, runs, metrics=METRICS, resamples=2000)
    assert audit.n_shared == audit.n_human == audit.n_model == 300
    assert audit.mean_difference == 0.0
    assert audit.pair_agreement.raw == 1.0 and audit.pair_agreement.kappa == 1.0
    assert [o.kendall_tau for o in audit.orderings] == [1.0, 1.0]
    assert audit.flips == () and audit.changes == ()
    assert all(o.human_order == o.model_order == ("good", "mid", "bad") for o in audit.orderings)
    # Every pair of systems on every metric is tested, and (here) significant on both sides.
    assert len(audit.pairs) == 3 * len(METRICS)
    assert all(p.human_significant and p.model_significant for p in audit.pairs)


def test_a_model_that_inverts_the_grades_flips_every_pair() -> None:
    human, runs = collection()
    inverted = {q: {d: 3 - g for d, g in docs.items()} for q, docs in human.items()}
    audit = audit_labels(human, inverted, runs, metrics=METRICS, resamples=2000, scale="0-3")
    assert [o.kendall_tau for o in audit.orderings] == [-1.0, -1.0]
    for ordering in audit.orderings:
        assert ordering.human_order == ("good", "mid", "bad")
        assert ordering.model_order == ("bad", "mid", "good")
        assert set(ordering.flips) == {("good", "bad"), ("good", "mid"), ("mid", "bad")}
    assert {(c.metric, c.system_a, c.system_b, c.change) for c in audit.changes} == {
        (m, a, b, "reverses") for m in METRICS for a, b in (("good", "bad"), ("good", "mid"),
                                                           ("bad", "mid"))
    }  # fmt: skip
    # The confusion matrix is the anti-diagonal: every human grade g met the model's 3 - g.
    assert all(
        count == 0 for i, row in enumerate(audit.confusion) for j, count in enumerate(row)
        if i + j != 3
    )  # fmt: skip


def test_a_lenient_model_shows_its_leniency() -> None:
    human = {"q1": {"a": 0, "b": 1, "c": 2, "d": 0}, "q2": {"a": 1, "b": 0}}
    # One grade up on every item but "c" (already 2 -> 3 too): +1 on all six items.
    model = {q: {d: g + 1 for d, g in docs.items()} for q, docs in human.items()}
    audit = audit_labels(human, model, scale="0-3")
    assert audit.mean_difference == pytest.approx(1.0)
    assert audit.categories == (0, 1, 2, 3)
    assert audit.confusion == ((0, 3, 0, 0), (0, 0, 2, 0), (0, 0, 0, 1), (0, 0, 0, 0))
    # Half a grade on average: +1 on two items of four, 0 on the others.
    half = {"q1": {"a": 1, "b": 2, "c": 2, "d": 0}}
    assert audit_labels(human, half).mean_difference == pytest.approx(0.5)
    assert audit_labels(human, half).n_shared == 4


def test_agreement_is_agreement_on_the_two_label_sets() -> None:
    human, _ = collection(seed=1)
    rng = np.random.default_rng(5)
    model = {q: {d: int(np.clip(g + rng.integers(-1, 2), 0, 3)) for d, g in docs.items()}
             for q, docs in human.items()}  # fmt: skip
    audit = audit_labels(human, model, scale="0-3", seed=3)
    direct = agreement({"human": human, "model": model}, scale="0-3", seed=3)
    assert audit.agreement.to_dict() == direct.to_dict() or _nan_equal(
        audit.agreement.to_dict(), direct.to_dict()
    )
    assert audit.confusion == direct.pairs[0].confusion
    lenient = next(r for r in direct.leniency if r.rater == "model")
    assert audit.mean_difference == lenient.mean_difference
    shared = [(q, d) for q, docs in human.items() for d in docs if d in model.get(q, {})]
    expected = np.mean([model[q][d] - human[q][d] for q, d in shared])
    assert audit.mean_difference == pytest.approx(expected)


def _nan_equal(a: Any, b: Any) -> bool:
    return json_text(a) == json_text(b)


def test_kendall_tau_is_scipys_and_the_means_are_evaluates() -> None:
    human, runs = collection(seed=2)
    rng = np.random.default_rng(9)
    noisy = {q: {d: int(rng.integers(0, 4)) for d in docs} for q, docs in human.items()}
    audit = audit_labels(human, noisy, runs, metrics=METRICS, resamples=500)
    for ordering in audit.orderings:
        h = [evaluate(human, runs[n], [ordering.metric])[ordering.metric] for n in runs]
        m = [evaluate(noisy, runs[n], [ordering.metric])[ordering.metric] for n in runs]
        assert [v for _, v in ordering.human_means] == pytest.approx(h)
        assert [v for _, v in ordering.model_means] == pytest.approx(m)
        assert ordering.kendall_tau == pytest.approx(kendalltau(h, m).statistic)
        names = list(runs)
        expected = {
            (a, b) if h[i] > h[j] else (b, a)
            for (i, a), (j, b) in itertools.combinations(enumerate(names), 2)
            if (h[i] - h[j]) * (m[i] - m[j]) < 0
        }
        assert set(ordering.flips) == expected


def test_two_runs_test_exactly_as_compare_does() -> None:
    """With two runs the family is the metrics, as in compare: same p-values, same verdicts."""
    human, runs = collection(seed=3)
    two = {"good": runs["good"], "mid": runs["mid"]}
    rng = np.random.default_rng(4)
    model = {q: {d: int(rng.integers(0, 4)) for d in docs} for q, docs in human.items()}
    audit = audit_labels(human, model, two, metrics=METRICS, resamples=1000, seed=7)
    for side, qrels in (("human", human), ("model", model)):
        direct = compare(qrels, two, METRICS, resamples=1000, seed=7)
        for pair in audit.pairs:
            d = direct.difference(pair.system_b, pair.metric)
            assert getattr(pair, f"{side}_difference") == d.difference
            assert getattr(pair, f"{side}_p") == pytest.approx(d.p_corrected)
            assert getattr(pair, f"{side}_significant") == d.significant


def test_significance_that_appears_and_vanishes() -> None:
    """Under the human labels good and mid are far apart; a model that labels everything 1
    except what mid ranks first makes mid win: the difference vanishes or reverses, never
    survives unchanged."""
    human, runs = collection(seed=4)
    two = {"good": runs["good"], "mid": runs["mid"]}
    model = {q: dict.fromkeys(docs, 0) for q, docs in human.items()}
    for q, scores in two["mid"].items():
        model[q][max(scores, key=scores.__getitem__)] = 3
    audit = audit_labels(human, model, two, metrics=["nDCG@10"], resamples=2000)
    (pair,) = audit.pairs
    assert pair.human_significant and pair.human_difference < 0  # mid - good
    assert pair.change in ("vanishes", "reverses")
    assert audit.changes == (pair,)
    # Swapping the roles turns "vanishes" into "appears".
    swapped = audit_labels(model, human, two, metrics=["nDCG@10"], resamples=2000)
    assert swapped.pairs[0].change == {"vanishes": "appears", "reverses": "reverses"}[pair.change]


def test_only_the_queries_both_label_sets_cover_are_used() -> None:
    human, runs = collection(seed=5)
    model = {q: docs for q, docs in human.items() if q not in ("q0", "q1")}
    model["extra"] = {"d0": 1}
    audit = audit_labels(human, model, runs, metrics=["P@5"], resamples=200)
    assert len(audit.query_ids) == 28 and "q0" not in audit.query_ids
    assert any("28 queries both label sets cover" in n and "3 queries" in n for n in audit.notes)
    # On the common queries the labels are equal: nothing flips although q0, q1 differ.
    assert audit.orderings[0].kendall_tau == 1.0 and audit.flips == ()
    cut = {q: docs for q, docs in human.items() if q in audit.query_ids}
    assert audit.orderings[0].human_means[0][1] == pytest.approx(
        evaluate(cut, runs["good"], ["P@5"])["P@5"]
    )


def test_without_runs_there_are_no_orders_and_the_json_is_strict() -> None:
    human = {"q1": {"a": 1, "b": 0}}
    model = {"q1": {"a": 1, "b": 1}}
    audit = audit_labels(human, model)
    assert audit.systems == () and audit.orderings == () and audit.pairs == ()
    text = json_text(audit.to_dict())
    document = json.loads(
        text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}")
    )
    assert document["shared_items"] == 2
    assert document["leniency"]["mean_difference"] == 0.5
    assert document["agreement"]["raw_agreement"] == 0.5


def test_an_undefined_tau_is_nan_with_a_note() -> None:
    human = {f"q{i}": {"a": 1, "b": 0} for i in range(5)}
    model = {f"q{i}": {"a": 1, "b": 1} for i in range(5)}  # both runs' P@1 is 1 under the model
    runs = {
        "x": {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(5)},
        "y": {f"q{i}": {"b": 2.0, "a": 1.0} for i in range(5)},
    }
    audit = audit_labels(human, model, runs, metrics=["P@1"], resamples=100)
    assert dict(audit.orderings[0].human_means) == {"x": 1.0, "y": 0.0}
    assert math.isnan(audit.orderings[0].kendall_tau) and audit.flips == ()
    assert any("Kendall's tau of P@1 is undefined" in n for n in audit.notes)
    assert json.loads(json_text(audit.to_dict()))["orderings"][0]["kendall_tau"] is None


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"alpha": 1.5}, PolicyError, r"alpha=1\.5 must be a number strictly between 0 and 1"),
        ({"seed": -1}, PolicyError, r"seed=-1 must be an integer >= 0"),
        ({"test": "z"}, PolicyError, r"test='z' must be one of"),
        ({"correction": "x"}, PolicyError, r"correction='x' must be one of"),
        ({"rel": "high"}, PolicyError, r"rel='high' must be a finite number"),
        ({"metrics": ["nDGC@10"]}, MetricError, r"nDGC@10"),
        ({"resamples": 0}, PolicyError, r"resamples"),
        ({"scale": "3"}, PolicyError, r"scale='3' must be LOW-HIGH"),
    ],
)
def test_bad_parameters(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        audit_labels({"q1": {"a": 1}}, {"q1": {"a": 1}}, **kwargs)


def test_no_shared_item_is_an_error() -> None:
    with pytest.raises(FormatError, match=r"labels no \(query, doc\) item that <dict> labels"):
        audit_labels({"q1": {"a": 1}}, {"q1": {"b": 1}})
    # A negative grade is "not judged": no label to share.
    with pytest.raises(FormatError, match="nothing to compare"):
        audit_labels({"q1": {"a": -1, "b": 0}}, {"q1": {"a": 1}})


def test_one_run_is_an_error() -> None:
    with pytest.raises(PolicyError, match="needs two runs or more; got 1"):
        audit_labels({"q1": {"a": 1}}, {"q1": {"a": 1}}, {"x": {"q1": {"a": 1.0}}})


def test_a_label_off_the_scale_is_an_error() -> None:
    with pytest.raises(FormatError, match=r"label 5 is outside the scale 0-3"):
        audit_labels({"q1": {"a": 1}}, {"q1": {"a": 5}}, scale="0-3")


# -- real data ----------------------------------------------------------------------------------
STOP = {"the", "of", "a", "in", "and", "to", "is", "for", "on", "what", "are", "with", "by", "an"}


def overlap_grade(query: str, doc: str) -> int:
    """A cheap model: the share of the query's words found in the document, in four bands."""
    words = set(query.lower().split()) - STOP
    share = len(words & set(doc.lower().split())) / max(len(words), 1)
    return 3 if share >= 0.6 else 2 if share >= 0.4 else 1 if share >= 0.2 else 0


def test_on_cranfield_a_word_overlap_labeler_audited_against_the_humans(
    cranfield: Path, tmp_path: Path
) -> None:
    from tests.cli.test_cli_pool import cranfield_runs

    runs = cranfield_runs(cranfield, tmp_path)
    items = pool(list(runs), depth=10)
    model = label_pool(
        items.items, cranfield / "queries.jsonl", cranfield / "corpus.jsonl", overlap_grade
    )
    human = read_qrels(cranfield / "qrels" / "test.tsv")
    assert len(model) == len(items)
    metrics = ["nDCG@10", "P@10"]
    audit = audit_labels(human, model, list(runs), metrics=metrics, resamples=1000)

    human_items = {(q, d): g for q, d, g in human if g >= 0}
    model_items = {(q, d): g for q, d, g in model}
    shared = human_items.keys() & model_items.keys()
    assert audit.n_shared == len(shared) > 100
    direct = agreement({"human": human, "model": model}, seed=0)
    assert audit.pair_agreement == direct.pairs[0]
    assert audit.mean_difference == pytest.approx(
        np.mean([model_items[k] - human_items[k] for k in shared])
    )
    assert audit.systems == ("overlap", "dice")
    covered = set(human.query_ids) & set(model.query_ids)
    assert len(audit.query_ids) == len(covered) == 225
    for ordering in audit.orderings:
        for name, path in zip(audit.systems, runs, strict=True):
            assert dict(ordering.human_means)[name] == pytest.approx(
                evaluate(human, path, [ordering.metric])[ordering.metric]
            )
            assert dict(ordering.model_means)[name] == pytest.approx(
                evaluate(model, path, [ordering.metric])[ordering.metric]
            )
        h = [v for _, v in ordering.human_means]
        m = [v for _, v in ordering.model_means]
        assert ordering.kendall_tau == pytest.approx(kendalltau(h, m).statistic)
        assert bool(ordering.flips) == (ordering.kendall_tau < 0)
    assert len(audit.pairs) == len(metrics)
    corrected = stats.correct([0.5], "holm")  # the module is reachable as the audit uses it
    assert corrected.family == 1
    json.loads(json_text(audit.to_dict()))
