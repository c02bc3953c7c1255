"""What the benchmark knows about: the built-in datasets and the backends.

Read-only data and what follows from it, importable on every pinned Python
(3.6 and later), so that the workflow, the harness inside a backend
environment and the tests share one list. The workloads are their folders
(dlbench.models.workloads); a config's own models and datasets join the
built-in ones in a registry (dlbench.registry), never here.

One module per part, read as ``catalog.X`` whichever holds it: ``datasets``
(the built-in datasets and their input kinds), ``precisions`` (the
precisions and compilation modes), ``backend_definitions`` (what each
backend is and does) and ``backends`` (the backends with their n/a reasons).

Imports: host (the CPU's instruction sets, for n/a reasons).
"""

from dlbench.catalog.backend_definitions import (
    BACKEND_DEFINITIONS,
    CNTK_COMPILED,
    JAX_EAGER,
    KERAS2_PRECISION,
    KERAS3_PRECISION,
    ONE_DEVICE_KERAS2,
    SINGLE_DEVICE,
    TASK_WORDS,
    TASKS,
    XLA_OR_NOT,
)
from dlbench.catalog.backends import (
    BACKENDS,
    Backend,
    backend_of_environment,
    keras_native_pairs,
)
from dlbench.catalog.datasets import (
    DATASETS,
    GENERATED_SUFFIX,
    INPUT_SEPARATOR,
    INPUT_SHAPES,
    KERAS_DATASETS,
    NO_DATA_REASON,
    OWN,
    OWN_INPUT,
    REFUSED_DATA_REASON,
    SYNTHETIC,
    UNAVAILABLE_DATA,
    URL_SCHEMES,
    input_shape,
    source_of,
)
from dlbench.catalog.precisions import (
    COMPILE_AUTO,
    COMPILE_MODES,
    FLOAT32,
    NO_TF32,
    PRECISIONS,
    TF32,
    TF32_MODES,
    mixed,
)

__all__ = [
    "BACKENDS",
    "BACKEND_DEFINITIONS",
    "CNTK_COMPILED",
    "COMPILE_AUTO",
    "COMPILE_MODES",
    "DATASETS",
    "FLOAT32",
    "GENERATED_SUFFIX",
    "INPUT_SEPARATOR",
    "INPUT_SHAPES",
    "JAX_EAGER",
    "KERAS2_PRECISION",
    "KERAS3_PRECISION",
    "KERAS_DATASETS",
    "NO_DATA_REASON",
    "NO_TF32",
    "ONE_DEVICE_KERAS2",
    "OWN",
    "OWN_INPUT",
    "PRECISIONS",
    "REFUSED_DATA_REASON",
    "SINGLE_DEVICE",
    "SYNTHETIC",
    "TASKS",
    "TASK_WORDS",
    "TF32",
    "TF32_MODES",
    "UNAVAILABLE_DATA",
    "URL_SCHEMES",
    "XLA_OR_NOT",
    "Backend",
    "backend_of_environment",
    "input_shape",
    "keras_native_pairs",
    "mixed",
    "source_of",
]
