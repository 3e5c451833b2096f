"""Options shared by the commands are declared once (cli/_common.py) and mean one thing
everywhere: ``-q`` is ``--per-query`` wherever a command has it, as trec_eval's ``-q``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from rankmeter.cli import app

from ._cli_support import CLI


def options() -> dict[str, dict[str, Any]]:
    """command -> {option name: the click parameter} for every option of every command."""
    group: Any = typer.main.get_command(app)
    out: dict[str, dict[str, Any]] = {}
    for name, command in group.commands.items():
        out[name] = {}
        for param in command.params:
            for flag in [*param.opts, *param.secondary_opts]:
                out[name][flag] = param
    return out


def test_q_is_per_query_wherever_it_exists() -> None:
    found = options()
    with_q = sorted(name for name, flags in found.items() if "-q" in flags)
    # bm25 and two-stage offer --per-query since issue 14 (two-stage's per-query values).
    # all-pairs offers it as compare does (issue 13: every query's values in the JSON).
    assert with_q == ["all-pairs", "bm25", "compare", "embed-eval", "evaluate", "two-stage"]
    for name in with_q:
        assert "--per-query" in found[name]["-q"].opts, name
    assert "--query" in found["explain"] and "-q" not in found["explain"]


def test_shared_options_have_one_declaration() -> None:
    """Every command offering an option offers it with the same flags and help."""
    shared = [
        "--metric", "--goal", "--per-query", "--rel", "--judged-only", "--ties", "--quiet",
        "--engine",
    ]  # fmt: skip
    found = options()
    # ann-recall's --metric is the vectors' similarity (ip, l2, cosine; faiss's word for it),
    # not an evaluation metric: a different option that shares the name.
    found["ann-recall"].pop("--metric")
    # ab's --metric names an online A/B metric (ctr, success, ...; issue 12 asks for the name),
    # not an evaluation metric of the grammar.
    found["ab"].pop("--metric")
    # diff's --metric is the one metric its queries are ordered by (issue 24): not repeatable,
    # a second -m refused (tests/cli/test_cli_diff.py), so its help says so.
    found["diff"].pop("--metric")
    # evaluate's and compare's --engine says where the per-query values are computed (process
    # or spark, issue 15), not where a search log is read (duckdb or spark): one declaration
    # of its own, shared by the two.
    evaluation_engines = {
        (tuple(p.opts), p.help, tuple(c.value for c in p.type_descriptor.annotation))
        if hasattr(p, "type_descriptor")
        else (tuple(p.opts), p.help, tuple(p.type.choices))
        for p in (found[name].pop("--engine") for name in ("evaluate", "compare"))
    }
    assert len(evaluation_engines) == 1 and next(iter(evaluation_engines))[2] == (
        "process",
        "spark",
    )
    for flag in shared:
        declared = {
            (tuple(p.opts), tuple(p.secondary_opts), p.help)
            for flags in found.values()
            if flag in flags
            for p in [flags[flag]]
        }
        assert len(declared) == 1, (flag, declared)
    users = sorted(name for name, flags in found.items() if "--metric" in flags)
    assert users == [
        "all-pairs",
        "audit-labels",
        "bm25",
        "check",
        "compare",
        "embed-eval",
        "evaluate",
        "explain",
        "online-vs-offline",
        "power",
        "stability",
        "two-stage",
    ]


def test_explain_names_its_query_with_the_long_option_only(
    cli: CLI, files: dict[str, Path]
) -> None:
    message = cli("explain", files["qrels"], files["a"], "-q", "1").assert_one_error_line(2)
    assert message.startswith("No such option: -q")
    done = cli("explain", files["qrels"], files["a"], "--query", "1", "-m", "AP")
    assert done.code == 0 and done.out.startswith("AP for query '1'")
