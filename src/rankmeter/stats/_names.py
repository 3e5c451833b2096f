"""The names of the tests, corrections and interval methods, and every label they are shown by.

The option values (``"randomization"``, ``"holm"``, ``"bca"``) are what functions accept; the
labels are how a reader sees them. Every output (the comparison's settings sentence, the
terminal, Markdown, LaTeX and HTML reports) takes its words from the functions here, so a
test or correction is spelled one way everywhere:

>>> paired_test_label("randomization", resamples=10_000, seed=0)
'paired randomization test (10,000 sign flips, seed 0)'
>>> correction_label("bh"), correction_label("bh", short=True), correction_phrase("none")
('Benjamini-Hochberg', 'BH', 'no correction')
>>> interval_label("bca"), interval_phrase("percentile", 0.9)
('BCa', '90% percentile bootstrap interval')
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from rankmeter import _validate

#: Paired significance tests, the recommended one first.
TESTS: tuple[str, ...] = ("randomization", "t", "bootstrap", "wilcoxon", "sign")

#: Tests that answer a different question than the one an IR comparison asks, and why.
NOT_RECOMMENDED: Mapping[str, str] = MappingProxyType(
    {
        "wilcoxon": (
            "tests whether differences are symmetric about zero (a median-like location), "
            "not whether the mean metric differs"
        ),
        "sign": (
            "counts only which system won each query, ignoring by how much, so it does not "
            "test the difference of means"
        ),
    }
)

#: Multiple-comparison corrections, the default first.
CORRECTIONS: tuple[str, ...] = ("holm", "bonferroni", "bh", "none")

#: Bootstrap confidence-interval methods, the default first.
INTERVALS: tuple[str, ...] = ("bca", "percentile")

# test -> (its name, what its resamples are called; None for tests that draw none)
_TEST_NAMES: Mapping[str, tuple[str, str | None]] = MappingProxyType(
    {
        "randomization": ("paired randomization test", "sign flips"),
        "t": ("paired t-test", None),
        "bootstrap": ("paired bootstrap test", "resamples"),
        "wilcoxon": ("Wilcoxon signed-rank test", None),
        "sign": ("sign test", None),
    }
)

# correction -> (long, short); "none" reads "no correction" in a sentence (correction_phrase)
_CORRECTION_NAMES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "holm": ("Holm", "Holm"),
        "bonferroni": ("Bonferroni", "Bonf."),
        "bh": ("Benjamini-Hochberg", "BH"),
        "none": ("none", "uncorr."),
    }
)

_INTERVAL_NAMES: Mapping[str, str] = MappingProxyType({"bca": "BCa", "percentile": "percentile"})


def paired_test_label(
    test: str, *, resamples: int | None = None, seed: int | None = None, article: bool = False
) -> str:
    """The name of a paired test, with its resamples and seed where it draws any.

    Parameters
    ----------
    test : one of :data:`TESTS`
    resamples, seed : shown for the randomised tests (randomization, bootstrap) when given
    article : start with "a " (for a sentence: "by a paired t-test")

    Examples
    --------
    >>> paired_test_label("t"), paired_test_label("t", resamples=100, seed=1, article=True)
    ('paired t-test', 'a paired t-test')
    >>> paired_test_label("bootstrap", resamples=2_000, seed=7)
    'paired bootstrap test (2,000 resamples, seed 7)'
    """
    name, unit = _TEST_NAMES[_validate.choice("test", test, TESTS)]
    if unit is not None and resamples is not None:
        name += f" ({resamples:,} {unit}, seed {seed})"
    return f"a {name}" if article else name


def correction_label(correction: str, *, short: bool = False) -> str:
    """The name of a correction: ``Holm``, ``Bonferroni``, ``Benjamini-Hochberg``, ``none``; the
    short form (table headers: ``p (BH)``) is ``Holm``, ``Bonf.``, ``BH``, ``uncorr.``.

    >>> correction_label("bonferroni"), correction_label("none", short=True)
    ('Bonferroni', 'uncorr.')
    """
    long, brief = _CORRECTION_NAMES[_validate.choice("correction", correction, CORRECTIONS)]
    return brief if short else long


def correction_phrase(correction: str) -> str:
    """The correction in a sentence: ``Holm correction``, ..., ``no correction``.

    >>> correction_phrase("holm")
    'Holm correction'
    """
    name = correction_label(correction)
    return f"{'no' if correction == 'none' else name} correction"


def interval_label(interval: str) -> str:
    """The name of a bootstrap interval method: ``BCa`` or ``percentile``.

    >>> interval_label("percentile")
    'percentile'
    """
    return _INTERVAL_NAMES[_validate.choice("interval", interval, INTERVALS)]


def interval_phrase(interval: str, level: float) -> str:
    """An interval with its level: ``95% BCa bootstrap interval``.

    >>> interval_phrase("bca", 0.95)
    '95% BCa bootstrap interval'
    """
    return f"{level:.0%} {interval_label(interval)} bootstrap interval"


def not_recommended_note(test: str) -> str | None:
    """Why a test is not recommended for comparing means, as a note; None for the others.

    >>> not_recommended_note("t") is None, not_recommended_note("sign").startswith("sign test: counts only")
    (True, True)
    """
    reason = NOT_RECOMMENDED.get(_validate.choice("test", test, TESTS))
    return None if reason is None else f"{test} test: {reason}"


def describe_settings(
    *,
    test: str,
    correction: str,
    alpha: float,
    level: float,
    interval: str,
    resamples: int,
    seed: int,
) -> str:
    """The one sentence that says how a comparison's statistics were made.

    >>> describe_settings(
    ...     test="sign", correction="bh", alpha=0.05, level=0.9, interval="percentile",
    ...     resamples=1000, seed=3,
    ... )  # doctest: +NORMALIZE_WHITESPACE
    'sign test (not recommended: counts only which system won each query, ignoring by how much,
    so it does not test the difference of means); Benjamini-Hochberg correction across the
    comparisons shown; alpha 0.05; 90% percentile bootstrap intervals (1,000 resamples, seed 3)'
    """
    reason = NOT_RECOMMENDED.get(test)
    caveat = f" (not recommended: {reason})" if reason else ""
    return (
        f"{paired_test_label(test, resamples=resamples, seed=seed)}{caveat}; "
        f"{correction_phrase(correction)} across the comparisons shown; alpha {alpha:g}; "
        f"{interval_phrase(interval, level)}s ({resamples:,} resamples, seed {seed})"
    )
