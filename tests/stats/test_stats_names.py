"""Labels in one place: every test, correction and interval method is spelled by rankmeter.stats."""

from __future__ import annotations

import pytest

from rankmeter import compare
from rankmeter.errors import PolicyError
from rankmeter.stats import (
    CORRECTIONS,
    INTERVALS,
    NOT_RECOMMENDED,
    TESTS,
    correction_label,
    correction_phrase,
    describe_settings,
    interval_label,
    interval_phrase,
    not_recommended_note,
    paired_test_label,
)


def test_every_name_has_its_labels() -> None:
    assert [paired_test_label(t) for t in TESTS] == [
        "paired randomization test",
        "paired t-test",
        "paired bootstrap test",
        "Wilcoxon signed-rank test",
        "sign test",
    ]
    assert [correction_label(c) for c in CORRECTIONS] == [
        "Holm",
        "Bonferroni",
        "Benjamini-Hochberg",
        "none",
    ]
    assert [correction_label(c, short=True) for c in CORRECTIONS] == [
        "Holm",
        "Bonf.",
        "BH",
        "uncorr.",
    ]
    assert [correction_phrase(c) for c in CORRECTIONS] == [
        "Holm correction",
        "Bonferroni correction",
        "Benjamini-Hochberg correction",
        "no correction",
    ]
    assert [interval_label(i) for i in INTERVALS] == ["BCa", "percentile"]
    assert interval_phrase("bca", 0.95) == "95% BCa bootstrap interval"


def test_randomised_tests_show_their_resamples_and_seed() -> None:
    assert (
        paired_test_label("randomization", resamples=10_000, seed=3)
        == "paired randomization test (10,000 sign flips, seed 3)"
    )
    assert (
        paired_test_label("bootstrap", resamples=500, seed=0, article=True)
        == "a paired bootstrap test (500 resamples, seed 0)"
    )
    assert paired_test_label("wilcoxon", resamples=500, seed=0, article=True) == (
        "a Wilcoxon signed-rank test"
    )


def test_notes_name_the_tests_not_recommended() -> None:
    for test in TESTS:
        note = not_recommended_note(test)
        if test in NOT_RECOMMENDED:
            assert note == f"{test} test: {NOT_RECOMMENDED[test]}"
        else:
            assert note is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: paired_test_label("z"), "test='z' must be one of 'randomization', 't'"),
        (lambda: correction_label("fdr"), "correction='fdr' must be one of 'holm'"),
        (lambda: interval_label("normal"), "interval='normal' must be one of 'bca', 'percentile'"),
    ],
)
def test_unknown_names_are_refused(call: object, message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        call()  # type: ignore[operator]


def test_a_comparison_describes_itself_with_these_labels() -> None:
    qrels = {f"q{i}": {"a": 1} for i in range(5)}
    runs = {"x": {f"q{i}": {"a": 1.0} for i in range(5)}, "y": {"q0": {"a": 1.0}}}
    result = compare(qrels, runs, ["P@1"], test="sign", correction="bh", resamples=50, seed=2)
    s = result.settings
    assert s.describe() == describe_settings(
        test=s.test,
        correction=s.correction,
        alpha=s.alpha,
        level=s.level,
        interval=s.interval,
        resamples=s.resamples,
        seed=s.seed,
    )
    assert s.describe().startswith(f"sign test (not recommended: {NOT_RECOMMENDED['sign']}); ")
    assert not_recommended_note("sign") in result.notes
