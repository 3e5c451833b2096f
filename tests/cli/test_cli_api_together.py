"""The CLI and the Python API in one process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
import rankmeter
from rankmeter.cli import main

try:
    main(["evaluate", sys.argv[1], sys.argv[2], "-m", "P@2", "-f", "json"])
except SystemExit:
    pass
print(type(rankmeter.evaluate).__name__)
print(rankmeter.evaluate(sys.argv[1], sys.argv[2], ["P@2"]).metrics["P@2"])
"""


def test_rankmeter_evaluate_is_still_the_function_after_the_cli_ran(
    files: dict[str, Path],
) -> None:
    # Importing a submodule binds the *module* to the package attribute of the same name, so the
    # function lives in rankmeter.evaluation: `rankmeter.evaluate(...)` must work in a process
    # that ran the CLI (which imports the evaluation module) before touching rankmeter.evaluate.
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(files["qrels"]), str(files["a"])],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["function", "0.5"]
