"""Agreement between raters (issue 11, item 3): hand-computed cases, equality with statsmodels
and krippendorff on random tables, every input form and every error message."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankmeter.data import Qrels
from rankmeter.errors import FormatError, PolicyError
from rankmeter.judgments import agreement

krippendorff = pytest.importorskip("krippendorff")
inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")


def rows(table: dict[str, dict[str, int]], query: str = "1") -> list[dict[str, Any]]:
    """``{doc: {rater: label}}`` as a long table."""
    return [
        {"query_id": query, "doc_id": doc, "rater": rater, "label": label}
        for doc, labels in table.items()
        for rater, label in labels.items()
    ]


# -- hand-computed cases -------------------------------------------------------------------------


def test_two_raters_binary_by_hand() -> None:
    # ann\bob   0  1        p_o = (2 + 1) / 4 = 0.75
    #    0      2  0        ann's marginals (1/2, 1/2), bob's (3/4, 1/4)
    #    1      1  1        p_e = 1/2 * 3/4 + 1/2 * 1/4 = 1/2; kappa = (0.75 - 0.5) / 0.5 = 0.5
    result = agreement(
        rows(
            {
                "d1": {"ann": 1, "bob": 1},
                "d2": {"ann": 0, "bob": 0},
                "d3": {"ann": 1, "bob": 0},
                "d4": {"ann": 0, "bob": 0},
            }
        )
    )
    (pair,) = result.pairs
    assert (pair.rater_a, pair.rater_b, pair.n_shared) == ("ann", "bob", 4)
    assert pair.confusion == ((2, 0), (1, 1))
    assert pair.raw == 0.75 and result.raw == 0.75
    assert pair.kappa == pytest.approx(0.5)
    # Two categories: a near miss is a full miss, so the weighted kappas are Cohen's.
    assert pair.kappa_linear == pytest.approx(0.5) and pair.kappa_quadratic == pytest.approx(0.5)
    assert result.categories == (0, 1) and result.n_items == 4 and result.n_compared == 4
    assert [(d.doc_id, d.labels, d.spread) for d in result.disagreements] == [
        ("d3", (("ann", 1), ("bob", 0)), 1.0)
    ]
    assert (result.fleiss_items, result.fleiss_raters) == (4, 2)


def test_weighted_kappa_by_hand() -> None:
    # Scale 0-2, ann gives 0, 1, 2 and bob 0, 2, 2 (one near miss).
    # Unweighted: p_o = 2/3, p_e = 1/3 * 1/3 + 1/3 * 0 + 1/3 * 2/3 = 1/3, kappa = 1/2.
    # Linear weights |i - j| / 2: observed 0.5 / 3 = 1/6; expected: column 0 (bob 1/3) holds
    #   (0 + .5 + 1) / 3, column 2 (bob 2/3) holds (1 + .5 + 0) / 3: 1/6 + 1/3 = 1/2;
    #   kappa = 1 - (1/6) / (1/2) = 2/3.
    # Quadratic weights (i - j)^2 / 4: observed 0.25 / 3 = 1/12; expected 1.25/9 + 2.5/9 = 5/12;
    #   kappa = 1 - (1/12) / (5/12) = 0.8.
    result = agreement(
        rows({"a": {"ann": 0, "bob": 0}, "b": {"ann": 1, "bob": 2}, "c": {"ann": 2, "bob": 2}}),
        scale="0-2",
    )
    (pair,) = result.pairs
    assert pair.kappa == pytest.approx(0.5)
    assert pair.kappa_linear == pytest.approx(2 / 3)
    assert pair.kappa_quadratic == pytest.approx(0.8)
    assert pair.confusion == ((1, 0, 0), (0, 0, 1), (0, 0, 1))


def test_a_scale_gives_every_grade_a_row_even_unused_ones() -> None:
    result = agreement(rows({"a": {"x": 0, "y": 0}, "b": {"x": 3, "y": 3}}), scale="0-3")
    assert result.categories == (0, 1, 2, 3)
    assert result.pairs[0].confusion == ((1, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 1))


def test_raw_agreement_counts_pairs_of_labels_within_items() -> None:
    # Item a: 1, 1, 0 (one of three pairs agrees); item b: 2, 2, 2 (three of three): 4/6.
    result = agreement(
        rows({"a": {"x": 1, "y": 1, "z": 0}, "b": {"x": 2, "y": 2, "z": 2}, "c": {"x": 0}})
    )
    assert result.raw == pytest.approx(4 / 6)
    assert (result.n_items, result.n_compared, result.n_labels) == (3, 2, 7)


def test_leniency_by_hand() -> None:
    # gen gives one grade more than strict on every item; mid is in between.
    table = {
        "a": {"gen": 2, "mid": 1, "strict": 1},
        "b": {"gen": 3, "mid": 3, "strict": 2},
        "c": {"gen": 1, "strict": 0},
    }
    result = agreement(rows(table))
    by_rater = {r.rater: r for r in result.leniency}
    assert by_rater["gen"].mean_label == pytest.approx(2.0)
    # gen: a: 2 - (1+1)/2 = 1; b: 3 - (3+2)/2 = 0.5; c: 1 - 0 = 1 -> 2.5 / 3
    assert by_rater["gen"].mean_difference == pytest.approx(2.5 / 3)
    # strict: a: 1 - 1.5 = -0.5; b: 2 - 3 = -1; c: 0 - 1 = -1 -> -2.5 / 3
    assert by_rater["strict"].mean_difference == pytest.approx(-2.5 / 3)
    assert (by_rater["mid"].n_labels, by_rater["mid"].n_shared) == (2, 2)


def test_disagreements_are_the_widest_spreads_first_and_cut_at_top() -> None:
    table = {
        "calm": {"x": 1, "y": 1},
        "small": {"x": 1, "y": 2},
        "wide": {"x": 0, "y": 3},
        "mid": {"x": 0, "y": 2, "z": 2},
        "mid2": {"x": 0, "y": 2, "z": 0},
    }
    result = agreement(rows(table), top=3)
    assert [d.doc_id for d in result.disagreements] == ["wide", "mid", "mid2"]
    assert result.disagreements[0].labels == (("x", 0), ("y", 3))
    assert agreement(rows(table), top=0).disagreements == ()


# -- the maintained implementations, on random tables --------------------------------------------


def random_table(seed: int, *, missing: float) -> tuple[np.ndarray, list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    n_items, n_raters = int(rng.integers(15, 60)), int(rng.integers(2, 5))
    truth = rng.integers(0, 4, size=n_items)
    noise = rng.integers(-1, 2, size=(n_items, n_raters)) * (rng.random((n_items, n_raters)) < 0.4)
    matrix = np.clip(truth[:, None] + noise, 0, 3).astype(float)
    matrix[rng.random(matrix.shape) < missing] = np.nan
    long = [
        {"query_id": str(i // 5), "doc_id": f"d{i}", "rater": f"r{r}", "label": matrix[i, r]}
        for i in range(n_items)
        for r in range(n_raters)
        if not np.isnan(matrix[i, r])
    ]
    return matrix, long


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("missing", [0.0, 0.3])
def test_equal_to_statsmodels_and_krippendorff(seed: int, missing: float) -> None:
    matrix, long = random_table(seed, missing=missing)
    result = agreement(long, scale="0-3", resamples=20)
    raters = [f"r{r}" for r in range(matrix.shape[1])]
    assert result.raters == tuple(raters)
    kept = np.sum(~np.isnan(matrix), axis=1) > 0
    matrix = matrix[kept]  # items nobody labelled are not in the long table
    for pair, (a, b) in zip(
        result.pairs, itertools.combinations(range(len(raters)), 2), strict=False
    ):
        both = ~np.isnan(matrix[:, a]) & ~np.isnan(matrix[:, b])
        shared = matrix[both][:, [a, b]].astype(int)
        table = np.zeros((4, 4))
        np.add.at(table, (shared[:, 0], shared[:, 1]), 1)
        assert pair.n_shared == int(both.sum())
        assert pair.confusion == tuple(tuple(int(x) for x in row) for row in table)
        with np.errstate(all="ignore"):
            expected = [
                inter_rater.cohens_kappa(table, return_results=False),
                inter_rater.cohens_kappa(table, wt="linear", return_results=False),
                inter_rater.cohens_kappa(table, wt="quadratic", return_results=False),
            ]
        got = [pair.kappa, pair.kappa_linear, pair.kappa_quadratic]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    for alpha in result.alpha:
        expected_alpha = krippendorff.alpha(matrix.T, level_of_measurement=alpha.level)
        assert alpha.value == pytest.approx(expected_alpha, rel=1e-12)
    counts = np.sum(~np.isnan(matrix), axis=1)
    full = matrix[counts == result.fleiss_raters]
    assert len(full) == result.fleiss_items
    labelled = np.stack([row[~np.isnan(row)] for row in full]).astype(int)
    aggregated, _ = inter_rater.aggregate_raters(labelled, n_cat=4)
    assert result.fleiss_kappa == pytest.approx(inter_rater.fleiss_kappa(aggregated), rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_cohens_kappa_agrees_with_scikit_learn_too(seed: int) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    matrix, long = random_table(seed, missing=0.0)
    result = agreement(long, resamples=5)
    for pair, (a, b) in zip(
        result.pairs, itertools.combinations(range(matrix.shape[1]), 2), strict=False
    ):
        for weights, got in ((None, pair.kappa), ("linear", pair.kappa_linear)):
            expected = metrics.cohen_kappa_score(matrix[:, a], matrix[:, b], weights=weights)
            assert got == pytest.approx(expected, rel=1e-9)


def test_fleiss_kappa_uses_the_most_common_number_of_labels() -> None:
    # Three items with three labels, one with two: Fleiss' kappa over the three.
    table = {
        "a": {"x": 1, "y": 1, "z": 0},
        "b": {"x": 0, "y": 0, "z": 0},
        "c": {"x": 1, "y": 1, "z": 1},
        "d": {"x": 0, "y": 1},
    }
    result = agreement(rows(table))
    assert (result.fleiss_items, result.fleiss_raters) == (3, 3)
    aggregated, _ = inter_rater.aggregate_raters(np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1]]))
    assert result.fleiss_kappa == pytest.approx(inter_rater.fleiss_kappa(aggregated))


# -- the bootstrap interval of alpha -------------------------------------------------------------


def test_the_bootstrap_resamples_items_seeded() -> None:
    matrix, long = random_table(3, missing=0.2)
    first = agreement(long, seed=7, resamples=200)
    again = agreement(long, seed=7, resamples=200)
    other = agreement(long, seed=8, resamples=200)
    assert first.alpha == again.alpha
    assert first.alpha != other.alpha
    for alpha in first.alpha:
        assert alpha.low <= alpha.value <= alpha.high
    # One resample: the interval is alpha on the items the generator drew, as krippendorff
    # computes it from the resampled items' labels.
    one = agreement(long, seed=11, resamples=1, confidence=0.5)
    matrix = matrix[np.sum(~np.isnan(matrix), axis=1) >= 2]
    picks = np.random.default_rng(11).integers(0, len(matrix), size=(1, len(matrix)))[0]
    for alpha in one.alpha:
        expected = krippendorff.alpha(
            matrix[picks].T, value_domain=[0.0, 1.0, 2.0, 3.0], level_of_measurement=alpha.level
        )
        assert alpha.low == pytest.approx(expected) and alpha.high == pytest.approx(expected)


# -- undefined statistics ------------------------------------------------------------------------


def test_all_labels_identical_gives_nan_with_notes_and_json_null() -> None:
    from rankmeter.report.agreement import render_json

    result = agreement(rows({"a": {"x": 2, "y": 2}, "b": {"x": 2, "y": 2}}))
    pair = result.pairs[0]
    assert pair.raw == 1.0
    assert math.isnan(pair.kappa) and math.isnan(pair.kappa_linear)
    assert math.isnan(result.fleiss_kappa)
    assert all(math.isnan(a.value) and math.isnan(a.low) for a in result.alpha)
    notes = " ".join(result.notes)
    assert "Cohen's kappa of 'x' and 'y' is undefined" in notes
    assert "Fleiss' kappa is undefined" in notes and "Krippendorff's alpha is undefined" in notes
    document = json.loads(render_json(result), parse_constant=_no_constant)
    assert document["pairs"][0]["cohen_kappa"] is None
    assert document["krippendorff_alpha"]["levels"][0]["alpha"] is None


def _no_constant(name: str) -> Any:
    raise AssertionError(f"not strict JSON: {name}")


def test_a_pair_without_shared_items_is_nan_with_a_note() -> None:
    table = {"a": {"x": 1, "y": 1}, "b": {"x": 0, "y": 1}, "c": {"y": 0, "z": 0}}
    result = agreement(rows(table))
    pair = next(p for p in result.pairs if (p.rater_a, p.rater_b) == ("x", "z"))
    assert pair.n_shared == 0 and math.isnan(pair.raw) and math.isnan(pair.kappa)
    assert "'x' and 'z' share no item" in " ".join(result.notes)


def test_a_single_rater_is_an_error() -> None:
    with pytest.raises(FormatError, match=r"only one rater \('ann'\): agreement needs labels"):
        agreement(rows({"a": {"ann": 1}, "b": {"ann": 0}}))


def test_no_shared_item_is_an_error() -> None:
    with pytest.raises(FormatError, match="no item was labelled by two raters or more"):
        agreement(rows({"a": {"ann": 1}, "b": {"bob": 0}}))


# -- inputs --------------------------------------------------------------------------------------

SAMPLE = {"d1": {"ann": 1, "bob": 1}, "d2": {"ann": 0, "bob": 1}, "d3": {"ann": 2, "bob": 2}}


def _summary(result: Any) -> tuple[Any, ...]:
    return result.raters, result.n_labels, result.pairs[0].confusion


def test_every_input_form_gives_the_same_result(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    import pyarrow.parquet as pq

    long = rows(SAMPLE)
    expected = _summary(agreement(long))
    frame = pd.DataFrame(long)
    csv = tmp_path / "labels.csv"
    frame.to_csv(csv, index=False)
    tsv = tmp_path / "labels.tsv"
    frame.to_csv(tsv, index=False, sep="\t")
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in long))
    parquet = tmp_path / "labels.parquet"
    pq.write_table(pa.Table.from_pandas(frame), parquet)
    for given in (frame, pa.Table.from_pandas(frame), csv, str(tsv), jsonl, parquet):
        assert _summary(agreement(given)) == expected, given
    ann = tmp_path / "ann.qrels"
    ann.write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n1 0 d9 -1\n")
    bob = Qrels.from_dict({"1": {"d1": 1, "d2": 1, "d3": 2}})
    assert _summary(agreement({"ann": ann, "bob": bob})) == expected


def test_polars_frames_are_read_too() -> None:
    pl = pytest.importorskip("polars")
    long = rows(SAMPLE)
    assert _summary(agreement(pl.DataFrame(long))) == _summary(agreement(long))


def test_numeric_rater_ids_in_jsonl_stay_names(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"qid": 1, "docid": "a", "annotator": 7, "grade": 1}\n'
        '{"qid": 1, "docid": "a", "annotator": 8, "grade": 0}\n'
    )
    assert agreement(path).raters == ("7", "8")


def test_repeating_a_label_counts_once() -> None:
    long = [*rows(SAMPLE), {"query_id": "1", "doc_id": "d1", "rater": "ann", "label": 1}]
    assert agreement(long).n_labels == 6


# -- bad input: one line naming the file, the line and the text ----------------------------------


def test_missing_rater_column(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("query_id,doc_id,label\n1,d1,1\n")
    with pytest.raises(FormatError, match=r"labels\.csv: no rater column: found columns"):
        agreement(path)


def test_label_that_is_not_a_number(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("query_id,doc_id,rater,label\n1,d1,ann,1\n1,d1,bob,high\n")
    with pytest.raises(
        FormatError, match=r"labels\.csv:3: column 'label' must hold numbers: '1,d1,bob,high'"
    ):
        agreement(path)


def test_label_outside_the_scale(tmp_path: Path) -> None:
    path = tmp_path / "labels.tsv"
    path.write_text("query_id\tdoc_id\trater\tlabel\n1\td1\tann\t1\n1\td1\tbob\t4\n")
    with pytest.raises(
        FormatError,
        match=r"labels\.tsv:3: label 4 is outside the scale 0-3 .*: '1\\td1\\tbob\\t4'",
    ):
        agreement(path, scale="0-3")
    with pytest.raises(FormatError, match=r"label 1.5 is outside the scale 0-3"):
        agreement(rows({"d": {"a": 1.5, "b": 1}}), scale=(0, 3))  # type: ignore[dict-item]


def test_one_rater_two_labels_for_one_item(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"query_id": "1", "doc_id": "d1", "rater": "ann", "label": 1}\n'
        '{"query_id": "1", "doc_id": "d1", "rater": "bob", "label": 1}\n'
        '{"query_id": "1", "doc_id": "d1", "rater": "ann", "label": 2}\n'
    )
    with pytest.raises(
        FormatError,
        match=r"labels\.jsonl:3: rater 'ann' labelled query '1', doc 'd1' twice, with "
        r"different labels \(1 and 2\); keep one of the rows",
    ):
        agreement(path)


def test_qrels_grade_outside_the_scale_names_its_file_and_line(tmp_path: Path) -> None:
    ann = tmp_path / "ann.txt"
    ann.write_text("1 0 d1 1\n1 0 d2 7\n")
    bob = tmp_path / "bob.txt"
    bob.write_text("1 0 d1 1\n1 0 d2 0\n")
    with pytest.raises(FormatError, match=r"ann\.txt:2: label 7 is outside the scale 0-3"):
        agreement({"ann": ann, "bob": bob}, scale="0-3")
    with pytest.raises(FormatError, match=r"<dict>: query '1', doc 'd2': label 7 is outside"):
        agreement({"ann": {"1": {"d1": 1, "d2": 7}}, "bob": bob}, scale="0-3")


def test_a_trec_file_is_not_a_labels_table(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("1 0 d1 1\n")
    with pytest.raises(FormatError, match=r"qrels\.txt:1: a labels table is CSV/TSV with a header"):
        agreement(path)


def test_an_empty_file_is_named_with_no_labels_in_it(tmp_path: Path) -> None:
    # issue 23's trial: an empty qrels file was an IndexError, not an error naming the file
    empty = tmp_path / "empty.qrels"
    empty.write_bytes(b"")
    with pytest.raises(FormatError, match=r"empty\.qrels: file is empty: no labels in it"):
        agreement(empty)
    blank = tmp_path / "blank.qrels"
    blank.write_text("\n  \n\t\n")
    with pytest.raises(FormatError, match=r"blank\.qrels: file is empty: no labels in it"):
        agreement(blank)


def test_a_list_of_dicts_with_a_missing_key() -> None:
    long = rows(SAMPLE)
    del long[2]["rater"]
    with pytest.raises(FormatError, match=r"<list of dicts>: row 3: missing key 'rater'"):
        agreement(long)


def test_something_that_is_not_labels() -> None:
    with pytest.raises(FormatError, match="cannot use a int as labels; give a path"):
        agreement(3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scale": "3"}, r"scale='3' must be LOW-HIGH, two whole numbers"),
        ({"scale": "3-1"}, r"scale='3-1' must be LOW-HIGH"),
        ({"scale": (0.5, 2)}, r"scale=\(0.5, 2\) must be LOW-HIGH"),
        ({"top": -1}, r"top=-1 must be an integer >= 0"),
        ({"resamples": 0}, r"resamples=0 must be an integer from 1 to 1,000,000"),
        ({"seed": -1}, r"seed=-1 must be an integer >= 0"),
        ({"confidence": 1.0}, r"confidence=1.0 must be a number strictly between 0 and 1"),
    ],
)
def test_parameters_are_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        agreement(rows(SAMPLE), **kwargs)


# -- real labels, perturbed -----------------------------------------------------------------------


def test_cranfield_grades_perturbed_into_two_raters(cranfield: Path) -> None:
    """Cranfield's graded qrels as one rater, the same grades with seeded noise as another:
    the statistics equal statsmodels' and krippendorff's on real label frequencies."""
    qrels = Qrels.from_dict(
        {q: {d: g for d, g in docs.items() if g >= 0} for q, docs in _cranfield(cranfield).items()}
    )
    grades = {(q, d): int(g) for q, d, g in qrels}
    rng = np.random.default_rng(2024)
    noisy = {key: int(np.clip(g + rng.choice([-1, 0, 0, 0, 1]), 0, 4)) for key, g in grades.items()}
    result = agreement(
        {"assessor": qrels, "noisy": {q: {d: noisy[q, d] for (q2, d) in grades if q2 == q}
                                      for q in {q for q, _ in grades}}},
        resamples=50,
    )  # fmt: skip
    keys = sorted(grades)
    pairs = np.array([[grades[k], noisy[k]] for k in keys])
    categories = np.unique(pairs)
    codes = np.searchsorted(categories, pairs)
    table, _ = inter_rater.to_table(codes, bins=len(categories))
    (pair,) = result.pairs
    assert pair.n_shared == len(keys)
    assert pair.kappa == pytest.approx(inter_rater.cohens_kappa(table, return_results=False))
    assert pair.kappa_quadratic == pytest.approx(
        inter_rater.cohens_kappa(table, weights=categories, wt="quadratic", return_results=False)
    )
    ordinal = next(a for a in result.alpha if a.level == "ordinal")
    assert ordinal.value == pytest.approx(
        krippendorff.alpha(pairs.T.astype(float), level_of_measurement="ordinal")
    )
    assert 0.3 < pair.kappa < 0.95 and ordinal.low < ordinal.value < ordinal.high


def _cranfield(path: Path) -> dict[str, dict[str, int | float]]:
    from rankmeter.io import read_qrels

    return read_qrels(path / "qrels.trec").to_dict()
