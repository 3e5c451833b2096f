"""The command line is a client of the library (issue 10): it imports only public names.

A private module (``rankmeter._escape``, ``rankmeter.report._json``) or a private name
(``rankmeter.evaluation._named``) used by ``rankmeter.cli`` is an API the library does not
offer to its users; what the command line needs, users need too. The CLI's own private modules
(``rankmeter.cli._common``, ``rankmeter.cli._progress``) are its business.

The test reads the source (the AST of every module under ``src/rankmeter/cli/``): imports at any
depth, and attribute chains on imported rankmeter modules (``rankmeter.evaluation._named``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import rankmeter
import rankmeter.io

CLI = Path(rankmeter.__file__).resolve().parent / "cli"


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _outside_cli(dotted: str) -> bool:
    return dotted != "rankmeter.cli" and not dotted.startswith("rankmeter.cli.")


def private_uses(source: str, filename: str = "<source>") -> Iterator[str]:
    """Every private rankmeter name ``source`` reaches outside rankmeter.cli, dotted."""
    tree = ast.parse(source, filename=filename)
    bound: dict[str, str] = {}  # local name -> the rankmeter path it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "rankmeter":
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["rankmeter"] = "rankmeter"
                    if _outside_cli(alias.name) and any(map(_private, alias.name.split("."))):
                        yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "rankmeter":
                continue
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                bound[alias.asname or alias.name] = dotted
                if _outside_cli(dotted) and any(map(_private, dotted.split("."))):
                    yield dotted
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain = [node.attr]
        base: ast.expr = node.value
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in bound:
            dotted = ".".join([bound[base.id], *reversed(chain)])
            if _outside_cli(dotted) and any(map(_private, dotted.split("."))):
                yield dotted


def cli_uses() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(CLI.rglob("*.py")):
        name = path.relative_to(CLI.parent).as_posix()
        for dotted in private_uses(path.read_text(encoding="utf-8"), name):
            found.setdefault(dotted, []).append(name)
    return found


def test_the_cli_imports_only_public_names() -> None:
    found = cli_uses()
    assert found == {}, "private names used by rankmeter.cli (give the library a public one)"


def test_the_check_is_not_blind() -> None:
    source = """
import rankmeter
import rankmeter.evaluation as ev
import rankmeter._escape
from rankmeter import _items, evaluate
from rankmeter.report import _json
from rankmeter.report._json import json_text
from rankmeter.explanation import _build, explain
from rankmeter.cli._common import emit
from rankmeter.cli import _progress
from . import _local
import typer._private

def f():
    from rankmeter.evaluation import _named
    ev._unique_names([], [])
    rankmeter.report._rich.shown("x")
    rankmeter.evaluate.__doc__
    emit._secret
"""
    assert sorted(set(private_uses(source))) == [
        "rankmeter._escape",
        "rankmeter._items",
        "rankmeter.evaluation._named",
        "rankmeter.evaluation._unique_names",
        "rankmeter.explanation._build",
        "rankmeter.report._json",
        "rankmeter.report._json.json_text",
        "rankmeter.report._rich",
        "rankmeter.report._rich.shown",
    ]
