"""The statistics a command offers are the ones `rankmeter.stats` has, typed once.

The command line cannot import `rankmeter.stats` to build its options (that imports SciPy, half
a second of every start), so each command names its tests, corrections and interval methods
itself, as an enum or in its help text; this test ties every one of them to the tuples of
`rankmeter.stats` (`TESTS`, `CORRECTIONS`, `INTERVALS`): a correction added to `stats` and not
to a command, or a choice a command offers that `stats` lacks, fails here.
"""

from __future__ import annotations

import enum
import re
import typing
from typing import Any

import pytest
import typer

from rankmeter import stats
from rankmeter.cli import app

#: Options of these names choose a statistic of `rankmeter.stats` (interleave's --interval is
#: its own: Wilson or Clopper-Pearson of a share, not a bootstrap method).
TIED = {"correction": stats.CORRECTIONS, "test": stats.TESTS, "interval": stats.INTERVALS}
OWN = {("interleave", "interval")}


def _choices(param: Any, hint: Any) -> tuple[tuple[str, ...], bool]:
    """The names an option offers, and whether it offers them all (no trailing '...')."""
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return tuple(str(member.value) for member in hint), True
    listed = (getattr(param, "help", None) or "").rsplit(":", 1)[-1].strip()
    whole = not listed.endswith("...")
    names = [n.strip(" .") for n in listed.replace("...", "").split(",")]
    return tuple(n for n in names if n), whole


def _options() -> list[tuple[str, str, tuple[str, ...], bool]]:
    found: list[tuple[str, str, tuple[str, ...], bool]] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))
        if hasattr(command, "commands"):
            return
        hints = typing.get_type_hints(command.callback)
        for param in command.params:
            if param.name in TIED and (path[-1], param.name) not in OWN:
                found.append((" ".join(path), param.name, *_choices(param, hints[param.name])))

    walk(typer.main.get_command(app), ())
    return found


OPTIONS = _options()


def test_the_commands_that_choose_statistics_are_all_found() -> None:
    commands = {(command, name) for command, name, _, _ in OPTIONS}
    for expected in [("compare", "correction"), ("compare", "test"), ("compare", "interval"),
                     ("power", "correction"), ("ab", "correction"), ("audit-labels", "test"),
                     ("online-vs-offline", "correction")]:  # fmt: skip
        assert expected in commands


@pytest.mark.parametrize(("command", "name", "choices", "whole"), OPTIONS)
def test_each_choice_is_one_rankmeter_stats_has(
    command: str, name: str, choices: tuple[str, ...], whole: bool
) -> None:
    known = TIED[name]
    assert choices, f"rankmeter {command} --{name}: no choices found in its help"
    assert set(choices) <= set(known), f"rankmeter {command} --{name} offers {choices}"
    if name == "correction" or (whole and not re.match(r"power$", command)):
        # Every correction applies to every family of p-values, and a test listed in full
        # is every test; power computes t and randomization only (stats.power says so).
        assert choices == known, f"rankmeter {command} --{name}: {choices} is not {known}"
