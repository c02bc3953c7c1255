"""Each framework's own code under Keras (dlbench.run.backends.keras_on): one
module per framework, named after it and picked by that name, each providing
what keras_on's docstring lists (a misspelt function there would go uncalled
without a word)."""

import inspect
import pkgutil
import re

from dlbench import catalog
from dlbench.run.backends import keras2_adapter, keras_adapter, keras_on

ADAPTERS = (keras_adapter, keras2_adapter)


def test_every_framework_module_is_picked_by_its_name_in_one_table():
    modules = {info.name for info in pkgutil.iter_modules(keras_on.__path__)}
    picked = []
    for adapter in ADAPTERS:
        for framework, module in adapter.KERAS_ON.items():
            assert module.__name__ == "{}.{}".format(keras_on.__name__, framework)
            assert adapter.Adapter(framework, {}).on is module
            picked.append(framework)
    assert sorted(picked) == sorted(modules)


def test_every_keras_backend_finds_its_frameworks_module():
    adapters = {"keras": keras_adapter, "keras2": keras2_adapter}
    for backend, entry in catalog.BACKENDS.items():
        if entry["family"] == "keras":
            assert entry["framework"] in adapters[entry.adapter].KERAS_ON, backend


def test_each_module_provides_what_keras_on_lists_and_nothing_it_does_not():
    doc = inspect.getdoc(keras_on)
    listed = set(re.findall(r"(\w+)\(", doc)) | set(re.findall(r"\b([A-Z][A-Z0-9_]+) =", doc))
    assert {"setup", "versions", "read_manifest", "distribute", "synchronize"} <= listed
    for adapter in ADAPTERS:
        for framework, module in adapter.KERAS_ON.items():
            for required in ("setup", "versions", "read_manifest"):
                assert callable(getattr(module, required, None)), (framework, required)
            source = inspect.getsource(module)
            own = {
                name
                for name, value in vars(module).items()
                if not name.startswith("_")
                and (
                    (inspect.isfunction(value) and value.__module__ == module.__name__)
                    or name.isupper()
                )
            }
            # what is not listed is the module's own helper: used in it
            unused = {
                name for name in own - listed if len(re.findall(r"\b{}\b".format(name), source)) < 2
            }
            assert unused == set(), (framework, unused)
