"""``rankmeter evaluate`` without Typer, in its plain forms.

Typer (with Click and pydantic) takes about 0.15 s to import and to build the command line, as
much as evaluating a small run. The command people run most, ``rankmeter evaluate QRELS RUN
[-m METRIC ...] [-f FORMAT]``, is read here instead: :func:`evaluate_args` understands only the
options below, spelled as the Typer command declares them, and only with values that the
command would take as they are. Anything else (help, another command, an option not listed, a
value that Typer would check or convert, a bundle of short flags, ``--``) gives None, and Typer
reads the command line as always, so its help and its errors are the only ones users see. A
test compares both readings of many command lines, and the options here with the command's.
"""

from __future__ import annotations

import os
import re
from typing import Any

from rankmeter.cli._evaluating import EVAL_ENGINES, OUTPUT_FORMATS

#: Options that take a value: flag -> the parameter it sets.
VALUED = {
    "-m": "metric",
    "--metric": "metric",
    "-f": "output_format",
    "--format": "output_format",
    "-l": "rel",
    "--rel": "rel",
    "--ties": "ties",
    "-o": "output",
    "--output": "output",
    "--judged-below": "judged_below",
    "--engine": "engine",
    "--spark-master": "spark_master",
    "--spark-conf": "spark_conf",
    "--worst": "worst",
    "--pool": "pool",
}
#: Options that may be given several times (their values are collected in order).
REPEATED = ("metric", "spark_conf")
#: Flags: flag -> (the parameter it sets, the value).
FLAGS = {
    "-c": ("include_missing", True),
    "--include-missing": ("include_missing", True),
    "--answered-only": ("include_missing", False),
    "-J": ("judged_only", True),
    "--judged-only": ("judged_only", True),
    "-q": ("per_query", True),
    "--per-query": ("per_query", True),
    "--stream": ("stream", True),
    "--no-stream": ("stream", False),
    "--quiet": ("quiet", True),
}
#: The values a choice takes (as the command's enums spell them).
CHOICES = {
    "output_format": OUTPUT_FORMATS,
    "ties": ("trec_eval", "input"),
    "engine": EVAL_ENGINES,
}
#: A grade for --rel written plainly (Typer reads other spellings its own way).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
#: A count for --worst written plainly (Click's int() also takes "+2", " 2", "2_0").
_COUNT = re.compile(r"[0-9]+")


def evaluate_args(argv: list[str]) -> dict[str, Any] | None:
    """The arguments of :func:`rankmeter.cli._evaluating.evaluate_files` for a plain
    ``evaluate`` command line, or None for any other (Typer then reads it)."""
    if os.name == "nt" or not argv or argv[0] != "evaluate":
        return None  # (on Windows, Click expands wildcards in the arguments itself)
    values: dict[str, Any] = {
        "metric": None,
        "goal": None,
        "rel": 1,
        "include_missing": False,
        "judged_only": False,
        "per_query": False,
        "output_format": "table",
        "ties": "trec_eval",
        "qrels_format": None,
        "run_format": None,
        "output": None,
        "stream": None,
        "quiet": False,
        "judged_below": 0.9,
        "engine": "process",
        "spark_master": None,
        "spark_conf": None,
        "worst": None,
        "pool": None,
    }
    given: set[str] = set()
    positional: list[str] = []
    args = argv[1:]
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        if arg in FLAGS:
            flag_name, flag_value = FLAGS[arg]
            values[flag_name] = flag_value
            continue
        flag, equals, text = arg.partition("=")
        if flag not in VALUED or (equals and not flag.startswith("--")):
            return None
        if not equals:
            if i == len(args):
                return None
            text = args[i]
            i += 1
        name = VALUED[flag]
        if text.startswith("-") and text != "-":
            return None  # Click may read it as an option: let it say what it means
        if name in REPEATED:
            values[name] = [*(values[name] or []), text]
            continue
        if name in given:
            return None  # (Click keeps the last; Typer says nothing)
        given.add(name)
        if name in CHOICES and text not in CHOICES[name]:
            return None
        if name == "rel":
            if not _NUMBER.fullmatch(text):
                return None
            number = float(text)
            values["rel"] = int(number) if number.is_integer() else number  # as its callback
            continue
        if name == "judged_below":
            if not _NUMBER.fullmatch(text):
                return None
            values["judged_below"] = float(text)  # as Typer's float
            continue
        if name == "worst":
            if not _COUNT.fullmatch(text):
                return None
            values["worst"] = int(text)  # as Typer's int
            continue
        values[name] = text
    if len(positional) < 2:
        return None
    values["qrels"], values["runs"] = positional[0], positional[1:]
    return values


def evaluate(values: dict[str, Any]) -> None:
    """Run the command with what :func:`evaluate_args` read: the output file is checked first,
    as the command's option callback and ``keep_inputs`` check it (not one of the inputs)."""
    from rankmeter.cli._evaluating import evaluate_files

    output = values["output"]
    if output is not None and output != "-":
        from rankmeter.io import check_outputs

        inputs = {"QRELS": values["qrels"], "RUNS": values["runs"], "--pool": values["pool"]}
        check_outputs([("-o", output)], inputs)
    evaluate_files(**values)
