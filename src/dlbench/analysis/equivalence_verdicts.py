"""The equivalence check's verdicts by the names their callers use
(``equivalence_verdicts.compare``, ``.compare_predictions``, the verdicts'
words, the captions), gathered from the modules that reach them: each
backend's loss curve against the reference (equivalence_steps), its dropout
draws against the other backends' (equivalence_dropout), inference runs'
outputs from the same weights against each other (equivalence_predictions),
what a verdict is set against (equivalence_reference) and the tables'
captions (equivalence_captions). The tests and dlbench.analysis.tables
import it; the workflow's scripts import the modules they use. Those
modules never import this one."""

from dlbench.analysis.equivalence_captions import CAPTION, PREDICTIONS_CAPTION
from dlbench.analysis.equivalence_dropout import (
    DROPOUT_ALPHA,
    DROPOUT_STATISTICS,
    NO_DROPOUT,
    VERDICT_SAME_DROPOUT,
    compare_dropout,
    dropout_rows,
    pair_p_value,
)
from dlbench.analysis.equivalence_predictions import (
    PLACE,
    PREDICTION_COLUMNS,
    PREDICTION_TOLERANCE,
    PREDICTIONS_DEPART,
    VERDICT_SAME_PREDICTIONS,
    compare_predictions,
    output_difference,
    prediction_rows,
)
from dlbench.analysis.equivalence_reference import PINNED, no_reference
from dlbench.analysis.equivalence_steps import (
    CURVE_COLUMNS,
    DEPARTS,
    DEPARTS_IN_DROPOUT,
    TABLE_COLUMNS,
    TOLERANCE,
    VERDICT_SAME,
    check_settings_of,
    compare,
    curves,
    relative_differences,
)

__all__ = [
    "CAPTION",
    "CURVE_COLUMNS",
    "DEPARTS",
    "DEPARTS_IN_DROPOUT",
    "DROPOUT_ALPHA",
    "DROPOUT_STATISTICS",
    "NO_DROPOUT",
    "PINNED",
    "PLACE",
    "PREDICTIONS_CAPTION",
    "PREDICTIONS_DEPART",
    "PREDICTION_COLUMNS",
    "PREDICTION_TOLERANCE",
    "TABLE_COLUMNS",
    "TOLERANCE",
    "VERDICT_SAME",
    "VERDICT_SAME_DROPOUT",
    "VERDICT_SAME_PREDICTIONS",
    "check_settings_of",
    "compare",
    "compare_dropout",
    "compare_predictions",
    "curves",
    "dropout_rows",
    "no_reference",
    "output_difference",
    "pair_p_value",
    "prediction_rows",
    "relative_differences",
]
