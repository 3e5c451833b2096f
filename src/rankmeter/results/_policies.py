"""How an evaluation was done: :class:`Policies`, checked where made, and the one sentence
that words them."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

__all__ = ["Policies"]


@dataclass(frozen=True)
class Policies:
    """How an evaluation was done; every result carries the policies that produced it.

    Attributes
    ----------
    rel : float
        Minimum grade counted relevant by binary metrics (trec_eval -l; default 1).
    include_missing : bool
        True: judged queries without results are evaluated as empty rankings and score 0
        (trec_eval -c). False (default): only queries in both run and qrels.
    judged_only : bool
        Unjudged documents are removed from rankings before evaluation (trec_eval -J).
    ties : str
        How equal scores are ordered: ``"trec_eval"`` (doc id descending) or ``"input"``.
    """

    rel: float = 1
    include_missing: bool = False
    judged_only: bool = False
    ties: str = "trec_eval"

    def __post_init__(self) -> None:
        # Checked here, once, for every caller (evaluate, explain, compare): a result never
        # carries policies that could not have been applied.
        from rankmeter._validate import boolean, real
        from rankmeter.data.run import check_ties

        rel = real("rel", self.rel, what="the minimum relevant grade")
        # Kept as given (1 stays 1, 1.5 stays 1.5); a NumPy number becomes Python's.
        object.__setattr__(self, "rel", int(rel) if isinstance(self.rel, Integral) else rel)
        boolean("include_missing", self.include_missing)
        boolean("judged_only", self.judged_only)
        check_ties(self.ties)

    def to_dict(self) -> dict[str, Any]:
        rel: float | int = int(self.rel) if float(self.rel).is_integer() else self.rel
        return {
            "rel": rel,
            "include_missing": self.include_missing,
            "judged_only": self.judged_only,
            "ties": self.ties,
        }

    def describe(self, *, queries: str | None = None) -> str:
        """The policies as one sentence, the one way every output words them.

        ``queries`` words which queries count where the caller decides that (a comparison
        counts every judged query some system answered); ``""`` leaves it out. By default it
        follows ``include_missing``.

        >>> Policies().describe()
        'relevant: grade >= 1; ties: trec_eval; queries in both run and qrels'
        >>> Policies(rel=2, judged_only=True).describe(queries="")
        'relevant: grade >= 2; ties: trec_eval; judged documents only'
        """
        if queries is None:
            queries = (
                "all judged queries" if self.include_missing else "queries in both run and qrels"
            )
        parts = [f"relevant: grade >= {self.to_dict()['rel']}", f"ties: {self.ties}"]
        if queries:
            parts.append(queries)
        if self.judged_only:
            parts.append("judged documents only")
        return "; ".join(parts)
