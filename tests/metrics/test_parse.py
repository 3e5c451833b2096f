"""The metric-name grammar: canonical names, aliases, trec_eval names, expansion and errors."""

from __future__ import annotations

from typing import Any

import pytest
from pytest import param

from rankmeter.errors import MetricError, RankmeterError
from rankmeter.metrics import (
    SPECS,
    Metric,
    MetricSpec,
    Param,
    metric_names,
    parse_metric,
    parse_metrics,
)


def _variants(spec: MetricSpec) -> list[Metric]:
    """Every spec with and without a cutoff (where allowed) and each non-default parameter."""
    cutoffs: list[int | None] = []
    if spec.cutoff != "required":
        cutoffs.append(None)
    if spec.cutoff != "none":
        cutoffs += [1, 10, 1000]
    param_sets: list[tuple[tuple[str, Any], ...]] = [()]
    for p in spec.params:
        values = (
            [c for c in p.choices if c != p.default] if p.kind == "choice" else _within(p, 2, 0.5)
        )
        param_sets += [((p.name, v),) for v in values]
    if len(spec.params) > 1:
        param_sets.append(
            tuple(
                (p.name, p.choices[-1] if p.choices else _within(p, 3, 0.25, 0.75)[0])
                for p in spec.params
            )
        )
    if spec.cutoff_kind == "recall level":  # the recall level is always given: 0, 0.25, 1
        param_sets = [
            tuple(sorted({**dict(ps), "recall": r}.items(), key=lambda kv: kv[0] != "recall"))
            for ps in param_sets
            if dict(ps).get("recall", 0) <= 1
            for r in (0, 0.25, 1)
        ]
    return [Metric(spec, c, ps) for c in cutoffs for ps in param_sets]


def _within(param: Param, *values: float) -> list[float]:
    """Those of ``values`` inside the parameter's bounds (a persistence is below 1) and not its
    default (which a canonical name leaves out)."""
    kept = []
    for value in values:
        try:
            param.convert("x", str(value))
        except MetricError:
            continue
        if value != param.default:
            kept.append(value)
    return kept


ALL_VARIANTS = [m for spec in SPECS for m in _variants(spec)]


@pytest.mark.parametrize("metric", ALL_VARIANTS, ids=str)
def test_canonical_name_round_trips(metric: Metric) -> None:
    parsed = parse_metric(str(metric))
    assert parsed == metric
    assert str(parsed) == str(metric)
    assert str(parse_metric(str(parsed))) == str(metric)


@pytest.mark.parametrize("metric", [m for m in ALL_VARIANTS if m.trec_name], ids=str)
def test_trec_name_parses_back_to_the_metric(metric: Metric) -> None:
    assert metric.trec_name is not None
    assert parse_metric(metric.trec_name) == metric
    # the dotted spelling of a cutoff name too: P_10 and P.10
    dotted = metric.trec_name if metric.cutoff is None else metric.trec_name.rsplit("_", 1)[0]
    if metric.cutoff is not None:
        assert parse_metric(f"{dotted}.{metric.cutoff}") == metric


def test_parse_accepts_a_metric_and_whitespace() -> None:
    metric = parse_metric("nDCG@10")
    assert parse_metric(metric) is metric
    assert parse_metric("  nDCG @ 10 ") == metric
    assert parse_metric("nDCG ( gain = exp ) @10") == parse_metric("nDCG(gain=exp)@10")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("MRR", "RR"),
        ("MRR@10", "RR@10"),
        ("mrr", "RR"),
        ("MAP", "AP"),
        ("MAP@100", "AP@100"),
        ("Recall", "R"),
        ("Recall@100", "R@100"),
        ("Precision@5", "P@5"),
        ("Precision", "P"),
        ("NDCG@10", "nDCG@10"),
        ("ndcg@10", "nDCG@10"),
        ("NDCG(gain=EXP)@10", "nDCG(gain=exp)@10"),
        ("Hit@5", "Success@5"),
        ("HitRate@5", "Success@5"),
        ("hit_rate@5", "Success@5"),
        ("R-Precision", "R-Prec"),
        ("Rprec", "R-Prec"),
        ("RPrec", "R-Prec"),
        ("r_prec", "R-Prec"),
        ("MAP(rel=2)", "AP(rel=2)"),
        ("bpref", "Bpref"),
    ],
)
def test_aliases(text: str, canonical: str) -> None:
    assert str(parse_metric(text)) == canonical


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ndcg_cut.10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("ndcg", "nDCG"),
        ("P.10", "P@10"),
        ("P_10", "P@10"),
        ("set_P", "P"),
        ("recall.100", "R@100"),
        ("recall_100", "R@100"),
        ("set_recall", "R"),
        ("recip_rank", "RR"),
        ("map", "AP"),
        ("map_cut.10", "AP@10"),
        ("map_cut_10", "AP@10"),
        ("Rprec", "R-Prec"),
        ("bpref", "Bpref"),
        ("success.10", "Success@10"),
        ("success_1", "Success@1"),
        ("num_ret", "NumRet"),
        ("num_rel", "NumRel"),
        ("num_rel_ret", "NumRelRet"),
    ],
)
def test_trec_names(text: str, canonical: str) -> None:
    metric = parse_metric(text)
    assert str(metric) == canonical
    assert metric.trec_name is not None


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["P.5,10"], ["P@5", "P@10"]),
        (["map_cut.5,10,100"], ["AP@5", "AP@10", "AP@100"]),
        (["ndcg_cut_5,10"], ["nDCG@5", "nDCG@10"]),
        ("P.1,2", ["P@1", "P@2"]),
        # duplicates dropped, order kept
        (["P@5", "P.5", "P_5", "Precision@5", "RR"], ["P@5", "RR"]),
        (["P.5,10", "P@10", "recall.10"], ["P@5", "P@10", "R@10"]),
    ],
)
def test_parse_metrics_expands_cutoff_lists(texts: Any, expected: list[str]) -> None:
    assert [str(m) for m in parse_metrics(texts)] == expected


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("nDCG(gain=linear)@10", "nDCG@10"),
        ("nDCG(gain=linear)", "nDCG"),
        ("DCG(gain=LINEAR)@3", "DCG@3"),
        ("nDCG()@10", "nDCG@10"),
        ("P(rel=2.0)@5", "P(rel=2)@5"),
        ("P(rel=0.5)@5", "P(rel=0.5)@5"),
        ("P@+5", "P@5"),
        ("P@05", "P@5"),
    ],
)
def test_defaults_dropped_and_values_normalised(text: str, canonical: str) -> None:
    assert str(parse_metric(text)) == canonical
    assert parse_metric(text) == parse_metric(canonical)


def test_metric_names_lists_every_spec() -> None:
    names = metric_names()
    assert len(names) == len(SPECS)
    for spec, name in zip(SPECS, names, strict=True):
        at = "@r" if spec.cutoff_kind == "recall level" else "@k" if spec.cutoff != "none" else ""
        assert name == spec.name + at


# --- errors: every message ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        param("ndgc@10", r"unknown metric 'ndgc@10'; did you mean nDCG@10\?", id="typo"),
        param("mrrr", r"unknown metric 'mrrr'; did you mean RR\?", id="typo-no-cutoff"),
        param("ndgc@10", r"Valid metrics: P@k, R@k, nDCG@k", id="lists-valid-names"),
        param("zzzzzz", r"unknown metric 'zzzzzz'\. Valid metrics: ", id="no-suggestion"),
        param(
            "nDCG\x1b[31m@10",
            r"unknown metric 'nDCG\\x1b\[31m@10'\. Valid metrics: ",
            id="no-suggestion-escape",
        ),
        # Issue 22: a cutoff past any ranking's length overflowed the C kernels (exit 70).
        param(
            "P@99999999999999999999",
            r"'P@99999999999999999999': the cutoff must be a positive integer up to "
            r"2,147,483,647, got 99999999999999999999",
            id="cutoff-beyond-int64",
        ),
        param("P@9223372036854775808", r"up to 2,147,483,647", id="cutoff-int64-max-plus-1"),
        param("P@2147483648", r"up to 2,147,483,647, got 2147483648", id="cutoff-2-31"),
        param("P.5,99999999999", r"up to 2,147,483,647, got 99999999999", id="trec-cutoff-big"),
        param(
            "P@1" + "0" * 5000, r"got 10000000000000000000\.\.\. \(5001 digits\)", id="5001-digits"
        ),
        param("MAPP@" + "1" * 5000, r"unknown metric 'MAPP@1111", id="unknown-5000-digit-cutoff"),
        param("P@", r"'P@': the cutoff must be a positive integer, got ''", id="empty-cutoff"),
        param("P@0", r"'P@0': the cutoff must be a positive integer, got 0", id="cutoff-0"),
        param("P.0", r"'P.0': the cutoff must be a positive integer, got 0", id="trec-cutoff-0"),
        param("P@-1", r"the cutoff must be a positive integer, got '-1'", id="negative-cutoff"),
        param("P@1.5", r"the cutoff must be a positive integer, got '1.5'", id="float-cutoff"),
        param("P@ten", r"the cutoff must be a positive integer, got 'ten'", id="word-cutoff"),
        param("R-Prec@5", r"'R-Prec@5': R-Prec takes no cutoff; use R-Prec", id="cutoff-on-rprec"),
        param("Rprec.5", r"R-Prec takes no cutoff; use R-Prec", id="trec-cutoff-on-rprec"),
        param("Bpref@10", r"Bpref takes no cutoff; use Bpref", id="cutoff-on-bpref"),
        param("NumRet@10", r"NumRet takes no cutoff", id="cutoff-on-numret"),
        param("ndcg_cut", r"'ndcg_cut' needs a cutoff, e.g. ndcg_cut.10", id="ndcg-cut-bare"),
        param("map_cut", r"'map_cut' needs a cutoff, e.g. map_cut.10", id="map-cut-bare"),
        param(
            "P(foo=1)@5",
            r"'P\(foo=1\)@5': P has no parameter 'foo' \(valid: rel\)",
            id="unknown-param",
        ),
        param(
            "Judged(rel=1)@5",
            r"Judged has no parameter 'rel' \(valid: none\)",
            id="param-on-paramless",
        ),
        param(
            "nDCG(gain=cubic)@10",
            r"^'nDCG\(gain=cubic\)@10': gain='cubic' must be one of 'linear', 'exp'$",
            id="bad-choice",
        ),
        param(
            "P(rel=x)@5",
            r"^'P\(rel=x\)@5': rel='x' must be a finite number$",
            id="non-numeric-param",
        ),
        param(
            "P(rel=nan)@5", r"^'P\(rel=nan\)@5': rel=nan must be a finite number$", id="nan-param"
        ),
        param("AP(rel=inf)", r"^'AP\(rel=inf\)': rel=inf must be a finite number$", id="inf-param"),
        param(
            "AP(rel=1e400)",
            r"^'AP\(rel=1e400\)': rel=inf must be a finite number$",
            id="overflow-param",
        ),
        param(
            "P(rel=1,rel=2)@5",
            r"'P\(rel=1,rel=2\)@5': parameter 'rel' is given twice",
            id="duplicate-param",
        ),
        param(
            "P(rel)@5",
            r"parameters are written name=value, got 'rel'",
            id="param-without-value",
        ),
        param("P(rel=)@5", r"parameters are written name=value, got 'rel='", id="empty-value"),
        param("P(=2)@5", r"parameters are written name=value, got '=2'", id="empty-key"),
        param("", r"empty metric name; try nDCG@10, P@10, R@100, RR or AP", id="empty"),
        param("   ", r"empty metric name", id="blank"),
        param("P.5,10", r"'P.5,10' names 2 metrics; give one \(or use parse_metrics\)", id="many"),
        param("nDCG@10@5", r"the cutoff must be a positive integer, got '10@5'", id="two-cutoffs"),
        # Cutoffs are ASCII digits: int() would read other scripts' digits (P@٥ was P@5).
        param("P@٥", r"^'P@٥': the cutoff must be a positive integer, got '٥'$", id="arabic-digit"),
        param("P.٥", r"^unknown metric 'P.٥'", id="trec-arabic-digit"),
        param("nDCG@１０", r"the cutoff must be a positive integer, got '１０'", id="fullwidth"),
        param("map_cut.٥,10", r"^unknown metric 'map_cut.٥,10'", id="trec-list-arabic"),
        # A trec_eval name cut short before its cutoff is not the metric without one (P. was P).
        param(
            "P.", r"^'P\.' is incomplete: give the cutoff after the '\.', e\.g\. P\.10$", id="p-dot"
        ),
        param(
            "P_", r"^'P_' is incomplete: give the cutoff after the '_', e\.g\. P_10$", id="p-under"
        ),
        param("ndcg_cut.", r"^'ndcg_cut\.' is incomplete: .* e\.g\. ndcg_cut\.10$", id="cut-dot"),
        param("recall.", r"^'recall\.' is incomplete", id="recall-dot"),
    ],
)
def test_errors(text: str, pattern: str) -> None:
    with pytest.raises(MetricError, match=pattern):
        parse_metric(text)


def test_metric_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metric("ndgc@10")
    assert issubclass(MetricError, RankmeterError)


@pytest.mark.parametrize("value", [5, None, 1.5, ["P@5"]])
def test_non_string_names_are_rejected(value: Any) -> None:
    with pytest.raises(MetricError, match="a metric name must be a string, not "):
        parse_metric(value)


def test_parse_metrics_errors() -> None:
    with pytest.raises(MetricError, match="no metrics given"):
        parse_metrics([])
    with pytest.raises(MetricError, match="did you mean nDCG@10"):
        parse_metrics(["P@5", "ndgc@10"])


def test_comma_joined_metrics_get_a_hint() -> None:
    with pytest.raises(MetricError, match=r"name each metric separately, e\.g\. -m P@1 -m P@2"):
        parse_metric("P@1,P@2")


# -- parameter bounds ----------------------------------------------------------------------------


@pytest.fixture
def rbp() -> MetricSpec:
    """Rank-biased precision: its persistence p has bounds, (0, 1)."""
    from rankmeter.metrics._registry import BY_NAME

    return BY_NAME["rbp"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("RBP(p=1.5)", r"^'RBP\(p=1.5\)': p=1.5 must be a number strictly between 0 and 1$"),
        ("RBP(p=1)", r"^'RBP\(p=1\)': p=1 must be a number strictly between 0 and 1$"),
        ("RBP(p=0)@5", r"^'RBP\(p=0\)@5': p=0 must be a number strictly between 0 and 1$"),
        ("RBP(p=-0.5)", r"p=-0.5 must be a number strictly between 0 and 1$"),
        ("RBP(p=nan)", r"p=nan must be a finite number strictly between 0 and 1$"),
        ("RBP(p=high)", r"p='high' must be a number strictly between 0 and 1$"),
    ],
)
def test_parameters_outside_their_bounds_are_refused(
    rbp: MetricSpec, text: str, message: str
) -> None:
    with pytest.raises(MetricError, match=message):
        parse_metric(text)


def test_parameters_inside_their_bounds_parse(rbp: MetricSpec) -> None:
    assert parse_metric("RBP(p=0.5)@10").get("p") == 0.5
    assert str(parse_metric("RBP(p=0.95)")) == "RBP(p=0.95)"


def test_every_parameter_default_is_within_its_bounds() -> None:
    for spec in SPECS:
        for p in spec.params:
            if p.kind == "number" and p.default is not None:
                assert p.convert(spec.name, str(p.default)) == p.default, (spec.name, p.name)
            if p.kind == "choice":
                assert p.default in p.choices and p.low is None and p.high is None


# -- issue 22, item 22: suggestions close in spelling and in meaning ---------------------------
LACKING = ["infNDCG", "gm_bpref", "RBO", "AP_IA"]  # fmt: skip


@pytest.mark.parametrize("name", LACKING)
@pytest.mark.parametrize("written", ["{}", "{}@10", "{}(p=0.8)", "{}.10"])
def test_a_measure_rankmeter_lacks_is_not_supported_yet(name: str, written: str) -> None:
    text = written.format(name)
    with pytest.raises(MetricError) as raised:
        parse_metric(text)
    message = str(raised.value)
    assert message.startswith(f"metric {text!r} is not supported yet: rankmeter does not compute ")
    assert "Supported metrics: P@k, R@k, nDCG@k" in message and "did you mean" not in message


def test_err_is_not_rr() -> None:
    assert parse_metric("ERR@10").spec.name == "ERR"
    # ir_measures' NERR8..NERR11 are C/W/L approximations of ERR, not nERR@8.
    with pytest.raises(
        MetricError,
        match=r"^metric 'NERR10' is not supported yet: rankmeter does not compute the C/W/L "
        r"approximations of ERR \(NERR8-NERR11\)\. Supported metrics: ",
    ):
        parse_metric("NERR10")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ERR@10", "ERR@10"),
        ("err@20", "ERR@20"),  # gdeval's column
        ("ERR.10", "ERR@10"),
        ("ERR", "ERR"),
        ("ERR(max_grade=3)@5", "ERR(max_grade=3)@5"),
        ("nERR@10", "nERR@10"),
        ("NERR@10", "nERR@10"),
        ("nerr.5", "nERR@5"),
        ("RBP(p=0.8)", "RBP"),
        ("RBP(p=0.8,rel=2)", "RBP(rel=2)"),
        ("RBP(p=0.5)@10", "RBP(p=0.5)@10"),
        ("RBP_resid(p=0.8)", "RBP_resid"),
        ("rbp_resid", "RBP_resid"),
        ("RBP-residual(p=0.9)", "RBP_resid(p=0.9)"),
        ("Compat(p=0.95)", "Compat"),
        ("compat", "Compat"),
        ("Compat(p=0.8)", "Compat(p=0.8)"),
    ],
)
def test_the_cascade_measures_parse_under_their_names(text: str, canonical: str) -> None:
    metric = parse_metric(text)
    assert str(metric) == canonical and metric.label == text
    assert parse_metric(str(metric)) == metric


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Compat@10", r"^'Compat@10': Compat takes no cutoff; use Compat$"),
        ("RBP_resid(rel=2)", r"RBP_resid has no parameter 'rel' \(valid: p\)$"),
        (
            "ERR(max_grade=0)@10",
            r"^'ERR\(max_grade=0\)@10': max_grade=0 must be a number > 0 and <= 1000$",
        ),
    ],
)
def test_the_cascade_measures_refuse_what_they_do_not_take(text: str, message: str) -> None:
    with pytest.raises(MetricError, match=message):
        parse_metric(text)


def test_the_not_yet_table_never_hides_a_supported_metric() -> None:
    # When a measure arrives (issue 24), its names parse; until then they are "not supported yet".
    from rankmeter.metrics._parse import _NOT_YET_NAMES

    for names, _ in _NOT_YET_NAMES:
        for name in names:
            try:
                parse_metric(name)
            except MetricError as exc:
                assert "is not supported yet" in str(exc), name


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        # Close in spelling, and a metric that takes the cutoff given (not R-Prec@5).
        param("preci@5", r"did you mean P@5\?", id="begins-precision"),
        param("precison@5", r"did you mean P@5\?", id="typo-precision"),
        param("judgd@10", r"did you mean Judged@10\?", id="typo-judged"),
        # Equally close to NumRet and NumRel: no guess.
        param("numre", r"^unknown metric 'numre'\. Valid metrics: ", id="ambiguous"),
    ],
)
def test_suggestions_are_close_in_spelling_and_meaning(text: str, pattern: str) -> None:
    with pytest.raises(MetricError, match=pattern):
        parse_metric(text)


# -- issue 24: infAP, gm_map, iprec_at_recall, 11pt_avg ------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("infAP", "infAP"),
        ("infap", "infAP"),
        ("infAP(rel=2)", "infAP(rel=2)"),
        ("IPrec@0.5", "IPrec@0.5"),
        ("IPrec@.5", "IPrec@0.5"),
        ("IPrec@0.50", "IPrec@0.5"),
        ("IPrec@0", "IPrec@0"),
        ("IPrec@1", "IPrec@1"),
        ("IPrec(rel=2)@0.25", "IPrec(rel=2)@0.25"),
        ("IPrec(recall=0.5)", "IPrec@0.5"),
        ("iprec_at_recall_0.50", "IPrec@0.5"),
        ("iprec_at_recall.0.5", "IPrec@0.5"),
        ("IPrec_0.3", "IPrec@0.3"),
        ("11pt_avg", "AP_11pt"),
        ("AP_11pt", "AP_11pt"),
        ("11pt-AP", "AP_11pt"),
        ("gm_map", "GMAP"),
        ("GMAP", "GMAP"),
        ("gmap", "GMAP"),
        ("GMAP(rel=2)", "GMAP(rel=2)"),
    ],
)
def test_issue_24_trec_measures_parse_under_the_name_written(text: str, canonical: str) -> None:
    metric = parse_metric(text)
    assert str(metric) == canonical and metric.label == text
    assert parse_metric(str(metric)) == metric


def test_infap_takes_no_cutoff() -> None:
    with pytest.raises(MetricError, match=r"^'infAP@10': infAP takes no cutoff; use infAP$"):
        parse_metric("infAP@10")


def test_a_recall_level_is_a_parameter_not_a_rank() -> None:
    metric = parse_metric("IPrec@0.5")
    assert metric.cutoff is None and metric.get("recall") == 0.5
    assert metric == parse_metric("iprec_at_recall_0.50") == parse_metric("IPrec(recall=0.5)")
    assert metric.trec_name == "iprec_at_recall_0.50"
    assert parse_metric("IPrec(rel=2)@0.5").trec_name is None


def test_iprec_at_recall_is_trec_evals_eleven_levels_as_it_prints_them() -> None:
    metrics = parse_metrics("iprec_at_recall")
    assert [m.label for m in metrics] == [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)]
    assert [str(m) for m in metrics] == [
        "IPrec@0",
        *(f"IPrec@0.{i}" for i in range(1, 10)),
        "IPrec@1",
    ]
    listed = parse_metrics("iprec_at_recall.0.5,0.25")
    assert [(m.label, str(m)) for m in listed] == [
        ("iprec_at_recall.0.5", "IPrec@0.5"),
        ("iprec_at_recall.0.25", "IPrec@0.25"),
    ]
    # the same level under two names is one metric, kept under the first name
    assert [m.label for m in parse_metrics(["IPrec@0.5", "iprec_at_recall_0.50"])] == ["IPrec@0.5"]


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("IPrec@1.5", r"^'IPrec@1\.5': the recall level must be between 0 and 1, got 1\.5$"),
        ("IPrec@10", r"^'IPrec@10': the recall level must be between 0 and 1, got 10$"),
        (
            "IPrec@-0.5",
            r"^'IPrec@-0\.5': the recall level must be a number between 0 and 1, got '-0\.5'$",
        ),
        ("IPrec@x", r"^'IPrec@x': the recall level must be a number between 0 and 1, got 'x'$"),
        ("IPrec", r"^'IPrec': IPrec needs a recall level from 0 to 1, e\.g\. IPrec@0\.5$"),
        ("IPrec(recall=2)", r"^'IPrec\(recall=2\)': recall=2 must be a number from 0 to 1$"),
        ("IPrec(recall=0.5)@0.5", r"the recall level is given twice \(after @ and recall=\)$"),
        (
            "iprec_at_recall_1.5",
            r"^'iprec_at_recall_1\.5': the recall level must be between 0 and 1",
        ),
        (
            "iprec_at_recall.",
            r"is incomplete: give the cutoff after the '\.', e\.g\. iprec_at_recall\.0\.5$",
        ),
        # every other metric keeps its wording: @ is a rank there
        ("P@0.5", r"^'P@0\.5': the cutoff must be a positive integer, got '0\.5'$"),
        ("nDCG@.5", r"^'nDCG@\.5': the cutoff must be a positive integer, got '\.5'$"),
        ("AP_11pt@10", r"^'AP_11pt@10': AP_11pt takes no cutoff; use AP_11pt$"),
        ("11pt_avg@10", r"^unknown metric '11pt_avg@10'; did you mean AP_11pt\? "),
    ],
)
def test_recall_level_errors(text: str, pattern: str) -> None:
    with pytest.raises(MetricError, match=pattern):
        parse_metric(text)


def test_a_recall_level_metric_has_no_metric_at_k_curve() -> None:
    from rankmeter import Qrels, Run
    from rankmeter.metrics import join

    ranked = join(Qrels.from_dict({"q": {"a": 1}}), Run.from_dict({"q": {"a": 1.0}}))
    with pytest.raises(MetricError, match=r"^IPrec@0\.5: IPrec@x takes a recall level, not a rank"):
        parse_metric("IPrec@0.5").compute_at(ranked, [1, 2])


@pytest.mark.parametrize(
    "text",
    [
        "RBP(p=\u0660.5)",  # Arabic-Indic zero
        "RBP(p=\uff10.5)",  # full-width zero
        "RBP(p=0.0_5)",  # Python's digit separator: float() reads 0.05
        "ERR(max_grade=1_0)@10",
        "alpha_nDCG(alpha=\u0660.5)@20",
        "P(rel=\u0662)@5",
    ],
)
def test_number_parameters_are_ascii_decimals_as_cutoffs_and_recall_levels_are(text: str) -> None:
    """ERR@\u0661\u0660 and IPrec@\u0660.5 are refused; a parameter written with the same
    digits (or with Python's underscore separator) was read as a number, and the label kept
    the digits as written."""
    with pytest.raises(MetricError, match=r"must be a"):
        parse_metric(text)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("gm_map@10", r"^'gm_map@10': GMAP takes no cutoff; use GMAP$"),
        ("GM_MAP@5", r"^'GM_MAP@5': GMAP takes no cutoff; use GMAP$"),
        ("gm_map.10", r"^'gm_map.10': GMAP takes no cutoff; use GMAP$"),
    ],
)
def test_a_trec_name_with_a_cutoff_it_does_not_take_is_told_so(text: str, pattern: str) -> None:
    """gm_map@10 was answered "did you mean AP@10?": another measure (AP cut at 10, not the
    geometric mean), where bpref@10 and Rprec@10 are told the measure takes no cutoff."""
    with pytest.raises(MetricError, match=pattern):
        parse_metric(text)


@pytest.mark.parametrize(
    "text", ["X" * 10_000, "RBP(p=0.8," + "x=1," * 2_000 + ")", "nDCG@" + "1" * 10_000 + "x"]
)
def test_a_huge_name_is_shortened_in_its_error(text: str) -> None:
    """The error line quotes a name of 10,000 characters in full (10 KB on one line); it
    shows its start and its length instead."""
    with pytest.raises(MetricError) as caught:
        parse_metric(text)
    message = str(caught.value)
    assert len(message) < 1_000 and text[:20] in message
    assert f"({len(text):,} characters)" in message
