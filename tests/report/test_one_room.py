"""Rendering lives in one room (issue 10): results hold data, ``rankmeter.report`` renders them,
with one escaper per format and one writer per kind of table.

These tests read the source (the AST of every module), so that a renderer written somewhere
else, or a second escaper, fails here rather than drifting.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.resources
from collections.abc import Iterator
from pathlib import Path

import pytest

import rankmeter
from rankmeter.comparison import AllPairsComparison, Comparison
from rankmeter.explanation import Explanation
from rankmeter.results import EvalResult, EvalResults
from rankmeter.stats import AllPairs

SRC = Path(rankmeter.__file__).resolve().parent


def modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        yield name, ast.parse(path.read_text(encoding="utf-8"), filename=name)


def imported(tree: ast.Module) -> Iterator[str]:
    """``module`` and ``module.name`` for every import in the module, at any depth."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def strings(tree: ast.Module) -> Iterator[str]:
    """Every string constant but docstrings (their examples may show the output)."""
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, documented)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            yield node.value


# -- results are data --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls", [Explanation, EvalResult, EvalResults, Comparison, AllPairsComparison, AllPairs]
)
def test_results_do_not_render_themselves(cls: type) -> None:
    renderers = {"to_text", "to_markdown", "to_html", "to_latex", "__str__", "table"}
    assert not renderers & set(vars(cls)), sorted(renderers & set(vars(cls)))


def test_an_explanation_is_data() -> None:
    e = rankmeter.explain_grades("3,0,2", "nDCG@3")
    assert dataclasses.is_dataclass(e) and e.to_dict()["value"] == e.value
    assert str(e) == repr(e)  # no text rendering hides in __str__


# -- rendering in report/ only -----------------------------------------------------------------

#: Imports that render: terminal tables, templates, HTML escaping.
RENDERING = ("rich.table", "rich.box", "rich.console.Group", "jinja2", "markupsafe")


def test_only_report_renders() -> None:
    found = [
        (name, module)
        for name, tree in modules()
        if not name.startswith("report/")
        for module in imported(tree)
        if module.startswith(RENDERING)
    ]
    assert found == []


def test_one_html_escaper() -> None:
    """HTML is escaped by rankmeter._escape.html_text alone (the templates' autoescape calls it)."""
    found = [
        (name, module)
        for name, tree in modules()
        if name != "_escape.py"
        for module in imported(tree)
        if module in {"html", "html.escape", "markupsafe.escape", "xml.sax.saxutils.escape"}
    ]
    assert found == []


def test_one_markdown_table_writer() -> None:
    """Only report/_markdown.py writes a table's delimiter row."""
    found = [
        (name, text)
        for name, tree in modules()
        if name != "report/_markdown.py"
        for text in strings(tree)
        if "---" in text and ("|" in text or text.strip(":-") == "")
    ]
    assert found == []


def test_one_latex_escaper() -> None:
    found = [
        (name, text)
        for name, tree in modules()
        if name != "_escape.py"
        for text in strings(tree)
        if "\\textbackslash" in text
    ]
    assert found == []


def test_html_is_built_by_templates() -> None:
    """The pages come from templates: no report module writes tables or sections by hand.
    (The SVG plots are drawn in Python, in report/_svg.py.)"""
    found = [
        (name, text)
        for name, tree in modules()
        if name.startswith("report/") and name != "report/_svg.py"
        for text in strings(tree)
        if any(tag in text for tag in ("<tr", "<td", "<section", "<table", "<li>", "<h2"))
    ]
    assert found == []


def test_templates_and_stylesheet_are_package_data() -> None:
    templates = importlib.resources.files("rankmeter.report") / "templates"
    names = {p.name for p in templates.iterdir()}
    assert {"page.html.j2", "comparison.html.j2", "explanation.html.j2", "report.css"} <= names
    assert "explanations.html.j2" in names and "head.html.j2" in names and "ann.html.j2" in names
    assert "{" in (templates / "report.css").read_text(encoding="utf-8")


# -- labels and the policy sentence: spelled in one place -------------------------------------

#: Words of the test, correction and interval labels (rankmeter.stats._names spells them) and
#: of the policy sentence (rankmeter.results.Policies.describe spells it).
LABEL_WORDS = ("Benjamini-Hochberg", "Bonf.", "uncorr.", "sign flips", "t-test", "Wilcoxon", "BCa")
POLICY_WORDS = ("relevant: grade >=", "judged documents only", "queries in both run and qrels")


def test_renderers_take_labels_and_the_policy_sentence_from_their_one_place() -> None:
    templates = importlib.resources.files("rankmeter.report") / "templates"
    texts = [
        (name, text)
        for name, tree in modules()
        if name.startswith("report/") or name == "explanation.py"
        for text in strings(tree)
    ]
    texts += [(p.name, p.read_text(encoding="utf-8")) for p in templates.iterdir()]
    found = [
        (name, word)
        for name, text in texts
        for word in (*LABEL_WORDS, *POLICY_WORDS)
        if word in text
    ]
    assert found == []
