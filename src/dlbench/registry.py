"""The datasets, workloads and backends one plan or one run knows: the
catalog's and the workloads' folders, and a config's own models
(``custom_models``) and datasets (``synthetic_datasets``, and
``own_datasets`` as planning found their files).

A registry is built once, from the config at planning
(dlbench.plan.config_registry, which reads the headers of the user's data
files) and from the run's spec in a run (``of_run``), and never changed: it is passed to
what needs it, and nothing adds to module globals at run time. Tests build
the registry they need (a backend of their own: ``backends``). Importable on
Python 3.6.

Imports: catalog, models (the workloads' folders and a user's own model).
"""

from types import MappingProxyType
from typing import Any, Callable, Dict, List, Mapping, Optional

from dlbench import catalog
from dlbench.models import workloads


class Registry(object):
    """What exists: ``datasets`` ({name: entry}), ``models`` ({name:
    {inputs, parameters[, outputs]}}) and ``backends`` ({name: catalog.Backend}),
    read-only, with the questions asked of them."""

    def __init__(
        self,
        custom_models: Optional[Mapping[str, Any]] = None,
        synthetic_datasets: Optional[Mapping[str, Any]] = None,
        backends: Optional[Mapping[str, Any]] = None,
        own_datasets: Optional[Mapping[str, Any]] = None,
    ) -> None:
        """``own_datasets``: {name: the dataset's entry} of the user's own
        datasets (``own_dataset_entry``)."""
        self._custom = MappingProxyType(_custom_workloads(custom_models))
        self.datasets = MappingProxyType(
            _with_own(_with_synthetic(synthetic_datasets), own_datasets)
        )
        self.models = MappingProxyType(
            dict(
                {name: _model_entry(workloads.facts(name)) for name in workloads.built_in()},
                **{name: _model_entry(found) for name, found in self._custom.items()},
            )
        )
        extra = {name: catalog.Backend(name, entry) for name, entry in (backends or {}).items()}
        self.backends = MappingProxyType(dict(catalog.BACKENDS, **extra))

    @classmethod
    def of_run(cls, spec: Mapping[str, Any]) -> "Registry":
        """The registry of one run: its model of the user's, if any (a run's
        dataset is already prepared; its spec carries what it needs)."""
        if not spec.get("custom_model"):
            return BUILT_IN
        return cls({spec["model"]: spec["custom_model"]})

    # The workloads

    def workload(self, model: str) -> Any:
        """The framework-free facts of a workload: its folder's module, or the
        user's model (a models.workloads.CustomWorkload)."""
        if model in self._custom:
            return self._custom[model]
        return workloads.facts(model)

    def is_custom(self, model: str) -> bool:
        return model in self._custom

    def families(self, model: str) -> List[str]:
        """The families with an implementation of ``model``, sorted."""
        if model in self._custom:
            return list(workloads.CustomWorkload.FAMILIES)
        return list(workloads.families(model))

    def implemented(self, model: str, family: str) -> bool:
        return family in self.families(model)

    def missing(self, model: str, family: str) -> Optional[str]:
        """Why ``family`` cannot run ``model``, or None."""
        if model not in self._custom:
            return workloads.missing(model, family)
        if self.implemented(model, family):
            return None
        return "{} is a Keras model of your own, from {}: it runs on Keras backends only".format(
            model, self._custom[model].file
        )

    def builder(self, model: str, family: str) -> Callable[..., Any]:
        """The function that builds ``model`` in ``family``."""
        if model in self._custom:
            reason = self.missing(model, family)
            if reason:
                raise NotImplementedError("{}: {}".format(model, reason))
            return getattr(self._custom[model].load(), self._custom[model].builder)
        return workloads.module(model, family).build

    def entry_point(self, model: str) -> str:
        """The name of the builder function of ``model``'s implementations."""
        return self._custom[model].builder if model in self._custom else workloads.BUILDER

    def source(self, model: str, family: str) -> str:
        """The file of an implementation (for lines of code and code digests)."""
        if model in self._custom:
            return self._custom[model].file
        return workloads.source(model, family)

    def parameter_count(self, model: str, meta: Mapping[str, Any]) -> Optional[int]:
        """The parameter count ``model`` must have on data described by
        ``meta`` (None: the built model's, for a user's model)."""
        facts = self.workload(model)
        if facts.PARAMETERS is None:
            return facts.parameters(meta)
        return facts.PARAMETERS

    def ends_in_features(self, model: str) -> bool:
        """A model that outputs features (no classifier, no softmax)."""
        return "outputs" in self.models[model]

    def models_of(self, backend: str) -> List[str]:
        """The workloads a backend's family implements, sorted."""
        family = self.backends[backend]["family"]
        return [model for model in sorted(self.models) if self.implemented(model, family)]

    def not_applicable(
        self,
        backend: str,
        task: str,
        devices: Optional[int] = None,
        accelerator: str = "gpu",
        model: Optional[str] = None,
    ) -> Optional[str]:
        """Why ``backend`` has no cell for ``task`` (of ``model``) on
        ``devices`` (None: on some device count), or None."""
        entry = self.backends[backend]
        reason = entry.task_not_applicable(task)
        if reason:
            return reason
        if model is not None:
            if not self.implemented(model, entry["family"]):
                return "n/a ({})".format(self.missing(model, entry["family"]))
            cannot = getattr(self.workload(model), "CANNOT_RUN", {}).get(backend)
            if cannot:
                return "n/a ({})".format(cannot)
        if devices is None:
            return None
        return entry.devices_not_applicable(task, devices, accelerator)

    # The datasets

    def fits(self, model: str, dataset: str) -> bool:
        """Whether ``model`` takes ``dataset``'s input kind."""
        return self.datasets[dataset]["input"] in self.models[model]["inputs"]

    def is_own(self, dataset: str) -> bool:
        """A dataset of the user's (own_datasets), from their files."""
        return catalog.OWN in self.datasets[dataset]

    def generated(self, dataset: str) -> bool:
        return "generated" in self.datasets[dataset]

    def downloaded(self, dataset: str) -> bool:
        return bool(self.datasets[dataset]["files"]) and not self.generated(dataset)

    def speed_only(self, dataset: str) -> bool:
        """Random labels: accuracy means nothing there and is not compared."""
        return catalog.SYNTHETIC in self.datasets[dataset]

    def input_shape_of(self, dataset: str) -> Any:
        """The shape of one sample of ``dataset``'s model input (a dict of them
        for several named inputs; None where the data decides a length)."""
        return catalog.input_shape(self.datasets[dataset])

    def generated_stand_in(self, dataset: str) -> str:
        """The generated dataset of the same shape and size as a downloaded
        one, or the dataset itself where it has none (or needs no download)."""
        name = dataset + catalog.GENERATED_SUFFIX
        return name if name in self.datasets else dataset


def _model_entry(facts):
    entry = {"inputs": tuple(facts.INPUTS), "parameters": facts.PARAMETERS}
    if hasattr(facts, "OUTPUTS"):
        entry["outputs"] = facts.OUTPUTS
    return entry


def _custom_workloads(custom_models):
    """The config's ``custom_models`` ({name: {file, builder, inputs,
    description}}), the user's own Keras models. A model that names no inputs
    takes every input kind: its builder gets the dataset's spec (input_shape,
    classes, ...) and must fit it."""
    found = {}
    built_in = set(workloads.built_in())
    for name, entry in sorted((custom_models or {}).items()):
        if name in built_in:
            raise ValueError(
                "custom_models.{}: a built-in workload has that name "
                "(dlbench/models/workloads/{}/); choose another".format(name, name)
            )
        found[name] = workloads.CustomWorkload(
            name,
            entry["file"],
            entry.get("builder", workloads.BUILDER),
            entry.get("inputs") or sorted(catalog.INPUT_SHAPES),
            entry.get("description"),
        )
    return found


def _with_synthetic(synthetic_datasets):
    """The catalog's datasets and the config's ``synthetic_datasets``
    ({name: {input_shape, classes, vocabulary, train, test}}): random inputs
    of the given shape with random labels, for speed-only runs of the user's
    own models (the input kind ``synthetic``, which no built-in workload takes)."""
    found = dict(catalog.DATASETS)
    for name, entry in sorted((synthetic_datasets or {}).items()):
        if name in catalog.DATASETS:
            raise ValueError(
                "synthetic_datasets.{}: a built-in dataset has that name; choose another".format(
                    name
                )
            )
        found[name] = {
            "base_url": None,
            "files": {},
            "input": catalog.SYNTHETIC,
            "like": catalog.SYNTHETIC,
            catalog.SYNTHETIC: dict(entry),
        }
    return found


def own_dataset_entry(definition: Mapping[str, Any], found: Mapping[str, Any]) -> Dict[str, Any]:
    """A dataset of the user's as a registry holds it: its config entry
    (``definition``) and what planning found in its files (``found``:
    input_kind, input_shape, values, files, has_test)."""
    return {
        "base_url": None,
        "files": {},
        "input": found["input_kind"],
        catalog.OWN: dict(found, definition=dict(definition)),
    }


def _with_own(datasets, own_datasets):
    found = dict(datasets)
    for name, entry in sorted((own_datasets or {}).items()):
        if name in found:
            raise ValueError(
                "own_datasets.{}: {} dataset has that name; choose another".format(
                    name,
                    "a built-in" if name in catalog.DATASETS else "one of synthetic_datasets'",
                )
            )
        found[name] = entry
    return found


BUILT_IN = Registry()
