"""What an existing interpreter holds for a backend, as JSON on stdout.

Run by the workflow with the interpreter a config names for a backend
(``existing_environments``), before any of that backend's runs: it sets the
backend up as a run does (its adapter imports the framework, and Keras where
the backend needs it) and reports the versions the run record would carry,
with the installed version of every distribution the env file pins.
Importable on Python 3.6; imports no framework except through the adapter.
"""

import argparse
import json
import platform
import sys
import traceback

from dlbench.run import backends, launch

MARK = "dlbench-envcheck: "
# CUDA and cuDNN as pip wheels (JAX's plugins and PyTorch's CUDA builds bring
# them; JAX reports no CUDA version of its own).
CUDA_WHEELS = [
    "nvidia-{}-cu{}".format(library, cuda)
    for library in ("cuda-runtime", "cudnn")
    for cuda in (11, 12, 13)
] + ["jax-cuda12-plugin", "jax-cuda13-plugin"]


def installed_version(distribution):
    """The installed version of a distribution, or None."""
    try:
        from importlib import metadata  # Python 3.8 and later

        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            return None
    except ImportError:
        import pkg_resources

        try:
            found = pkg_resources.get_distribution(distribution)
        except pkg_resources.DistributionNotFound:
            return None
        # the metadata's version: a wheel's folder name may shorten it (cntk-2.7 for 2.7.post2)
        for line in found.get_metadata_lines(found.PKG_INFO):
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
        return found.version


def inspect(backend, distributions):
    found = {
        "python_version": "{}.{}.{}".format(*sys.version_info[:3]),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "installed": {name: installed_version(name) for name in distributions},
    }
    found["cuda_wheels"] = {
        name: version
        for name, version in ((name, installed_version(name)) for name in CUDA_WHEELS)
        if version
    }
    try:
        adapter = backends.adapter_for(backend, {})
        adapter.setup(threads=1, seed=0, devices=0, parallel=launch.one_process_on_the_cpu())
        found["versions"] = adapter.versions()
        adapter.close()
    except Exception as error:  # whatever the framework raises: the reason to report
        found["error"] = "{}: {}".format(type(error).__name__, error)
        found["traceback"] = traceback.format_exc(limit=4)[-2000:]
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", required=True)
    parser.add_argument("--distributions", nargs="*", default=[])
    args = parser.parse_args(argv)
    # a framework may print while it loads: the report is the marked line
    print(MARK + json.dumps(inspect(args.backend, args.distributions)))


if __name__ == "__main__":
    main()
