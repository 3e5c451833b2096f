"""The data model: Qrels and Run, immutable and columnar."""

from rankmeter.data.qrels import Qrels
from rankmeter.data.run import TIE_POLICIES, Run

__all__ = ["TIE_POLICIES", "Qrels", "Run"]
