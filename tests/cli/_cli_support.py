"""Shared by the CLI tests: sample files, the result of one command, running a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

QRELS = "1 0 a 2\n1 0 b 1\n1 0 c 0\n1 0 e 1\n2 0 a 1\n2 0 x 3\n2 0 y -1\n3 0 z 1\n007 0 a 1\n"
# Query 3 is judged but has no results (it counts with --include-missing); query 9 is not judged.
RUN_A = (
    "1 Q0 a 1 3.0 bm25\n1 Q0 b 2 2.0 bm25\n1 Q0 d 3 2.0 bm25\n1 Q0 c 4 0.5 bm25\n"
    "2 Q0 y 1 9.0 bm25\n2 Q0 a 2 8.0 bm25\n2 Q0 q 3 7.0 bm25\n2 Q0 x 4 7.0 bm25\n"
    "007 Q0 a 1 1.0 bm25\n"
    "9 Q0 a 1 1.0 bm25\n"
)
RUN_B = (
    "1\tQ0\te\t1\t0.9\tdense\r\n1\tQ0\ta\t2\t0.8\tdense\r\n"
    "2\tQ0\tx\t1\t0.7\tdense\r\n007\tQ0\tb\t1\t0.5\tdense\r\n"
)

# The sample runs answer a query the qrels do not judge (9) and miss one they do (3), on purpose
# (for -c); so every evaluation or comparison of them warns on stderr that the run "matches the
# qrels' queries only in part" (issue 16). Results leave out that one known warning about the
# sample qrels (query 3 without results), so tests about other things read stderr as before; `raw_err`
# keeps it. tests/cli/test_cli_data_warnings.py tests the warnings on files of its own.
_SAMPLE_WARNING = re.compile(
    r"rankmeter: warning: run '[^'\n]*' \([^\n]*\) matches the qrels' queries only in part: "
    r"3 of 4 judged queries have results; 1 judged query without results \('3'\)[^\n]*\n"
)


def without_sample_warnings(err: str) -> str:
    """stderr less the known overlap warnings about the sample runs (see above)."""
    return _SAMPLE_WARNING.sub("", err)


def without_sample_warnings_bytes(err: bytes) -> bytes:
    """:func:`without_sample_warnings` on raw stderr."""
    return without_sample_warnings(err.decode("utf-8")).encode("utf-8")


# The sample runs put unjudged documents in their top k, so evaluate warns about them (issue 11,
# item 5: a "warnings" list in JSON, a line on stderr for tsv and trec). Tests about something
# else turn the warning off; tests/cli/test_cli_judged_warning.py tests it.
NO_JUDGED_WARNING = ("--judged-below", "0")


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str
    #: stderr as written, the sample runs' known warnings included (``err`` leaves them out).
    raw_err: str | None = field(default=None, compare=False)

    def assert_one_error_line(self, code: int) -> str:
        """The error contract: exit ``code``, nothing on stdout, one line on stderr."""
        assert self.code == code, (self.code, self.err)
        assert self.out == ""
        assert self.err.startswith("rankmeter: error: "), self.err
        assert self.err.endswith("\n")
        assert self.err.count("\n") == 1, self.err
        assert "Traceback" not in self.err
        return self.err[len("rankmeter: error: ") : -1]


CLI = Callable[..., Result]


def run_process(
    args: Sequence[str | os.PathLike[str]],
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> Result:
    """Run the real command in a subprocess (for stdin, the exit status and the streams)."""
    done = subprocess.run(
        [sys.executable, "-c", "from rankmeter.cli import main; main()", *map(os.fspath, args)],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )
    err = done.stderr.decode("utf-8")
    return Result(done.returncode, done.stdout.decode("utf-8"), without_sample_warnings(err), err)


def evaluate_json(text: str) -> Any:
    """``rankmeter evaluate -f json``'s output without the sentence saying which queries the
    means average over (issue 16: in every run's object; tests/cli/test_cli_query_set.py
    checks it), for tests about the rest."""
    import json

    def strip(item: dict[str, Any]) -> dict[str, Any]:
        assert item.pop("queries").startswith("queries: "), item
        return item

    payload = json.loads(text)
    return [strip(item) for item in payload] if isinstance(payload, list) else strip(payload)
