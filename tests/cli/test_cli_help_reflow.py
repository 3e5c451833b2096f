"""Help text reflows (issue 16, section 3): a docstring's source line breaks are not kept in
``rankmeter --help`` or a command's help ("query overlap, score order (rank and" on one line,
"score columns swapped)" on the next); the terminal's width decides where lines break."""

from __future__ import annotations

import inspect
import re

import pytest

from rankmeter.cli._help import reflowed

from ._cli_support import CLI

BOX = re.compile(r"[│╭╮╰╯─]")


def _commands() -> list[tuple[list[str], str]]:
    """Every command (its words on the command line) and its docstring."""
    from rankmeter.cli import _app

    app = _app()
    found = []
    for info in app.registered_commands:
        found.append(([info.name or info.callback.__name__], inspect.getdoc(info.callback) or ""))
    for group in app.registered_groups:
        sub = group.typer_instance
        for info in sub.registered_commands:
            name = info.name or info.callback.__name__.replace("_", "-")
            found.append(([sub.info.name, name], inspect.getdoc(info.callback) or ""))
    return found


def _lines(text: str) -> list[str]:
    return [" ".join(BOX.sub(" ", line).split()) for line in text.splitlines()]


@pytest.mark.parametrize("words", [w for w, doc in _commands() if "\n" in doc])
def test_every_paragraph_of_a_command_help_is_one_line_when_it_fits(
    cli: CLI, monkeypatch: pytest.MonkeyPatch, words: list[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    doc = dict((" ".join(w), d) for w, d in _commands())[" ".join(words)]
    shown = _lines(cli(*words, "--help").out)
    for paragraph in reflowed(doc).split("\n\n"):
        for line in paragraph.split("\n"):
            assert " ".join(line.split()) in shown, (line, shown)


def test_the_list_of_commands_shows_each_summary_on_one_line(
    cli: CLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    shown = _lines(cli("--help").out)
    for words, doc in _commands():
        if len(words) > 1:
            continue
        summary = " ".join(doc.split("\n\n")[0].split())
        assert f"{words[0]} {summary}" in shown, (words, shown)


def test_check_help_wraps_at_the_width_not_at_the_source_lines(
    cli: CLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    text = " ".join(cli("--help").out.split())
    # Before: "(rank and" ended a line and "score columns swapped)" began the next.
    lines = cli("--help").out.splitlines()
    assert not any(line.rstrip(" │").endswith("(rank and") for line in lines), text


def test_lists_and_blocks_keep_their_lines() -> None:
    assert reflowed("Steps:\n- one\n  more\n- two\n\n\b\nkept\nas is") == (
        "Steps:\n- one\n  more\n- two\n\n\b\nkept\nas is"
    )
