"""The power report (rankmeter.report.power): the same facts in the terminal table, Markdown and
strict JSON; untrusted run names and metric labels escaped; what each number means."""

from __future__ import annotations

import io
import json

import pytest

from rankmeter.report.power import headline, payload, render_json, render_markdown, render_table
from rankmeter.stats import PowerAnalysis, power

BASE = "bm25 <base>|x"
NEW = "dense [link=http://e.vil]`*new*`\x1b[31m"
METRIC = "nDCG@10<script>"


def _analyses(test: str = "t", **kwargs: object) -> dict[str, PowerAnalysis]:
    return {
        METRIC: power(effect=0.03, sd=0.12, n=76, test=test, **kwargs),  # type: ignore[arg-type]
        "AP": power(effect=0.0, sd=0.1, n=76, test=test, **kwargs),  # type: ignore[arg-type]
    }


def _terminal(renderable: object) -> str:
    from rich.console import Console

    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_json_is_strict_and_complete() -> None:
    analyses = _analyses(correction="holm", comparisons=2)
    text = render_json(analyses, baseline=BASE, system=NEW, notes=["a note"])
    data = json.loads(text)  # strict: no NaN or Infinity
    assert "Infinity" not in text and "\x1b" not in text
    assert data["baseline"] == BASE and data["system"] == NEW
    assert data["alpha_per_test"] == 0.025 and data["power"] == 0.8
    assert data["metrics"]["AP"]["n_required"] is None  # inf: a zero effect is never detected
    assert data["metrics"]["AP"]["queries_needed"] is None
    assert data["metrics"][METRIC]["queries_needed"] == analyses[METRIC].queries_needed
    assert data["sentences"][METRIC] == (
        f"with 76 queries a difference of {analyses[METRIC].detectable_difference:.3f} "
        f"{METRIC} is detectable at 80% power"
    )
    assert data["notes"][0] == "a note"
    assert any(note.startswith("Holm correction: each test at alpha / 2") for note in data["notes"])


def test_markdown_escapes_every_untrusted_text() -> None:
    text = render_markdown(_analyses(), baseline=BASE, system=NEW)
    assert "<base>" not in text and "<script>" not in text and "\x1b" not in text
    assert r"bm25 \<base\>\|x" in text and r"nDCG@10\<script\>" in text
    assert r"\`\*new\*\`" in text and r"\x1b" in text
    assert text.startswith("**")  # the headline, not a bullet
    assert r"| metric | queries | Δ planned | sd | d\_z | power at n | queries needed |" in text
    assert "never (Δ = 0)" in text
    assert "- detectable Δ: the smallest true difference" in text


def test_the_terminal_table_shows_names_as_text() -> None:
    text = _terminal(render_table(_analyses(), baseline=BASE, system=NEW))
    assert NEW.replace("\x1b", "\\x1b") in text  # rich markup shown, not read
    assert "\x1b" not in text
    assert METRIC in text and "queries needed" in text and "power at n" in text
    assert "paired t-test: analytic (noncentral t, as statsmodels' TTestPower" in text


def test_the_randomization_test_shows_its_simulation_and_error() -> None:
    analyses = _analyses("randomization", simulations=200, resamples=300, seed=5)
    first = analyses[METRIC]
    assert first.power_error is not None
    cell = f"{first.power_at_n:.3f} ± {first.power_error:.3f}"
    method = (
        "paired randomization test (300 sign flips, seed 5): simulated, 200 query sets drawn "
        "from a normal distribution with mean Δ and standard deviation sd, each tested as "
        "compare tests"
    )
    for text in (
        render_markdown(analyses, baseline=BASE, system=NEW),
        _terminal(render_table(analyses, baseline=BASE, system=NEW)),
    ):
        assert cell in text
        assert method in " ".join(text.split())
    data = payload(analyses, baseline=BASE, system=NEW)
    assert data["metrics"][METRIC]["monte_carlo_error"] == pytest.approx((0.16 / 200) ** 0.5)
    assert any(note.startswith(method) for note in data["notes"])


def test_headline_names_the_level_per_test() -> None:
    plain = headline(_analyses(), baseline="a", system="b")
    assert plain == "b vs a: paired t-test, alpha 0.05, target power 80%"
    corrected = headline(
        _analyses(correction="bonferroni", comparisons=4), baseline="a", system="b"
    )
    assert corrected == (
        "b vs a: paired t-test, alpha 0.05 (Bonferroni correction over 4 metrics: 0.0125 per "
        "test), target power 80%"
    )


def test_power_near_one_is_not_shown_as_certain() -> None:
    analyses = {"P@10": power(effect=0.05, sd=0.1, n=225)}
    assert 0.9995 <= analyses["P@10"].power_at_n < 1
    assert r"| \>0.999 |" in render_markdown(analyses, baseline="a", system="b")
    assert ">0.999" in _terminal(render_table(analyses, baseline="a", system="b"))


def test_a_simulated_power_of_one_says_how_many_sets_were_significant() -> None:
    analyses = {"P@10": power(effect=0.1, sd=0.1, n=60, test="randomization", simulations=100)}
    assert analyses["P@10"].power_at_n == 1.0 and analyses["P@10"].power_error == 0.0
    markdown = render_markdown(analyses, baseline="a", system="b")
    assert "| 1.000 (100 of 100) |" in markdown and "± 0.000" not in markdown
    assert "1.000 (100 of 100)" in _terminal(render_table(analyses, baseline="a", system="b"))


def test_too_few_queries_for_the_randomization_test_say_no_difference_is_detectable() -> None:
    # 3 queries: the randomization test's smallest p-value is 2/8, so no difference is found;
    # the report says so in words, never "a difference of inf".
    analyses = {"P@1": power([0.0, 1.0, 0.0], test="randomization", simulations=100)}
    markdown = render_markdown(analyses, baseline="a", system="b")
    table = _terminal(render_table(analyses, baseline="a", system="b"))
    data = json.loads(render_json(analyses, baseline="a", system="b"))
    expected = "with 3 queries no difference of P@1 is detectable at 80% power"
    for text in (markdown, table, data["sentences"]["P@1"]):
        assert "difference of inf" not in text
    assert expected in markdown and data["sentences"]["P@1"].startswith(expected)
    assert "| none |" in markdown
    assert data["metrics"]["P@1"]["detectable_difference"] is None
    assert "detectable Δ none: with 3 queries the test never gives a p-value below 0.05" in markdown
