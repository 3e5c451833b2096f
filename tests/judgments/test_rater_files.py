"""rater_files: several qrels files, one per rater, named as `rankmeter agree` names them
(after the files, or by --raters in order), for agreement() from Python."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankmeter.errors import PolicyError
from rankmeter.judgments.agreement import rater_files


def test_raters_are_named_after_their_files_or_as_given() -> None:
    assert rater_files(["judged/alice.qrels.gz", Path("bob")]) == {
        "alice": "judged/alice.qrels.gz",
        "bob": "bob",
    }
    assert rater_files([".hidden", "x.txt"]) == {".hidden": ".hidden", "x": "x.txt"}
    assert rater_files(["a.q", "b.q"], ["ann", "bo"]) == {"ann": "a.q", "bo": "b.q"}
    assert rater_files(["a.q", "b.q"], " ann , bo ") == {"ann": "a.q", "bo": "b.q"}


@pytest.mark.parametrize(
    ("paths", "raters", "message"),
    [
        (["a.q", "b.q"], "ann", "--raters gives 1 names for 2 qrels files"),
        (["a.q", "b.q"], "ann,", "--raters 'ann,' has an empty name"),
        (["x/a.q", "y/a.q"], None, "two qrels files are rater 'a'"),
    ],
)
def test_names_that_cannot_tell_the_raters_apart(
    paths: list[str], raters: str | None, message: str
) -> None:
    with pytest.raises(PolicyError, match=message):
        rater_files(paths, raters)
