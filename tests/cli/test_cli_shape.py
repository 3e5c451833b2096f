"""The command line's shape (issue 23): each command parses options, makes one library call and
hands the result to :func:`rankmeter.report.render`, which picks the renderer by (result type,
format). These tests read the source of ``rankmeter/cli``: a format branch there, or function
bodies growing past the budget, fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import rankmeter.cli

CLI = Path(rankmeter.cli.__file__).resolve().parent

#: Lines covered by the bodies of the functions in rankmeter/cli/*.py (docstrings excluded,
#: nested functions counted once): at most 1,200 (issue 23; 2,604 before it, 896 after). A
#: command that needs more is doing library work: move it to the package that owns it.
BODY_LINES_BUDGET = 1_200


def _trees() -> list[tuple[str, ast.Module]]:
    return [
        (path.name, ast.parse(path.read_text(encoding="utf-8"), filename=path.name))
        for path in sorted(CLI.glob("*.py"))
    ]


def _names_a_format(node: ast.expr) -> bool:
    """``output_format`` (or ``output_format.value``), or a member of a ``*Format`` enum, or a
    tuple, list or set holding one."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_format(element) for element in node.elts)
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id.endswith("Format"):
            return True
        return _names_a_format(node.value)
    return isinstance(node, ast.Name) and node.id == "output_format"


def format_branches(tree: ast.Module) -> list[int]:
    """The lines of every comparison of a format option, and of every ``match`` on one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            if any(_names_a_format(operand) for operand in [node.left, *node.comparators]):
                found.append(node.lineno)
        elif isinstance(node, ast.Match) and _names_a_format(node.subject):
            found.append(node.lineno)
    return sorted(found)


def test_no_format_branch_in_the_cli() -> None:
    found = {name: lines for name, tree in _trees() if (lines := format_branches(tree))}
    assert found == {}, "render the result with rankmeter.report.render and register a renderer"


def test_the_branch_check_is_not_blind() -> None:
    source = """
def f(output_format, fmt):
    if output_format is CheckFormat.json:
        pass
    elif fmt == AnnFormat.html:
        pass
    x = 1 if output_format.value == "tsv" else 2
    if "json" in (output_format,):
        pass
    match output_format:
        case _:
            pass
    if fmt is Ties.input:
        pass
"""
    assert format_branches(ast.parse(source)) == [3, 5, 7, 8, 10]


def body_lines(tree: ast.Module) -> int:
    """Lines covered by any function body, docstrings excluded, nested functions once."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            first = body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                body = body[1:]
            if body:
                lines.update(range(body[0].lineno, (body[-1].end_lineno or 0) + 1))
    return len(lines)


def test_the_function_bodies_stay_within_the_budget() -> None:
    per_module = {name: body_lines(tree) for name, tree in _trees()}
    total = sum(per_module.values())
    largest = sorted(per_module.items(), key=lambda kv: -kv[1])[:5]
    assert total <= BODY_LINES_BUDGET, f"{total} lines in cli/ function bodies; largest {largest}"


def test_the_measure_counts_what_it_says() -> None:
    source = '''
def f():
    """A docstring."""
    x = 1

    def g():
        return x

    return g


def h():
    """Only a docstring."""
'''
    assert body_lines(ast.parse(source)) == 6  # f's lines 4-9; g's inside them; h none
