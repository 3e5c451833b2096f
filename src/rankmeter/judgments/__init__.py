"""Where labels come from: pools to judge, agreement between raters, model labels and their
audit against human ones (issue 11).

Heavy dependencies (statsmodels, krippendorff: the ``judge`` extra) are imported when a
function needs them, never on ``import rankmeter.judgments``.
"""

from __future__ import annotations

# Imported, not looked up lazily: the function has its module's name, and importing a submodule
# binds the package attribute to the module; after this line the name stays the function
# (agreement.py imports only NumPy and rankmeter.data at its top, statsmodels and krippendorff
# when it runs; pool.py imports NumPy and rankmeter.io at its top, evaluate when it runs;
# audit.py, labelers.py and model_labels.py import only the standard library and rankmeter's
# lowest layers at their top; chat_labeler.py imports httpx and sqlite3 when it asks or caches;
# embedding_labeler.py NumPy at its top, the model when it runs).
from rankmeter.judgments.agreement import agreement, rater_files
from rankmeter.judgments.audit import LabelAudit, audit_labels
from rankmeter.judgments.chat_labeler import ChatLabeler
from rankmeter.judgments.embedding_labeler import EmbeddingLabeler, calibrate, fit_thresholds
from rankmeter.judgments.labelers import Labeler, label_pool, load_labeler
from rankmeter.judgments.model_labels import ModelLabels, label_with_model
from rankmeter.judgments.pool import pool

__all__ = [
    "ChatLabeler",
    "EmbeddingLabeler",
    "LabelAudit",
    "Labeler",
    "ModelLabels",
    "agreement",
    "audit_labels",
    "calibrate",
    "fit_thresholds",
    "label_pool",
    "label_with_model",
    "load_labeler",
    "pool",
    "rater_files",
]
