"""The registry of a config (dlbench.registry): the built-in datasets and
workloads with the config's own models and datasets, the user's data files
found and their headers read (dlbench.data.own_datasets) so that planning
knows each one's input kind and files. A file missing or unusable is a
``ValueError`` (``own_datasets.DataRefused``) that validation turns into
the config's refusal."""

import json
from typing import Any, Dict, Mapping

from dlbench.data import own_datasets
from dlbench.registry import Registry, own_dataset_entry

# The registries of the configs seen, by their own models and datasets (as JSON).
_BY_CONFIG: Dict[str, Registry] = {}


def registry_of(config: Mapping[str, Any]) -> Registry:
    """The registry of ``config``, built once per definition of its own
    models and datasets (planning asks for it from many places)."""
    parts = [
        config.get(part) or {} for part in ("custom_models", "synthetic_datasets", "own_datasets")
    ]
    key = json.dumps(parts, sort_keys=True)
    if key not in _BY_CONFIG:
        custom, synthetic, own = parts
        found = {
            name: own_dataset_entry(entry, own_datasets.summary(own_datasets.probe(name, entry)))
            for name, entry in sorted(own.items())
        }
        _BY_CONFIG[key] = Registry(custom, synthetic, own_datasets=found)
    return _BY_CONFIG[key]
