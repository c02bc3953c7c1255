"""The workloads, one folder each: ``workloads/<model>/``.

A folder's ``__init__.py`` holds what does not depend on a framework: the
definition (its docstring), ``INPUTS`` (the input kinds it takes),
``PARAMETERS`` (its parameter count, or ``parameters(meta)`` where the data
decides), ``OUTPUTS`` where it ends in features rather than classes,
``PUBLISHED_AS`` (its names in the published comparisons) and
``flop_layers(spec)`` (the layers whose matrix products dlbench.flops counts).
Beside it, one module per framework family that implements it,
``in_<family>.py``, with ``build``: ``in_keras.py`` serves every Keras
backend, ``in_torch.py`` native PyTorch, and so on. The shared layer helpers
and the optimizer mapping of each family are in ``dlbench.layers``.

The registry is found from the files: a folder is a workload, a module is
an implementation; a backend whose family has no module for a workload gets
an n/a cell that says so. Importable on Python 3.6; imports no framework.
"""

import importlib
import os
import pkgutil

FOLDER = os.path.dirname(os.path.abspath(__file__))
PREFIX = "in_"


def names():
    """Every workload, sorted."""
    return sorted(name for _, name, is_package in pkgutil.iter_modules([FOLDER]) if is_package)


def facts(model):
    """The framework-free module of a workload."""
    if model not in names():
        raise KeyError("no workload {!r} (dlbench/workloads/{}/)".format(model, model))
    return importlib.import_module("{}.{}".format(__name__, model))


def families(model):
    """The families with an implementation of ``model``, sorted."""
    folder = os.path.join(FOLDER, model)
    return sorted(
        name[len(PREFIX) :]
        for _, name, is_package in pkgutil.iter_modules([folder])
        if name.startswith(PREFIX) and not is_package
    )


def implemented(model, family):
    return family in families(model)


def missing(model, family):
    """Why ``family`` cannot run ``model``, or None."""
    if implemented(model, family):
        return None
    return "{} has no {} yet: dlbench/workloads/{}/{}{}.py".format(
        family, model, model, PREFIX, family
    )


def module(model, family):
    """The module that implements ``model`` in ``family``."""
    reason = missing(model, family)
    if reason:
        raise NotImplementedError("{}: {}".format(model, reason))
    return importlib.import_module("{}.{}.{}{}".format(__name__, model, PREFIX, family))


def builder(model, family):
    """The ``build`` function of ``model`` in ``family``."""
    return module(model, family).build


def source(model, family):
    """The file of an implementation (for lines of code and code digests)."""
    return os.path.join(FOLDER, model, "{}{}.py".format(PREFIX, family))
