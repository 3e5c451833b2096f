"""The import graph of src/rankmeter keeps the layers of docs/architecture.md.

Every ``import`` and ``from ... import`` in every module is read with :mod:`ast`: those at the
top of a module, those inside functions (the lazy imports that keep ``import rankmeter`` fast)
and those under ``if TYPE_CHECKING:``. Type-checking imports count: a name in a signature is a
dependency of the module's API whether the interpreter or the type checker resolves it, and an
upward import hidden from the interpreter is still the cycle (or the concept in the wrong room)
that the layers exist to prevent; mypy follows it like any other import.

What a package may import is read from the table of docs/architecture.md itself (its "may
import" column: ``nothing``, named packages, or a range of layers), so the page and the test
cannot drift apart: a row changed on the page changes the check.

Each test reports every violation at once, one ``file:line: what`` per line.
"""

from __future__ import annotations

import ast
import functools
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import rankmeter

SRC = Path(rankmeter.__file__).parent

#: The page whose table of layers this test enforces.
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"

_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([\w.]+)`\s*\|.*\|\s*([^|]+?)\s*\|\s*$")
_RANGE = re.compile(r"^(?:public names of )?layers? (\d+)\s*[–-]\s*(\d+)$")
_NAMES = re.compile(r"^`\w+`(?:\s*,\s*`\w+`)*$")


@dataclass(frozen=True)
class Table:
    """The table of docs/architecture.md: each package's layer and what it may import."""

    layer_of: dict[str, int]
    may_import: dict[str, frozenset[str]]


def parse_table(text: str) -> Table:
    """Read the rows ``| layer | `package` | owns | may import |`` of the page's table.

    The last column is ``nothing``, a list of packages (```errors`, `_validate```) or a range
    of layers (``layers 0–2``, ``public names of layers 0–5``); a range means every package
    on those lines, so it is resolved once every row is read. Anything else fails, naming the
    row, so the page cannot say what the test does not check.
    """
    layer_of: dict[str, int] = {}
    raw: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = _ROW.match(line)
        if not match:
            continue
        layer, package, allowed = int(match[1]), match[2], match[3]
        if package in layer_of:
            raise ValueError(f"architecture.md:{number}: {package} has two rows")
        layer_of[package] = layer
        raw[package] = allowed
    if not layer_of:
        raise ValueError("architecture.md has no table of layers")
    may_import: dict[str, frozenset[str]] = {}
    for package, allowed in raw.items():
        if allowed == "nothing":
            may_import[package] = frozenset()
        elif _NAMES.match(allowed):
            names = frozenset(re.findall(r"`(\w+)`", allowed))
            unknown = sorted(names - set(layer_of))
            if unknown:
                raise ValueError(f"{package}'s row names packages not in the table: {unknown}")
            may_import[package] = names
        elif found := _RANGE.match(allowed):
            low, high = int(found[1]), int(found[2])
            may_import[package] = frozenset(
                other for other, layer in layer_of.items() if low <= layer <= high
            ) - {package}
        else:
            raise ValueError(f"{package}'s row: cannot read {allowed!r} as what it may import")
    return Table(layer_of, may_import)


TABLE = parse_table(ARCHITECTURE.read_text(encoding="utf-8"))
LAYER_OF = TABLE.layer_of

#: The front doors (``rankmeter/__init__.py``, ``rankmeter/__main__.py``): they may name anything.
FRONT_DOORS = ("__init__", "__main__")

#: Imports of another package's private module or private name that are allowed, as
#: (importing package, imported module, private name or None for a private module): reason.
#: Every entry must still be needed (a test fails on stale ones). Keep it empty unless a move
#: would cost more than it clarifies, and say why.
PRIVATE_ALLOWED: dict[tuple[str, str, str | None], str] = {}


@dataclass(frozen=True)
class Import:
    """One imported module (or one name from it), where it is imported."""

    file: str  # relative to src/, e.g. rankmeter/io/tables.py
    line: int
    importer: str  # dotted module name of the importing file
    module: str  # dotted module imported (resolved when relative)
    name: str | None  # the name taken from it (from-import), else None
    type_checking: bool

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def _module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, type_checking: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(node):
        inside = type_checking or (isinstance(child, ast.If) and _is_type_checking(child.test))
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield stmt, True
                yield from _walk(stmt, True)
            for stmt in child.orelse:
                yield stmt, type_checking
                yield from _walk(stmt, type_checking)
            continue
        yield child, inside
        yield from _walk(child, inside)


@functools.cache
def _is_module(dotted: str, root: Path = SRC) -> bool:
    path = root.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


@functools.cache
def imports(root: Path = SRC) -> tuple[Import, ...]:
    """Every import of a rankmeter module in the package at ``root`` (read once per root)."""
    found: list[Import] = []
    for path in sorted(root.rglob("*.py")):
        importer = _module_name(path, root)
        is_package = path.name == "__init__.py"
        file = str(path.relative_to(root.parent))
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=file)
        for node, type_checking in _walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "rankmeter":
                        found.append(
                            Import(file, node.lineno, importer, alias.name, None, type_checking)
                        )
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = importer.split(".")
                    if not is_package:
                        base = base[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                if module.split(".")[0] != "rankmeter":
                    continue
                for alias in node.names:
                    # `from rankmeter.x import y` where y is a module imports the module y.
                    if _is_module(f"{module}.{alias.name}", root):
                        found.append(
                            Import(
                                file,
                                node.lineno,
                                importer,
                                f"{module}.{alias.name}",
                                None,
                                type_checking,
                            )
                        )
                    else:
                        found.append(
                            Import(file, node.lineno, importer, module, alias.name, type_checking)
                        )
        found += _attribute_uses(tree, file, importer, root)
    return tuple(found)


def _attribute_uses(tree: ast.AST, file: str, importer: str, root: Path) -> list[Import]:
    """Names reached through an imported module: ``io._atomic.atomic_write`` after
    ``from rankmeter import io`` uses ``rankmeter.io._atomic``, as an import of it would."""
    bound: dict[str, str] = {}  # local name -> the rankmeter module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "rankmeter":
                    bound[alias.asname or "rankmeter"] = alias.name if alias.asname else "rankmeter"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if dotted.split(".")[0] == "rankmeter" and _is_module(dotted, root):
                    bound[alias.asname or alias.name] = dotted
    # Only whole chains: ``io._atomic.atomic_write``, not also its part ``io._atomic``.
    inner = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
    }
    uses = {}
    for node, type_checking in _walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue
        chain = [node.attr]
        base: ast.expr = node.value
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if not (isinstance(base, ast.Name) and base.id in bound):
            continue
        parts = [*bound[base.id].split("."), *reversed(chain)]
        # The longest prefix that is a module; the next part is the name taken from it.
        cut = max(i for i in range(1, len(parts) + 1) if _is_module(".".join(parts[:i]), root))
        module = ".".join(parts[:cut])
        name = parts[cut] if cut < len(parts) else None
        key = (node.lineno, module, name)
        uses[key] = Import(file, node.lineno, importer, module, name, type_checking)
    return list(uses.values())


def _package(dotted: str) -> str:
    """The top-level package (or module) of rankmeter a dotted name belongs to."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _report(violations: list[str]) -> str:
    return f"{len(violations)} violation(s):\n" + "\n".join(sorted(violations))


def test_every_package_has_a_layer() -> None:
    packages = {_package(_module_name(p)) for p in SRC.rglob("*.py")}
    unknown = sorted(packages - set(LAYER_OF) - set(FRONT_DOORS))
    assert not unknown, f"add these to the layers table (docs/architecture.md): {unknown}"


def layer_violations(found: tuple[Import, ...], table: Table = TABLE) -> list[str]:
    """Each import of a package the table's "may import" column does not allow its importer."""
    violations = []
    for imp in found:
        source, target = _package(imp.importer), _package(imp.module)
        if source in FRONT_DOORS or source == target:
            continue
        kind = " (type checking)" if imp.type_checking else ""
        what = imp.module + (f".{imp.name}" if imp.name else "")
        if target in FRONT_DOORS:
            violations.append(
                f"{imp.where()}: {source} imports the front door rankmeter ({what}){kind}; "
                "import the module that defines it"
            )
            continue
        if source not in table.layer_of or target not in table.layer_of:
            continue  # reported by test_every_package_has_a_layer
        if target not in table.may_import[source]:
            violations.append(
                f"{imp.where()}: {source} (layer {table.layer_of[source]}) imports {what} "
                f"({target}, layer {table.layer_of[target]}){kind}, which its row of "
                "docs/architecture.md does not allow"
            )
    return violations


def test_imports_point_down_the_layers() -> None:
    violations = layer_violations(imports())
    assert not violations, _report(violations)


def test_no_private_module_or_name_of_another_package() -> None:
    violations = []
    used_allowances = set()
    for imp in imports():
        source, target = _package(imp.importer), _package(imp.module)
        if source == target or source in FRONT_DOORS:
            continue
        # The top-level package's own name may start with an underscore (rankmeter._validate is
        # a layer-0 module for every package); what is private is what lies inside a package.
        private_parts = [p for p in imp.module.split(".")[2:] if _private(p)]
        private_name = imp.name is not None and _private(imp.name)
        if not private_parts and not private_name:
            continue
        key = (source, imp.module, imp.name if private_name else None)
        if key in PRIVATE_ALLOWED:
            used_allowances.add(key)
            continue
        what = imp.module + (f".{imp.name}" if imp.name else "")
        violations.append(f"{imp.where()}: {source} imports {what}, private to {target}")
    stale = sorted(str(k) for k in set(PRIVATE_ALLOWED) - used_allowances)
    assert not violations, _report(violations)
    assert not stale, f"allowances no longer needed (remove them): {stale}"


def test_no_package_level_cycles() -> None:
    edges: dict[str, set[str]] = {}
    for imp in imports():
        source, target = _package(imp.importer), _package(imp.module)
        if source != target and source not in FRONT_DOORS and target not in FRONT_DOORS:
            edges.setdefault(source, set()).add(target)
    cycles = []
    for start in sorted(edges):
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(edges.get(node, ())):
                if nxt == start:
                    cycles.append(" -> ".join([*path, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    assert not cycles, "import cycles between packages:\n" + "\n".join(cycles)


#: The private columns of Qrels and Run (their __slots__): read only inside rankmeter.data.
def _data_private_attributes() -> set[str]:
    from rankmeter.data import Qrels, Run

    return {s for cls in (Qrels, Run) for s in cls.__slots__ if _private(s)}


def test_no_private_column_of_qrels_or_run_is_read_outside_data() -> None:
    private = _data_private_attributes()
    violations = []
    for path in sorted(SRC.rglob("*.py")):
        if _package(_module_name(path)) == "data":
            continue
        file = str(path.relative_to(SRC.parent))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in private
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                violations.append(f"{file}:{node.lineno}: reads .{node.attr}")
    assert not violations, _report(violations)


def test_the_scanner_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The checks above are only as good as the import list: it holds top-level imports,
    imports inside functions and under TYPE_CHECKING, with their lines, resolves relative
    imports and tells a module taken from a package from a name taken from a module."""
    root = tmp_path / "rankmeter"
    (root / "data").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "errors.py").write_text("")
    (root / "data" / "__init__.py").write_text("")
    (root / "data" / "_hidden.py").write_text("")
    (root / "data" / "run.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "import numpy\n"
        "from rankmeter.errors import FormatError\n"
        "if TYPE_CHECKING:\n"
        "    from rankmeter.cli import app\n"
        "def f():\n"
        "    from . import _hidden\n"
        "    from ..errors import _secret\n"
        "    import rankmeter.io.trec\n"
        "    from rankmeter import errors\n"
        "    errors._hidden.thing\n"
    )
    found = {(i.line, i.module, i.name, i.type_checking) for i in imports(root)}
    assert found == {
        (3, "rankmeter.errors", "FormatError", False),
        (5, "rankmeter.cli", "app", True),
        (7, "rankmeter.data._hidden", None, False),
        (8, "rankmeter.errors", "_secret", False),
        (9, "rankmeter.io.trec", None, False),
        (10, "rankmeter.errors", None, False),
        (11, "rankmeter.errors", "_hidden", False),
    }


def _copy_with_line(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of src/rankmeter's sources with ``line`` added at the end of ``module``."""
    root = tmp_path / "rankmeter"
    shutil.copytree(SRC, root, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    path = root.joinpath(*module.split(".")[1:]).with_suffix(".py")
    assert path.is_file(), path
    path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("module", "line", "expected"),
    [
        (
            "rankmeter.clicks.models",
            "from rankmeter.comparison import compare",
            "clicks (layer 4) imports rankmeter.comparison.compare (comparison, layer 4)",
        ),
        (
            "rankmeter.stats._names",
            "from rankmeter.evaluation import evaluate",
            "stats (layer 3) imports rankmeter.evaluation.evaluate (evaluation, layer 3)",
        ),
    ],
)
def test_an_import_the_table_does_not_allow_fails(
    tmp_path: Path, module: str, line: str, expected: str
) -> None:
    """Both imports stay within "own line and below"; only the rows' "may import" column
    (clicks: layers 0–2; stats: layers 0–2) refuses them, and the checker does."""
    root = _copy_with_line(tmp_path, module, line)
    violations = layer_violations(imports(root))
    assert len(violations) == 1, violations
    assert expected in violations[0]
    assert violations[0].startswith(module.replace(".", "/") + ".py:")
    assert layer_violations(imports(SRC)) == []  # the tree as it is keeps the table


def test_the_table_is_read_from_the_page() -> None:
    """What each kind of "may import" cell means: nothing, named packages, a range of lines
    (a package's own line included, itself left out), and the CLI's public names of a range."""
    assert TABLE.may_import["errors"] == frozenset()
    assert TABLE.may_import["data"] == {"errors", "_validate"}
    assert "metrics" not in TABLE.may_import["io"] and "io" not in TABLE.may_import["metrics"]
    assert TABLE.may_import["clicks"] == {p for p, layer in LAYER_OF.items() if layer <= 2}
    assert "comparison" in TABLE.may_import["online"]
    assert "online" not in TABLE.may_import["online"]
    assert TABLE.may_import["cli"] == set(LAYER_OF) - {"cli"}
    assert set(LAYER_OF) == set(TABLE.may_import)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("| 3 | `stats` | tests | layers 0 to 2 |", "cannot read 'layers 0 to 2'"),
        ("| 3 | `stats` | tests | `errors`, `nowhere` |", "not in the table: ['nowhere']"),
    ],
)
def test_a_row_the_test_cannot_read_fails(row: str, problem: str) -> None:
    text = "| layer | package | owns | may import |\n|---|---|---|---|\n"
    text += "| 0 | `errors` | errors | nothing |\n" + row + "\n"
    with pytest.raises(ValueError, match=re.escape(problem)):
        parse_table(text)
