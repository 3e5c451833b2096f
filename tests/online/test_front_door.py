"""rankmeter.online's names: every public name resolves, lazily, to its module's object."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

pytest.importorskip("ibis", reason="the online package needs the [online] extra")

import rankmeter.online as online


def test_every_public_name_resolves_to_its_module() -> None:
    assert sorted(online.__all__) == sorted(online._LAZY)
    for name in online.__all__:
        module = importlib.import_module(online._LAZY[name])
        assert getattr(online, name) is getattr(module, name), name


def test_importing_the_package_loads_no_engine() -> None:
    code = (
        "import sys, rankmeter.online; "
        "print(sorted(m for m in ('ibis', 'duckdb', 'tea_tasting', 'pyspark') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
