"""The workloads, one folder each: ``workloads/<model>/``.

A folder's ``__init__.py`` holds what does not depend on a framework: the
definition (its docstring), ``INPUTS`` (the input kinds it takes),
``PARAMETERS`` (its parameter count, or ``parameters(meta)`` where the data
decides), ``OUTPUTS`` where it ends in features rather than classes,
``PUBLISHED_AS`` (its names in the published comparisons), ``CANNOT_RUN``
where a backend's framework computes it wrongly or not at all ({backend:
what was measured}) and ``flop_layers(spec)`` (the layers whose matrix
products dlbench.models.flops counts).
Beside it, one module per framework family that implements it,
``in_<family>.py``, with ``build``: ``in_keras.py`` serves every Keras
backend, ``in_torch.py`` native PyTorch, and so on. The shared layer helpers
and the optimizer mapping of each family are in ``dlbench.models.layers``.

The workloads are found from the files: a folder is a workload, a module is
an implementation; a backend whose family has no module for a workload gets
an n/a cell that says so. A user's own Keras model (the config's
``custom_models``) is a ``CustomWorkload``: a file and a builder function,
implemented in the Keras family only, which a registry (dlbench.registry)
holds beside the folders. Importable on Python 3.6; imports no framework.
"""

import ast
import functools
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
    model's and its FLOPs are counted (dlbench.run.flops_count), not written."""

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

    def source_problem(self):
        """What is wrong with the model's file, read without running it: it
        must exist, parse, and define the builder at its top level so that
        ``builder(keras, spec)`` can be called. None when it does."""
        key = "custom_models.{}".format(self.name)
        if not os.path.isfile(self.file):
            return self._no_file()
        with open(self.file, "rb") as handle:
            source = handle.read()
        try:
            tree = ast.parse(source, filename=self.file)
        except (SyntaxError, ValueError) as error:  # ValueError: a null byte, before 3.11.?
            return "{}.file: {}, line {}: {}; fix the file".format(
                key, self.file, getattr(error, "lineno", "?"), getattr(error, "msg", error)
            )
        functions = [node for node in tree.body if isinstance(node, FUNCTIONS)]
        found = [node for node in functions if node.name == self.builder]
        if not found:
            assigned = [
                target.id
                for node in tree.body
                if isinstance(node, ast.Assign)
                for target in node.targets
                if isinstance(target, ast.Name)
            ]
            if self.builder in assigned:
                return None  # bound at run time (a factory's result): checked when it runs
            return (
                "{}.builder: {} defines no function {!r} at its top level ({}); name the "
                "function that returns the model"
            ).format(
                key,
                self.file,
                self.builder,
                "its functions: " + ", ".join(node.name for node in functions)
                if functions
                else "it defines no function",
            )
        function = found[-1]
        if not _takes_two_positional(function.args):
            return (
                "{}.builder: {}, line {}: {}({}) cannot be called as {}(keras, spec); "
                "define it with those two arguments"
            ).format(
                key,
                self.file,
                function.lineno,
                self.builder,
                ", ".join(_parameters(function.args)),
                self.builder,
            )
        return None

    def _no_file(self):
        return (
            "custom_models.{}.file: no file {} (paths are relative to the workflow's working "
            "directory)".format(self.name, os.path.abspath(self.file))
        )

    def load(self):
        if not os.path.isfile(self.file):
            raise FileNotFoundError(self._no_file())
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


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _parameters(arguments):
    names = [a.arg for a in getattr(arguments, "posonlyargs", []) + arguments.args]
    if arguments.vararg:
        names.append("*" + arguments.vararg.arg)
    names += [a.arg for a in arguments.kwonlyargs]
    if arguments.kwarg:
        names.append("**" + arguments.kwarg.arg)
    return names


def _takes_two_positional(arguments):
    """Whether a function with these arguments accepts exactly two
    positional ones and nothing else required."""
    positional = getattr(arguments, "posonlyargs", []) + arguments.args
    required = len(positional) - len(arguments.defaults)
    keyword_only_required = [
        a for a, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None
    ]
    fits = required <= 2 and (len(positional) >= 2 or arguments.vararg is not None)
    return fits and not keyword_only_required


def built_in():
    """The workloads of the library: one folder each, sorted."""
    return sorted(name for _, name, is_package in pkgutil.iter_modules([FOLDER]) if is_package)


def facts(model):
    """The framework-free module of a built-in workload."""
    if model not in built_in():
        raise KeyError("no workload {!r} (dlbench/models/workloads/{}/)".format(model, model))
    return importlib.import_module("{}.{}".format(__name__, model))


@functools.lru_cache(maxsize=None)
def families(model):
    """The families with an implementation of ``model``, sorted; read from
    the workload's folder once per process: planning asks for every cell."""
    folder = os.path.join(FOLDER, model)
    return tuple(
        sorted(
            name[len(PREFIX) :]
            for _, name, is_package in pkgutil.iter_modules([folder])
            if name.startswith(PREFIX) and not is_package
        )
    )


def missing(model, family):
    """Why ``family`` cannot run the built-in ``model``, or None."""
    if family in families(model):
        return None
    return "{} has no {} yet: dlbench/models/workloads/{}/{}{}.py".format(
        family, model, model, PREFIX, family
    )


def module(model, family):
    """The module that implements the built-in ``model`` in ``family``."""
    reason = missing(model, family)
    if reason:
        raise NotImplementedError("{}: {}".format(model, reason))
    return importlib.import_module("{}.{}.{}{}".format(__name__, model, PREFIX, family))


def source(model, family):
    """The file of a built-in implementation (for lines of code and code digests)."""
    return os.path.join(FOLDER, model, "{}{}.py".format(PREFIX, family))
