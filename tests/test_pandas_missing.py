"""Every ``to_pandas`` without pandas installed: one line naming the extra to install, not a
raw ModuleNotFoundError from deep inside pyarrow."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# Each expression is built from small inputs, then converted with pandas made unimportable
# (None in sys.modules is how Python marks a module that cannot be imported).
CONVERSIONS = {
    "per_query": "result.per_query.to_pandas()",
    "result": "result.to_pandas()",
    "results": "rankmeter.evaluate(qrels, {'a': run, 'b': run}).to_pandas()",
    "qrels": "qrels.to_pandas()",
    "run": "run.to_pandas()",
    "comparison": "rankmeter.compare(qrels, {'a': run, 'b': run2}, 'P@2').to_pandas()",
}

SCRIPT = """
import sys
import rankmeter
from rankmeter.data import Qrels, Run
from rankmeter.errors import RankmeterError

qrels = Qrels.from_dict({{"q1": {{"a": 1, "b": 0}}, "q2": {{"c": 2}}, "q3": {{"a": 1}}}})
run = Run.from_dict({{"q1": {{"a": 2.0, "b": 1.0}}, "q2": {{"c": 1.0}}, "q3": {{"b": 1.0}}}})
run2 = Run.from_dict({{"q1": {{"b": 2.0, "a": 1.0}}, "q2": {{"c": 1.0}}, "q3": {{"a": 1.0}}}})
result = rankmeter.evaluate(qrels, run, "P@2")
sys.modules["pandas"] = None
try:
    {expression}
except RankmeterError as exc:
    print("ERROR", exc)
"""


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_to_pandas_without_pandas_names_the_extra(name: str) -> None:
    script = textwrap.dedent(SCRIPT).format(expression=CONVERSIONS[name])
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ERROR "), done.stdout
    assert "to_pandas() needs pandas: pip install 'rankmeter[pandas]'" in done.stdout
