"""Command help that reflows: a docstring's lines are broken where its source was, and Typer
(in its rich mode) keeps those breaks, so ``rankmeter --help`` showed ``score order (rank and``
on one line and ``score columns swapped)`` on the next. Each command's help is given to Typer
with the lines of every paragraph joined, for the terminal to wrap at its own width."""

from __future__ import annotations

import inspect
import re
from typing import Any

# A line that starts an item of a list keeps its own line.
_ITEM = re.compile(r"\s*(?:[-*•] |\d+[.)] )")


def reflowed(text: str) -> str:
    """``text`` with each paragraph's lines joined by spaces; paragraphs (blank lines between),
    list items (``- ``, ``* ``, ``1. ``), indented lines and Click's ``\\b`` blocks (kept as
    written) keep their breaks.

    >>> reflowed("Check qrels and runs: score order (rank and\\nscore columns swapped).\\n\\nMore.")
    'Check qrels and runs: score order (rank and score columns swapped).\\n\\nMore.'
    >>> reflowed("Steps:\\n- one\\n- two")
    'Steps:\\n- one\\n- two'
    """
    paragraphs = inspect.cleandoc(text).split("\n\n")
    out = []
    for paragraph in paragraphs:
        if paragraph.startswith("\b"):
            out.append(paragraph)
            continue
        lines: list[str] = []
        for line in paragraph.split("\n"):
            if lines and not _ITEM.match(line) and not line.startswith(" "):
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                lines.append(line.rstrip())
        out.append("\n".join(lines))
    return "\n\n".join(out)


def reflow_help(app: Any) -> None:
    """Give every command of ``app`` (a Typer app) and of its groups its help reflowed
    (:func:`reflowed`), from the help it was given or its docstring; the first paragraph is
    what the list of commands shows."""
    for command in app.registered_commands:
        text = command.help if isinstance(command.help, str) else inspect.getdoc(command.callback)
        if text:
            command.help = reflowed(text)
    for group in app.registered_groups:
        reflow_help(group.typer_instance)
