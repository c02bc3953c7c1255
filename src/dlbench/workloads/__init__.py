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
an n/a cell that says so. A user's own Keras model (the config's
``custom_models``) joins it through ``register``: a file and a builder
function, implemented in the Keras family only. Importable on Python 3.6;
imports no framework.
"""

import hashlib
import importlib
import importlib.util
import os
import pkgutil

FOLDER = os.path.dirname(os.path.abspath(__file__))
PREFIX = "in_"
BUILDER = "build"


class CustomWorkload(object):
    """A Keras model of the user's: ``builder(keras, spec)`` in ``file``
    returns the model, as an ``in_keras.py`` module's ``build`` does. Its
    facts are what the config says; its parameter count is the built
    model's and its FLOPs are counted (dlbench.flops_count), not written."""

    FAMILIES = ("keras",)
    PARAMETERS = None

    def __init__(self, name, file, builder=BUILDER, inputs=(), description=None):
        self.name = name
        self.file = file
        self.builder = builder
        self.INPUTS = tuple(inputs)
        self.__doc__ = description or "{}: a Keras model of your own ({})".format(name, file)

    def parameters(self, meta):
        return None

    def digest(self):
        with open(self.file, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()

    def entry(self):
        """What a run needs to register the model again in its own process."""
        return {
            "file": self.file,
            "builder": self.builder,
            "inputs": list(self.INPUTS),
            "sha256": self.digest(),
        }

    def load(self):
        if not os.path.isfile(self.file):
            raise FileNotFoundError(
                "custom_models.{}.file: no file {} (paths are relative to the "
                "workflow's working directory)".format(self.name, os.path.abspath(self.file))
            )
        found = importlib.util.spec_from_file_location("dlbench_custom_" + self.name, self.file)
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
        if not callable(getattr(module, self.builder, None)):
            raise AttributeError(
                "custom_models.{}.builder: {} has no function {!r}".format(
                    self.name, self.file, self.builder
                )
            )
        return module


CUSTOM = {}


def register(name, file, builder=BUILDER, inputs=(), description=None):
    """Add a model of the user's (idempotent for the same definition)."""
    if name in built_in():
        raise ValueError(
            "custom_models.{}: a built-in workload has that name (dlbench/workloads/{}/); "
            "choose another".format(name, name)
        )
    CUSTOM[name] = CustomWorkload(name, file, builder, inputs, description)
    return CUSTOM[name]


def is_custom(model):
    return model in CUSTOM


def built_in():
    """The workloads of the library: one folder each."""
    return [name for _, name, is_package in pkgutil.iter_modules([FOLDER]) if is_package]


def names():
    """Every workload, sorted: the folders and the registered models of the user's."""
    return sorted(set(built_in()) | set(CUSTOM))


def facts(model):
    """The framework-free module of a workload (a user's model: its CustomWorkload)."""
    if model in CUSTOM:
        return CUSTOM[model]
    if model not in names():
        raise KeyError("no workload {!r} (dlbench/workloads/{}/)".format(model, model))
    return importlib.import_module("{}.{}".format(__name__, model))


def families(model):
    """The families with an implementation of ``model``, sorted."""
    if model in CUSTOM:
        return list(CustomWorkload.FAMILIES)
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
    if model in CUSTOM:
        return "{} is a Keras model of your own, from {}: it runs on Keras backends only".format(
            model, CUSTOM[model].file
        )
    return "{} has no {} yet: dlbench/workloads/{}/{}{}.py".format(
        family, model, model, PREFIX, family
    )


def module(model, family):
    """The module that implements ``model`` in ``family``."""
    reason = missing(model, family)
    if reason:
        raise NotImplementedError("{}: {}".format(model, reason))
    if model in CUSTOM:
        return CUSTOM[model].load()
    return importlib.import_module("{}.{}.{}{}".format(__name__, model, PREFIX, family))


def builder(model, family):
    """The ``build`` function of ``model`` in ``family``."""
    return getattr(module(model, family), entry_point(model))


def entry_point(model):
    """The name of the builder function of ``model``'s implementations."""
    return CUSTOM[model].builder if model in CUSTOM else BUILDER


def source(model, family):
    """The file of an implementation (for lines of code and code digests)."""
    if model in CUSTOM:
        return CUSTOM[model].file
    return os.path.join(FOLDER, model, "{}{}.py".format(PREFIX, family))
