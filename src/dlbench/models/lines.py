"""Lines of code per implementation of a workload, counted from the source.

An implementation is what a backend runs for a workload: the model's
``build`` in ``dlbench/models/workloads/<model>/in_<family>.py`` (with the family's
shared layers it reaches in ``dlbench/models/layers``) and the adapter's ``build``
and ``train_epoch`` (training) or ``predict`` (inference) — with every
function, method and class of the library they reach by name, followed
statically (``self.method``, module functions, ``module.function`` of an
imported dlbench module, base classes). Blank lines, comments and
docstrings are not counted; a definition reached twice counts once.
Read with ``ast``, never imported: no framework is needed.
"""

import ast
import io
import tokenize
from pathlib import Path

from dlbench import catalog

PACKAGE = Path(__file__).resolve().parents[1]  # src/dlbench
STEPS = {"train": ("build", "train_epoch"), "infer": ("build", "predict")}
NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}


def source_files(backend, model, registry):
    """The workload's module (``registry``'s: a dlbench.registry.Registry) and
    the adapter module of a backend."""
    family = catalog.BACKENDS[backend]["family"]
    adapter = (
        PACKAGE / "run" / "backends" / "{}_adapter.py".format(catalog.BACKENDS[backend].adapter)
    )
    return Path(registry.source(model, family)), adapter


class Module(object):
    """One parsed module: its top-level definitions, its methods by class,
    the dlbench modules it imports under which names, and its code lines."""

    def __init__(self, path):
        self.path = Path(path)
        text = self.path.read_text()
        tree = ast.parse(text)
        self.definitions = {}
        self.classes = {}
        self.imports = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.definitions[node.name] = node
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = {
                    item.name: item for item in node.body if isinstance(item, ast.FunctionDef)
                }
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dlbench"):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = "{}.{}".format(
                        node.module, alias.name
                    )
        self.code_lines = _code_lines(text, tree)


def _docstring_lines(tree):
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def _code_lines(text, tree):
    """The line numbers that hold code: a token that is not a comment, and
    not part of a docstring."""
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in NOT_CODE:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines - _docstring_lines(tree)


class Counter(object):
    """Follows definitions from roots across the library's modules."""

    def __init__(self):
        self.modules = {}
        self.seen = set()

    def module(self, path):
        path = Path(path).resolve()
        if path not in self.modules:
            self.modules[path] = Module(path)
        return self.modules[path]

    def module_of(self, dotted):
        """The file of a dlbench module, or None (frameworks, the stdlib)."""
        parts = dotted.split(".")
        if parts[0] != "dlbench":
            return None
        path = PACKAGE.joinpath(*parts[1:]).with_suffix(".py")
        return path if path.exists() else None

    def count(self, roots):
        """Code lines of the definitions reachable from ``roots``: (module
        path, name) or (module path, class, method)."""
        lines = set()
        pending = list(roots)
        while pending:
            key = pending.pop()
            if key in self.seen:
                continue
            node, module, cls = self._resolve(key)
            if node is None:
                continue
            self.seen.add(key)
            span = range(node.lineno, node.end_lineno + 1)
            lines.update((module.path, line) for line in span if line in module.code_lines)
            pending.extend(self._references(node, module, cls))
        return len(lines)

    def _resolve(self, key):
        module = self.module(key[0])
        if len(key) == 2:
            return module.definitions.get(key[1]), module, None
        cls_name, method = key[1], key[2]
        for owner_module, owner in self._class_chain(module, cls_name):
            node = owner_module.classes[owner].get(method)
            if node is not None:
                return node, owner_module, (owner_module.path, owner)
        return None, module, None

    def _class_chain(self, module, cls_name):
        """The class and its bases defined in the library, nearest first."""
        chain = []
        while module is not None and cls_name in module.classes:
            chain.append((module, cls_name))
            node = module.definitions[cls_name]
            module, cls_name = self._base(module, node)
        return chain

    def _base(self, module, node):
        for base in node.bases:
            if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
                target = self.module_of(module.imports.get(base.value.id, ""))
                if target:
                    return self.module(target), base.attr
            if isinstance(base, ast.Name) and base.id in module.classes:
                return module, base.id
        return None, None

    def _references(self, node, module, cls):
        """Definitions a function or class refers to by name."""
        found = []
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and child.id in module.definitions:
                found.append((module.path, child.id))
            elif isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name):
                owner = child.value.id
                if owner == "self" and cls is not None:
                    found.append((cls[0], cls[1], child.attr))
                elif owner in module.imports:
                    target = self.module_of(module.imports[owner])
                    if target is not None:
                        found.append((target, child.attr))
        return found


def count(backend, model, task, registry):
    """Lines of the model's definition, of the training or inference step,
    and of both (a definition the two share is counted once, in the model)."""
    implementation, adapter = source_files(backend, model, registry)
    counter = Counter()
    model_lines = counter.count([(implementation, registry.entry_point(model))])
    step_lines = counter.count([(adapter, "Adapter", name) for name in STEPS[task]])
    return {"model_lines": model_lines, "step_lines": step_lines, "lines": model_lines + step_lines}


def table(implementations, registry):
    """One row per (dataset, model, task, backend) of ``implementations``."""
    import pandas as pd

    rows = []
    for dataset, model, task, backend in implementations:
        rows.append(
            {
                "dataset": dataset,
                "model": model,
                "task": task,
                "backend": backend,
                "implementation": "native" if backend.startswith("native-") else "Keras",
                **count(backend, model, task, registry),
            }
        )
    return pd.DataFrame(
        rows,
        columns=["dataset", "model", "task", "backend", "implementation"]
        + ["model_lines", "step_lines", "lines"],
    )


def wide(table):
    """A row per backend, a column per workload (missing: no implementation)."""
    workload = table["dataset"] + " / " + table["model"]
    shown = table.assign(workload=workload).pivot(
        index="backend", columns="workload", values="lines"
    )
    return shown.astype(object).where(shown.notna(), None).reset_index().rename_axis(columns=None)


CAPTION = (
    "Lines of code per implementation, counted from the source by the workflow: the model's "
    "definition, and the training step (adapter build + train_epoch) or inference step "
    "(build + predict) with everything of the library they reach, blank lines, comments and "
    "docstrings excluded. The steps include the benchmark's own timing and data-parallel "
    "code, which every implementation carries; the Keras step is one adapter shared by the "
    "Keras backends of a generation."
)
