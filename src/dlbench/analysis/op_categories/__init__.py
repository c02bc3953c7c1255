"""One set of op categories for every framework, and each framework's table
from its profiler's op names to them (``<framework>_ops.py`` beside this
file: ``OPS``, the patterns in order, the first that matches an op's name
wins; ``EXAMPLES``, op names the framework's profiler gave, with the
category each must get, which the tests check).

An op that no pattern matches is *other* and is listed by name in the
tables, never dropped. The time of a step that no op explains (Python,
dispatch, the framework's runtime, a device left idle) is *unexplained*.
"""

import importlib
import re
from typing import Dict, List, Pattern, Tuple

MATMUL = "matmul"
CONVOLUTION = "convolution"
RECURRENT = "recurrent"
ELEMENTWISE = "elementwise"
NORMALISATION = "normalisation"
POOLING = "pooling"
REDUCTION = "reduction"
OPTIMIZER = "optimizer"
DATA_MOVEMENT = "data_movement"
OTHER = "other"
UNEXPLAINED = "unexplained"
# In the tables' order, with what each holds.
CATEGORIES = (
    (MATMUL, "matrix products", "dense layers' and attention's matrix products, their gradients"),
    (CONVOLUTION, "convolutions", "convolutions and their gradients"),
    (RECURRENT, "recurrent cells", "fused recurrent layers (a GRU or LSTM kernel)"),
    (ELEMENTWISE, "elementwise and activations", "arithmetic, activations, dropout's masks"),
    (NORMALISATION, "normalisation", "batch and layer normalisation, softmax"),
    (POOLING, "pooling", "max and average pooling and their gradients"),
    (REDUCTION, "reductions and the loss", "sums, means, arg-max, the loss and accuracy"),
    (OPTIMIZER, "the optimizer's update", "the weights' update and the optimizer's state"),
    (DATA_MOVEMENT, "data movement", "copies, casts, layout changes, host-device transfers"),
    (OTHER, "other ops", "ops the framework's table does not know (listed by name)"),
)
CATEGORY_KEYS = tuple(key for key, _, _ in CATEGORIES)
CATEGORY_NAMES = dict((key, name) for key, name, _ in CATEGORIES)
CATEGORY_NAMES[UNEXPLAINED] = "unexplained (Python, dispatch, runtime, idle)"


def table(framework):
    """The framework's module of patterns (``OPS``, ``EXAMPLES``), or None."""
    try:
        return importlib.import_module("{}.{}_ops".format(__name__, framework))
    except ImportError as error:
        if getattr(error, "name", "") != "{}.{}_ops".format(__name__, framework):
            raise
        return None


# By framework: its table's patterns, compiled, with their categories.
_compiled: Dict[str, List[Tuple[Pattern[str], str]]] = {}


def category_of(framework, name, scope=None):
    """The category of one op of ``framework`` named ``name``; an op the
    profiler saw inside the optimizer's update (``scope``) is the optimizer's."""
    if scope == OPTIMIZER:
        return OPTIMIZER
    if framework not in _compiled:
        found = table(framework)
        _compiled[framework] = [
            (re.compile(pattern), category) for pattern, category in (found.OPS if found else ())
        ]
    for pattern, category in _compiled[framework]:
        if pattern.search(name):
            return category
    return OTHER
