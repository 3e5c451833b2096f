"""Where labels come from: pools to judge, agreement between raters, model labels and their
audit against human ones (issue 11).

Heavy dependencies (statsmodels, krippendorff: the ``judge`` extra) are imported when a
function needs them, never on ``import rankmeter.judgments``.
"""

from __future__ import annotations
