"""Lines of code per implementation of a workload: what a user of each
framework writes, counted from the source the timed runs execute.

An implementation is the workload's model, its ``build`` in
``dlbench/models/workloads/<model>/in_<family>.py`` with the family's layer
helpers it reaches in ``dlbench/models/layers``, and the family's program in
``dlbench/models/programs/in_<family>.py``: the functions its ``TRAINING``
or ``INFERENCE`` names (the loss, the optimizer's step, the loop or the
``fit`` call; the inference call) with every function of that module they
call. The adapters run those programs and wrap them with what only the
benchmark needs (timers, probes, data parallelism, records), which is not
counted. Definitions are followed statically (module functions,
``module.function`` of an imported module, ``self.method``, base classes)
within those files only. Blank lines, comments and docstrings are not
counted; a definition reached twice counts once. Read with ``ast``, never
imported: no framework is needed.
"""

import ast
import io
import tokenize
from pathlib import Path

from dlbench import catalog

PACKAGE = Path(__file__).resolve().parents[1]  # src/dlbench
PROGRAMS = PACKAGE / "models" / "programs"
LAYERS = PACKAGE / "models" / "layers"
ROOTS = {"train": "TRAINING", "infer": "INFERENCE"}
NOT_CODE = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}
# The LeNet comparison this project reproduces (source 004, its Figure 1):
# more lines the lower the level, cuDNN's most and Keras' fewest. Each level
# as the comparison names it, and the implementation here that is it.
PUBLISHED_ORDER = {
    "lenet": (("cuDNN", "native-cudnn"), ("TensorFlow", "native-tensorflow"), ("Keras", "Keras"))
}


def program_file(backend):
    """The program module of a backend's family."""
    return PROGRAMS / "in_{}.py".format(catalog.BACKENDS[backend]["family"])


def source_files(backend, model, registry):
    """The workload's module (``registry``'s: a dlbench.registry.Registry)
    and the program module of a backend's family."""
    family = catalog.BACKENDS[backend]["family"]
    return Path(registry.source(model, family)), program_file(backend)


def roots(program, task):
    """The functions of ``program`` (a path) that a task calls: its
    ``TRAINING`` or ``INFERENCE``."""
    tree = ast.parse(Path(program).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == ROOTS[task] for target in node.targets
        ):
            return tuple(ast.literal_eval(node.value))
    raise ValueError("{} names no {}".format(program, ROOTS[task]))


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
    """Follows definitions from roots across the library's modules, into
    the files ``within`` allows (a function of a resolved path; any of the
    library's by default)."""

    def __init__(self, within=None):
        self.modules = {}
        self.seen = set()
        self.within = within or (lambda path: True)
        self.files = set()  # the files whose lines were counted

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
        return path if path.exists() and self.within(path.resolve()) else None

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
            self.files.add(module.path)
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


def _counted(backend, model, task, registry):
    """The count of an implementation: (model lines, program lines) and the
    files each took its lines from. The model's counter follows its module
    and the layer helpers; the program's, its module alone."""
    model_file, program = source_files(backend, model, registry)
    model_file = model_file.resolve()
    in_model = Counter(lambda path: path == model_file or path.parent == LAYERS)
    in_program = Counter(lambda path: False)
    model_lines = in_model.count([(model_file, registry.entry_point(model))])
    program_lines = in_program.count([(program, name) for name in roots(program, task)])
    return (model_lines, program_lines), (in_model.files, in_program.files)


def count(backend, model, task, registry):
    """Lines of the model's definition, of the training or inference
    program, and of both."""
    (model_lines, program_lines), _ = _counted(backend, model, task, registry)
    return {
        "model_lines": model_lines,
        "program_lines": program_lines,
        "lines": model_lines + program_lines,
    }


def counted_files(backend, model, task, registry):
    """The files whose lines the count of an implementation took: (the
    model's, the program's)."""
    return _counted(backend, model, task, registry)[1]


COLUMNS = ["dataset", "model", "task", "backend", "implementation"]
COUNTS = ["model_lines", "program_lines", "lines", "lines_vs_keras"]


def table(implementations, registry):
    """One row per (dataset, model, task, backend) of ``implementations``,
    with its lines against the Keras implementation's of the same workload
    (``lines_vs_keras``; none without one)."""
    import pandas as pd  # not at the top: planning (which imports this module) takes no pandas

    rows = []
    for dataset, model, task, backend in implementations:
        keras = catalog.BACKENDS[backend]["family"] == "keras"
        rows.append(
            {
                "dataset": dataset,
                "model": model,
                "task": task,
                "backend": backend,
                "implementation": "Keras" if keras else "native",
                **count(backend, model, task, registry),
            }
        )
    found = pd.DataFrame(rows, columns=COLUMNS + COUNTS[:-1])
    keras = (
        found[found["implementation"] == "Keras"]
        .groupby(["dataset", "model", "task"])["lines"]
        .first()
        .rename("keras_lines")
    )
    found = found.join(keras, on=["dataset", "model", "task"])
    found["lines_vs_keras"] = (found["lines"] / found.pop("keras_lines")).round(2)
    return found[COLUMNS + COUNTS]


def shown(table):
    """The table as people read it: a row per workload and implementation,
    most lines first; the Keras backends of a workload, which count one
    model and one program, in one row that names them."""
    found = table.copy()
    found["workload"] = found["dataset"] + " / " + found["model"] + " (" + found["task"] + ")"
    keras = found["implementation"] == "Keras"
    names = found[keras].groupby("workload")["backend"].agg(lambda b: ", ".join(sorted(b)))
    found.loc[keras, "backend"] = found.loc[keras, "workload"].map(names)
    found = found.drop_duplicates(["workload", "backend"])
    found = found.sort_values(["workload", "lines"], ascending=[True, False])
    return found[["workload", "backend"] + COUNTS].reset_index(drop=True)


def published_order(table):
    """Each published ordering beside ours: {model: (the published levels
    from most lines to fewest, ours as [(level, lines)] from most to
    fewest)} for the models of ``PUBLISHED_ORDER`` with two levels or more
    in the table."""
    found = {}
    for model, levels in PUBLISHED_ORDER.items():
        rows = table[table["model"] == model]
        counts = {}
        for name, implementation in levels:
            if implementation == "Keras":
                chosen = rows[rows["implementation"] == "Keras"]
            else:
                chosen = rows[rows["backend"] == implementation]
            if not chosen.empty:
                counts[name] = int(chosen["lines"].iloc[0])
        if len(counts) >= 2:
            ours = sorted(counts.items(), key=lambda item: -item[1])
            found[model] = ([name for name, _ in levels], ours)
    return found


def order_sentence(table):
    """The published orderings beside ours, for the table's caption."""
    return " ".join(
        "{}: the published comparison (source 004) has {}, most lines first; here {}.".format(
            model, " > ".join(levels), " > ".join("{} {}".format(n, lines) for n, lines in ours)
        )
        for model, (levels, ours) in published_order(table).items()
    )


CAPTION = (
    "Lines of code per implementation: what a user of each framework writes. The model is "
    "the workload's definition (its build and the family's layer helpers it calls); the "
    "program is the family's training program (the loss, each batch's gradient and update, "
    "the loop, or Keras' compile and fit) or inference call, the same code the timed runs "
    "execute (dlbench/models/programs). Not counted: what only the benchmark needs (timers, "
    "probes, data parallelism, records) and making the optimizer from the config's names (one "
    "call in every framework). Blank lines, comments and docstrings are not counted. "
    "lines_vs_keras: the lines over the Keras implementation's of the same workload, which "
    "every Keras backend shares."
)
