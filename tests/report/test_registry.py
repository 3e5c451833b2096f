"""The renderer registry (issue 23): one renderer per (result type, format), found by
:func:`rankmeter.report.render`, which writes every format with one escaping rule; every format a
command offers has a renderer for the result that command produces."""

from __future__ import annotations

import dataclasses
import importlib
import io
import pkgutil
import typing
from pathlib import Path
from typing import Any

import pytest

import rankmeter.report
from rankmeter.errors import PolicyError
from rankmeter.report import Rendered, formats_of, render, renderer, renders
from rankmeter.report import _registry as registry


@dataclasses.dataclass(frozen=True)
class Toy:
    name: str


class SubToy(Toy):
    pass


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> type[Toy]:
    """Toy's renderers, registered in a copy of the registry the test leaves behind."""
    monkeypatch.setattr(registry, "_RENDERERS", dict(registry._RENDERERS))

    @renders(Toy, "text")
    def _text(result: Toy, *, loud: bool = False) -> str:
        return (result.name.upper() if loud else result.name) + "\n"

    @renders(Toy, "tsv")
    def _tsv(result: Toy, *, note: str = "") -> Rendered:
        return Rendered(f"name\t{result.name}\n", before=(note,) if note else (), after=("end",))

    @renders(Toy, "table")
    def _table(result: Toy) -> Any:
        from rich.text import Text

        return Text(result.name)

    return Toy


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_text_goes_to_a_file_byte_exact(toy: type[Toy], tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    render(toy("a\x1b]0;x\x07b"), "text", str(target))
    assert target.read_text(encoding="utf-8") == "a\x1b]0;x\x07b\n"


def test_text_to_a_pipe_is_exact_and_to_a_terminal_escaped(
    toy: type[Toy], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    render(toy("a\x1bb"), "text")
    assert capsys.readouterr().out == "a\x1bb\n"
    terminal = _Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    render(toy("a\x1bb"), "tsv", "-")
    assert terminal.getvalue() == "name\ta\\x1bb\n"  # the tab and newline stay layout


def test_options_go_to_the_renderers_that_take_them(
    toy: type[Toy], capsys: pytest.CaptureFixture[str]
) -> None:
    render(toy("x"), "text", loud=True, note="ignored by text")
    assert capsys.readouterr().out == "X\n"
    with pytest.raises(TypeError, match="no renderer of Toy takes lowd"):
        render(toy("x"), "text", lowd=True)


def test_lines_a_data_format_leaves_out_go_to_stderr_unless_quiet(
    toy: type[Toy], capsys: pytest.CaptureFixture[str]
) -> None:
    render(toy("x"), "tsv", note="note: \x1b[2J")
    out, err = capsys.readouterr()
    assert out == "name\tx\n"
    assert err == "note: \\x1b[2J\nend\n"
    render(toy("x"), "tsv", quiet=True, note="note")
    assert capsys.readouterr() == ("name\tx\n", "")


def test_stderr_takes_the_output_instead(
    toy: type[Toy], capsys: pytest.CaptureFixture[str]
) -> None:
    render(toy("x"), "text", stderr=True)
    assert capsys.readouterr() == ("", "x\n")


def test_a_rich_renderable_is_written_as_plain_text_to_a_file(
    toy: type[Toy], tmp_path: Path
) -> None:
    target = tmp_path / "table.txt"
    render(toy("plain"), "table", str(target))
    assert target.read_text(encoding="utf-8") == "plain\n"


def test_a_subclass_has_its_base_renderers(toy: type[Toy]) -> None:
    assert formats_of(SubToy) == ["table", "text", "tsv"]
    assert renderer(SubToy, "text") is renderer(toy, "text")


def test_a_missing_pair_is_a_clear_error(toy: type[Toy]) -> None:
    with pytest.raises(
        PolicyError,
        match=r"Toy has no renderer for the format 'xml'; its formats: table, text, tsv",
    ):
        render(toy("x"), "xml")
    with pytest.raises(PolicyError, match="its formats: none"):
        render(3.5, "json")


def test_a_pair_has_one_renderer(toy: type[Toy]) -> None:
    with pytest.raises(ValueError, match="already has a text renderer"):
        renders(Toy, "text")(lambda result: "")


def _report_modules() -> list[str]:
    return [f"rankmeter.report.{m.name}" for m in pkgutil.iter_modules(rankmeter.report.__path__)]


def test_homes_name_every_registration_and_its_module() -> None:
    """``_HOMES`` (what render imports to find a type's renderers) and the registrations agree:
    every registered type has a home naming the module that registers it, and every home
    registers something."""
    for module in _report_modules():
        importlib.import_module(module)
    registered: dict[str, set[str]] = {}
    for (key, _), function in registry._RENDERERS.items():
        registered.setdefault(key, set()).add(function.__module__)
    assert {k: set(v) for k, v in registry._HOMES.items()} == registered


# -- every format a command offers has a renderer for what it produces ---------------------------


def _produced() -> dict[tuple[str, ...], tuple[type, ...]]:
    from rankmeter.checking import DataCheck
    from rankmeter.clicks import ClickModel
    from rankmeter.comparison import AllPairsComparison, Comparison, QueryStability, RunDiff
    from rankmeter.explanation import Explanations
    from rankmeter.judgments import LabelAudit
    from rankmeter.judgments.agreement import Agreement
    from rankmeter.judgments.pool import Pool
    from rankmeter.metrics import Goal, MetricCatalogue
    from rankmeter.online import (
        ABResult,
        InterleavingResult,
        LogCheck,
        OnlineOffline,
        QueryMix,
        QuerySample,
    )
    from rankmeter.report.power import PowerReport
    from rankmeter.results import EvalResults
    from rankmeter.vector import AnnRecall, TwoStage
    from rankmeter.vector.ann import AnnBenchmark
    from rankmeter.vector.leaderboard import Leaderboard
    from rankmeter.vector.retrieval import RetrievalResult

    return {
        ("evaluate",): (EvalResults,),
        ("check",): (DataCheck,),
        ("explain",): (Explanations,),
        ("compare",): (Comparison,),
        ("diff",): (RunDiff,),
        ("all-pairs",): (AllPairsComparison,),
        ("power",): (PowerReport,),
        ("stability",): (QueryStability,),
        ("sample-queries",): (QuerySample,),
        ("query-mix",): (QueryMix,),
        ("metrics",): (MetricCatalogue, Goal),
        ("ann-recall",): (AnnRecall, AnnBenchmark),
        ("ann-results",): (AnnBenchmark,),
        ("bm25",): (RetrievalResult,),
        ("two-stage",): (TwoStage,),
        ("embed-eval",): (RetrievalResult, Leaderboard),
        ("pool",): (Pool,),
        ("agree",): (Agreement,),
        ("audit-labels",): (LabelAudit,),
        ("ab",): (ABResult,),
        ("online-vs-offline",): (OnlineOffline,),
        ("interleave",): (InterleavingResult,),
        ("leaderboard",): (Leaderboard,),
        ("logs", "check"): (LogCheck,),
        ("clicks", "fit"): (ClickModel,),
    }


def _offered() -> dict[tuple[str, ...], list[str]]:
    """Every command with a --format option, and the format names its enum offers."""
    import typer

    from rankmeter.cli import app

    found: dict[tuple[str, ...], list[str]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))
        for param in getattr(command, "params", []) if not hasattr(command, "commands") else []:
            if "--format" in param.opts:
                hints = typing.get_type_hints(command.callback)
                found[path] = [member.value for member in hints[param.name]]

    walk(typer.main.get_command(app), ())
    return found


def test_every_offered_format_has_a_renderer() -> None:
    offered, produced = _offered(), _produced()
    assert set(offered) == set(produced), "a command with --format: name what it produces here"
    missing = [
        (path, cls.__name__, name)
        for path, names in offered.items()
        for cls in produced[path]
        for name in names
        if name not in formats_of(cls)
    ]
    assert missing == []


def test_the_metric_catalogue_renders_as_the_rows_did() -> None:
    from rankmeter.metrics import metric_catalogue
    from rankmeter.metrics.docs import metric_rows
    from rankmeter.report import metrics as report

    catalogue = metric_catalogue()
    assert catalogue.rows == tuple(metric_rows())
    assert renderer(type(catalogue), "markdown")(catalogue) == report.render_markdown(metric_rows())


def test_a_power_report_renders_as_its_analyses_did(capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    from rankmeter.report import power as report
    from rankmeter.report.power import PowerReport
    from rankmeter.stats import power

    analyses = {"nDCG@10": power(np.array([0.1, -0.05, 0.2, 0.0, 0.15]), effect=0.05)}
    who = {"baseline": "bm25", "system": "dense"}
    render(PowerReport(analyses, **who, notes=("n",)), "json")
    assert capsys.readouterr().out == report.render_json(analyses, **who, notes=("n",))


def test_an_unknown_option_is_a_usage_error_naming_the_options_taken(toy: type[Toy]) -> None:
    with pytest.raises(
        PolicyError, match=r"no renderer of Toy takes lowd; its options: loud, note"
    ):
        render(toy("x"), "text", lowd=True)


@pytest.mark.parametrize("format", ["json", "tsv", "trec", "table"])
def test_a_renderers_options_have_defaults(format: str, tmp_path: Path) -> None:
    import rankmeter

    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    results = rankmeter.evaluate({"q1": {"d1": 1}}, {"a": run, "b": run}, ["P@1"])
    render(results, format, str(tmp_path / "default.out"))
    render(results, format, str(tmp_path / "summary.out"), per_query=False)
    assert (tmp_path / "default.out").read_text() == (tmp_path / "summary.out").read_text()


def test_every_registered_renderer_has_a_default_for_each_option() -> None:
    import inspect

    for module in {m for homes in registry._HOMES.values() for m in homes}:
        importlib.import_module(module)
    required = [
        (key, name, p.name)
        for (key, name), function in registry._RENDERERS.items()
        for p in list(inspect.signature(function).parameters.values())[1:]
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    ]
    assert required == []
