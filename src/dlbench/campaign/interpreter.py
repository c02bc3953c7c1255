"""The GPU campaign's interpreter on a machine without network: a venv of
the machine's ``python3`` holding the kit's wheels before the machine's own
packages (its CUDA frameworks), and the check that the kit's requirements
fit what the machine holds.

Preparing it runs in the machine's interpreter with the standard library
alone; ``unmet_requirements`` runs inside the prepared one."""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from dlbench.campaign.progress import say

ENV_DIR = ".gpu-env"

SITE_HOOK = "import site; site.addsitedir({!r})\n"


def image_site_dirs(python):
    """The site-packages folders of the machine's interpreter ``python`` that exist."""
    out = subprocess.check_output(
        [python, "-c", "import json, site; print(json.dumps(site.getsitepackages()))"]
    )
    return [path for path in json.loads(out.decode()) if os.path.isdir(path)]


def prepare_interpreter(kit, python, env_dir):
    """The venv at ``env_dir``: the kit's wheels, then the machine's own
    packages (their .pth files processed, as in their own interpreter).
    Made again only when the kit or the interpreter changed."""
    kit, env_dir = Path(kit), Path(env_dir)
    if not (kit / "kit.json").exists():
        raise SystemExit(
            "no GPU kit in {}: run `make gpu-kit` where pip reaches PyPI, and copy {} to "
            "the GPU machine beside the project".format(kit, kit)
        )
    wheels = sorted(str(path) for path in kit.glob("*.whl"))
    identity = {"python": python, "wheels": [os.path.basename(w) for w in wheels]}
    ready = env_dir / "ready.json"
    env_python = env_dir / "bin" / "python"
    if ready.exists() and json.loads(ready.read_text()) == identity:
        say("interpreter ready: {}".format(env_python))
        return str(env_python)
    started = time.time()
    shutil.rmtree(str(env_dir), ignore_errors=True)
    subprocess.check_call([python, "-m", "venv", "--without-pip", str(env_dir)])
    site_dir = subprocess.check_output(
        [str(env_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    )
    site_dir = Path(site_dir.decode().strip())
    hooks = "".join(SITE_HOOK.format(path) for path in image_site_dirs(python))
    (site_dir / "zz-machine-packages.pth").write_text(hooks)
    # bytecode is compiled as the workflow imports it: most of the kit's
    # files (pulp's solvers, Snakemake's executors) are never imported
    install = [python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile"]
    subprocess.check_call(install + ["--target", str(site_dir)] + wheels)
    ready.write_text(json.dumps(identity))
    say(
        "interpreter {} prepared in {:.0f} s: {} wheels of the kit, then {}'s packages".format(
            env_python, time.time() - started, len(wheels), python
        )
    )
    return str(env_python)


def inside_environment(src, environ):
    """The environment of the campaign inside its interpreter: ``src`` on
    the path, and bytecode written. The kit holds none (prepare_interpreter):
    what the campaign imports is compiled once and kept, unless the caller's
    environment forbids writing it; then every job compiled Snakemake, pandas
    and matplotlib again (the rehearsal on a machine that sets
    PYTHONDONTWRITEBYTECODE: tables and plots took 63 s for 8 runs)."""
    inside = dict(
        environ, PYTHONPATH=os.pathsep.join(filter(None, [src, environ.get("PYTHONPATH")]))
    )
    inside.pop("PYTHONDONTWRITEBYTECODE", None)
    return inside


def unmet_requirements(names):
    """What the kit's distributions require and this interpreter lacks or
    holds at a version they exclude."""
    from importlib import metadata

    from packaging.requirements import Requirement

    problems = []
    for name in names:
        for line in metadata.distribution(name).requires or []:
            requirement = Requirement(line)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue
            try:
                held = metadata.version(requirement.name)
            except metadata.PackageNotFoundError:
                problems.append("{} needs {}: absent".format(name, requirement))
                continue
            if not requirement.specifier.contains(held, prereleases=True):
                problems.append("{} needs {}: this machine has {}".format(name, requirement, held))
    return problems
